import { ajvFor } from './ajv.js';
import { describeThrown } from './describe-thrown.js';
import { ContractErrorCode, type ContractViolation } from './errors.js';
import type { CompleteFunction, DefinedPrompt } from './prompt.js';
import { canonicalJson, toPlainJson, type JsonSchema } from './schema.js';
import { findStrictSchemaProblems, formatSchemaErrors } from './schema-strictness.js';
import { checkComplete, checkModes, checkName, checkText, field, violations, type Fail } from './unit-checks.js';

export { inspectResource, type InspectedResource } from './resource-rules.js';

/** One argument of a prompt, as `prompts/list` shows it. */
export interface PromptArgumentListing {
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
  /** The values a union of string literals allows: completions come from them. */
  readonly values?: readonly string[];
}

/** What the registry keeps of a prompt that passed every rule. */
export interface InspectedPrompt {
  readonly kind: 'prompt';
  readonly name: string;
  readonly title: string | undefined;
  readonly description: string;
  readonly arguments: readonly PromptArgumentListing[];
  /** The arguments' schema as plain JSON: what requests are validated against. */
  readonly argsSchema: JsonSchema;
  readonly modes: readonly string[] | undefined;
  readonly complete: Readonly<Record<string, CompleteFunction>>;
  /** Sorted-key JSON of what clients see: for snapshots. */
  readonly canonicalSchema: string;
  readonly prompt: DefinedPrompt;
}

/** The string values a property allows, when it is a union or enum of string literals. */
function literalValues(schema: JsonSchema): string[] | undefined {
  if (typeof schema.const === 'string') return [schema.const];
  if (Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string'))
    return schema.enum as string[];
  if (Array.isArray(schema.anyOf)) {
    const values = (schema.anyOf as JsonSchema[]).map((branch) => literalValues(branch));
    if (values.every((value) => value !== undefined)) return values.flat() as string[];
  }
  return undefined;
}

function isStringSchema(schema: JsonSchema): boolean {
  if (schema.type === 'string') return true;
  if (schema.type !== undefined) return false;
  return literalValues(schema) !== undefined;
}

function checkArguments(
  args: unknown,
  fail: Fail,
): { schema: JsonSchema; listing: PromptArgumentListing[] } | undefined {
  if (args === undefined) return { schema: { type: 'object', properties: {} }, listing: [] };
  let schema: JsonSchema;
  try {
    schema = toPlainJson(args) as JsonSchema;
  } catch (error) {
    fail(
      ContractErrorCode.PROMPT_ARGUMENTS_INVALID,
      `its args cannot be read as JSON (${describeThrown(error)})`,
      'declare them with Type.Object({ … })',
    );
    return undefined;
  }
  const fix =
    "declare them as Type.Object({ topic: Type.String({ description: '…' }) }): MCP prompt arguments are strings, so parse numbers and flags in render";
  if (
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    schema === null ||
    typeof schema !== 'object' ||
    schema.type !== 'object' ||
    schema.properties === null ||
    typeof schema.properties !== 'object'
  ) {
    fail(ContractErrorCode.PROMPT_ARGUMENTS_INVALID, 'its args is not an object schema with properties', fix);
    return undefined;
  }
  const ajv = ajvFor(schema);
  if (!ajv.validateSchema(schema)) {
    fail(
      ContractErrorCode.PROMPT_ARGUMENTS_INVALID,
      `its args is not a valid JSON Schema: ${formatSchemaErrors(ajv.errors ?? [], 'args')}`,
      fix,
    );
    return undefined;
  }
  const strict = findStrictSchemaProblems(schema, 'args');
  if (strict.length > 0) {
    fail(
      ContractErrorCode.PROMPT_ARGUMENTS_INVALID,
      `its args breaks ajv's strict rules: ${strict.join('; ')}`,
      'remove unknown keywords',
    );
    return undefined;
  }
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const listing: PromptArgumentListing[] = [];
  for (const [name, property] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
    if (!isStringSchema(property)) {
      fail(
        ContractErrorCode.PROMPT_ARGUMENTS_INVALID,
        `its argument '${name}' is ${typeof property.type === 'string' ? `of type ${property.type}` : 'not a string'}, but MCP prompt arguments are strings`,
        `declare it Type.String({ description: '…' }) (or a union of string literals) and convert it in render`,
      );
      continue;
    }
    if (typeof property.description !== 'string' || property.description.trim() === '') {
      fail(
        ContractErrorCode.PROMPT_ARGUMENTS_INVALID,
        `its argument '${name}' has no description; clients show it to the user`,
        `add one: Type.String({ description: 'What ${name} is.' })`,
      );
      continue;
    }
    const values = literalValues(property);
    listing.push({
      name,
      description: property.description,
      required: required.has(name),
      ...(values ? { values } : {}),
    });
  }
  return { schema, listing };
}

/**
 * Checks a prompt against the contract at run time (plain-JavaScript packages included): the name
 * rule, a description, string-only described arguments, a render function, mode keys, completions of
 * declared arguments. Returns every violation found.
 */
export function inspectPrompt(candidate: unknown): { prompt?: InspectedPrompt; violations: ContractViolation[] } {
  const { found, fail, name } = violations('Prompt', candidate);
  if (candidate === null || typeof candidate !== 'object' || typeof field(candidate, 'render') !== 'function') {
    fail(
      ContractErrorCode.NOT_A_PROMPT,
      `it is ${describeThrown(candidate).slice(0, 80)}, not a prompt with a render function`,
      'list what definePrompt({ name, description, args, render }) returns in `prompts`',
    );
    return { violations: found };
  }
  checkName(name ?? field(candidate, 'name'), fail, 'definePrompt');
  const title = checkText(field(candidate, 'title'), 'title', false, fail);
  const description = checkText(field(candidate, 'description'), 'description', true, fail);
  const modes = checkModes(field(candidate, 'modes'), fail);
  const args = checkArguments(field(candidate, 'args'), fail);
  const complete = checkComplete(
    field(candidate, 'complete'),
    args?.listing.map((arg) => arg.name) ?? [],
    'its arguments',
    fail,
  );
  if (found.length > 0 || args === undefined) return { violations: found };
  const listing = args.listing.map(({ name: argName, description: text, required }) => ({
    name: argName,
    description: text,
    required,
  }));
  return {
    violations: found,
    prompt: Object.freeze({
      kind: 'prompt',
      name: name!,
      title,
      description: description!,
      arguments: Object.freeze(args.listing),
      argsSchema: args.schema,
      modes,
      complete,
      canonicalSchema: canonicalJson({ name, title, description, arguments: listing, args: args.schema }),
      prompt: candidate as DefinedPrompt,
    }),
  };
}

import { ajvFor } from './ajv.js';
import { isMediaType } from './content.js';
import { TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN, suggestSnakeCase } from './contract-rules.js';
import { describeThrown } from './describe-thrown.js';
import { ContractErrorCode, type ContractViolation } from './errors.js';
import type { CompleteFunction, DefinedPrompt } from './prompt.js';
import type { DefinedResource, ResourceAnnotations } from './resource.js';
import { canonicalJson, toPlainJson, type JsonSchema } from './schema.js';
import { findStrictSchemaProblems, formatSchemaErrors } from './schema-strictness.js';
import { parseUriTemplate, uriProblem, type UriTemplate } from './uri-template.js';

/** A mode key, as the mode catalog spells them. */
const MODE_KEY = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

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

/** What the registry keeps of a resource that passed every rule. */
export interface InspectedResource {
  readonly kind: 'resource';
  readonly name: string;
  readonly title: string | undefined;
  readonly description: string | undefined;
  readonly mimeType: string;
  /** A fixed URI, or undefined for a template. */
  readonly uri: string | undefined;
  /** The parsed template, or undefined for a fixed URI. */
  readonly template: UriTemplate | undefined;
  readonly modes: readonly string[] | undefined;
  readonly annotations: ResourceAnnotations | undefined;
  readonly subscribable: boolean;
  readonly complete: Readonly<Record<string, CompleteFunction>>;
  readonly canonicalSchema: string;
  readonly resource: DefinedResource;
}

type Fail = (code: ContractErrorCode, rule: string, fix: string) => void;

/** Reads a field of a value a package handed over, which may be a Proxy or carry a throwing getter. */
function field(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch (error) {
    return { threw: describeThrown(error) } as const;
  }
}

function violations(kind: 'Prompt' | 'Resource', candidate: unknown) {
  const found: ContractViolation[] = [];
  const name =
    candidate !== null && typeof candidate === 'object' && typeof field(candidate, 'name') === 'string'
      ? (field(candidate, 'name') as string)
      : undefined;
  const who = name === undefined ? `A ${kind.toLowerCase()}` : `${kind} "${name}"`;
  const fail: Fail = (code, rule, fix) =>
    found.push({
      code,
      tool: name ?? `(unnamed ${kind.toLowerCase()})`,
      message: `${who} breaks the contract: ${rule}. Fix: ${fix}.`,
    });
  return { found, fail, name };
}

function checkName(name: unknown, fail: Fail, define: string): void {
  if (typeof name !== 'string' || name === '')
    fail(
      ContractErrorCode.UNIT_NAME_INVALID,
      'it has no name',
      `give it one: ${define}({ name: 'acme_weekly_report', … })`,
    );
  else if (!TOOL_NAME_PATTERN.test(name))
    fail(
      ContractErrorCode.UNIT_NAME_INVALID,
      `its name "${name}" is not lowercase_snake_case (${TOOL_NAME_PATTERN.source}), the rule tool names follow`,
      `rename it, for example to "${suggestSnakeCase(name)}"`,
    );
  else if (name.length > TOOL_NAME_MAX_LENGTH)
    fail(
      ContractErrorCode.UNIT_NAME_INVALID,
      `its name is ${name.length} characters long; at most ${TOOL_NAME_MAX_LENGTH} are allowed`,
      `shorten it to ${TOOL_NAME_MAX_LENGTH} characters or fewer`,
    );
}

function checkText(value: unknown, key: string, required: boolean, fail: Fail): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || (required && value.trim() === '') || value.length > 4096) {
    fail(
      ContractErrorCode.UNIT_DESCRIPTION_INVALID,
      `its ${key} must be ${required ? 'a non-empty string' : 'a string'} of at most 4096 characters, got ${describeThrown(value).slice(0, 80)}`,
      `write one sentence saying what it is for: ${key}: '…'`,
    );
    return undefined;
  }
  return value;
}

function checkModes(modes: unknown, fail: Fail): readonly string[] | undefined {
  if (modes === undefined) return undefined;
  if (!Array.isArray(modes) || modes.some((key) => typeof key !== 'string' || !MODE_KEY.test(key))) {
    fail(
      ContractErrorCode.UNIT_MODES_INVALID,
      `its modes ${JSON.stringify(modes) ?? String(modes)} is not a list of mode keys`,
      "declare modes: ['general'] with snake_case mode keys, or leave it out to be seen in every mode",
    );
    return undefined;
  }
  return Object.freeze([...(modes as string[])]);
}

function checkComplete(
  complete: unknown,
  names: readonly string[],
  what: string,
  fail: Fail,
): Record<string, CompleteFunction> {
  if (complete === undefined) return {};
  const entries = complete !== null && typeof complete === 'object' ? Object.entries(complete) : undefined;
  const bad = entries?.filter(([key, value]) => !names.includes(key) || typeof value !== 'function');
  if (entries === undefined || bad!.length > 0) {
    fail(
      ContractErrorCode.UNIT_FUNCTION_INVALID,
      entries === undefined
        ? `its complete is ${describeThrown(complete)}, not an object of functions`
        : `its complete names ${bad!.map(([key]) => `"${key}"`).join(', ')}, which ${bad!.length > 1 ? 'are' : 'is'} not ${what} or not a function`,
      `complete only ${what} (${names.join(', ') || 'none'}), each with a function (value, context) => string[]`,
    );
    return {};
  }
  return Object.fromEntries(entries) as Record<string, CompleteFunction>;
}

/** MCP's resource annotations, and nothing else: a listing with anything more would fail the client's check. */
function validAnnotations(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const { audience, priority, ...rest } = value as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    (audience === undefined ||
      (Array.isArray(audience) && audience.every((role) => role === 'user' || role === 'assistant'))) &&
    (priority === undefined || (typeof priority === 'number' && priority >= 0 && priority <= 1))
  );
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

/**
 * Checks a resource against the contract at run time: the name rule, exactly one of an absolute `uri`
 * (no `.`/`..` segments) and a level-1 `uriTemplate`, a media type, a read function, an optional
 * subscribe function, completions of the template's variables only.
 */
export function inspectResource(candidate: unknown): { resource?: InspectedResource; violations: ContractViolation[] } {
  const { found, fail, name } = violations('Resource', candidate);
  if (candidate === null || typeof candidate !== 'object' || typeof field(candidate, 'read') !== 'function') {
    fail(
      ContractErrorCode.NOT_A_RESOURCE,
      `it is ${describeThrown(candidate).slice(0, 80)}, not a resource with a read function`,
      'list what defineResource({ name, uri, mimeType, read }) returns in `resources`',
    );
    return { violations: found };
  }
  checkName(name ?? field(candidate, 'name'), fail, 'defineResource');
  const title = checkText(field(candidate, 'title'), 'title', false, fail);
  const description = checkText(field(candidate, 'description'), 'description', false, fail);
  const modes = checkModes(field(candidate, 'modes'), fail);
  const mimeType = field(candidate, 'mimeType');
  if (!isMediaType(mimeType))
    fail(
      ContractErrorCode.RESOURCE_MIME_TYPE_INVALID,
      `its mimeType ${describeThrown(mimeType).slice(0, 80)} is not a media type`,
      "declare what read returns, e.g. mimeType: 'text/markdown'",
    );
  const uri = field(candidate, 'uri');
  const uriTemplate = field(candidate, 'uriTemplate');
  let template: UriTemplate | undefined;
  if ((uri === undefined) === (uriTemplate === undefined)) {
    fail(
      ContractErrorCode.RESOURCE_URI_INVALID,
      uri === undefined ? 'it has neither uri nor uriTemplate' : 'it has both uri and uriTemplate',
      "give exactly one: uri: 'acme://docs/readme' for one document, or uriTemplate: 'acme://users/{id}' for many",
    );
  } else if (uri !== undefined) {
    const problem = uriProblem(uri);
    if (problem !== undefined)
      fail(
        ContractErrorCode.RESOURCE_URI_INVALID,
        `its uri ${describeThrown(uri).slice(0, 120)} is refused: ${problem}`,
        "use an absolute URI like 'acme://docs/readme'",
      );
  } else {
    const parsed = typeof uriTemplate === 'string' ? parseUriTemplate(uriTemplate) : 'it is not a string';
    if (typeof parsed === 'string')
      fail(
        ContractErrorCode.RESOURCE_URI_INVALID,
        `its uriTemplate ${describeThrown(uriTemplate).slice(0, 120)} is refused: ${parsed}`,
        "use an RFC 6570 level-1 template like 'acme://users/{id}'",
      );
    else template = parsed;
  }
  const subscribe = field(candidate, 'subscribe');
  if (subscribe !== undefined && typeof subscribe !== 'function')
    fail(
      ContractErrorCode.UNIT_FUNCTION_INVALID,
      `its subscribe is ${describeThrown(subscribe).slice(0, 80)}, not a function`,
      'declare subscribe(uri, changed) => stop, or leave it out',
    );
  const complete = checkComplete(
    field(candidate, 'complete'),
    template?.variables ?? [],
    'variables of its uriTemplate',
    fail,
  );
  const annotations = field(candidate, 'annotations') as ResourceAnnotations | undefined;
  if (annotations !== undefined && !validAnnotations(annotations))
    fail(
      ContractErrorCode.RESOURCE_ANNOTATIONS_INVALID,
      `its annotations ${JSON.stringify(annotations)?.slice(0, 120) ?? String(annotations)} are not { audience?: ('user' | 'assistant')[], priority?: a number from 0 to 1 }`,
      "declare annotations: { audience: ['user'], priority: 0.5 }, or leave them out",
    );
  if (found.length > 0) return { violations: found };
  return {
    violations: found,
    resource: Object.freeze({
      kind: 'resource',
      name: name!,
      title,
      description,
      mimeType: mimeType as string,
      uri: uri as string | undefined,
      template,
      modes,
      annotations: annotations === undefined ? undefined : (toPlainJson(annotations) as ResourceAnnotations),
      subscribable: typeof subscribe === 'function',
      complete,
      canonicalSchema: canonicalJson({
        name,
        title,
        description,
        mimeType,
        ...(template === undefined ? { uri } : { uriTemplate }),
        subscribable: typeof subscribe === 'function',
      }),
      resource: candidate as DefinedResource,
    }),
  };
}

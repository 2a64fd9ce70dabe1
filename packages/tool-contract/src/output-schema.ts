import type { ValidateFunction } from 'ajv';
import { ajvFor } from './ajv.js';
import { describeThrown } from './describe-thrown.js';
import { ContractErrorCode } from './errors.js';
import { findStrictSchemaProblems, formatSchemaErrors } from './schema-strictness.js';
import { toPlainJson, type JsonSchema } from './schema.js';

/** Compiled validators of declared output schemas, by the registry's plain-JSON copy of each. */
const validators = new WeakMap<JsonSchema, ValidateFunction>();

/**
 * Why a declared `OutputSchema` cannot be used, or undefined when it can: it must be valid JSON Schema
 * (draft-07 as TypeBox emits it, or 2020-12 when it says so in `$schema`), pass ajv's strict rules, compile, and describe an object at its root,
 * since MCP sends the result as `structuredContent`, which is an object.
 */
export function outputSchemaProblem(schema: JsonSchema): string | undefined {
  const ajv = ajvFor(schema);
  if (!ajv.validateSchema(schema))
    return `OutputSchema is not a valid JSON Schema: ${formatSchemaErrors(ajv.errors ?? [], 'OutputSchema')}`;
  const strict = findStrictSchemaProblems(schema, 'OutputSchema');
  if (strict.length > 0) return `OutputSchema breaks ajv's strict rules: ${strict.join('; ')}`;
  if (schema.type !== 'object')
    return (
      `OutputSchema must describe an object (type: 'object' at its root), because MCP sends the ` +
      `result as structuredContent, an object; got type ` +
      `${(JSON.stringify(schema.type) as string | undefined) ?? 'undefined'}`
    );
  try {
    validators.set(schema, ajv.compile(schema));
  } catch (error) {
    return `OutputSchema does not compile: ${(error as Error).message}`;
  }
  return undefined;
}

/** Checks a result's value against the tool's output schema: undefined when it matches, else what is wrong. */
export function outputMismatch(schema: JsonSchema, value: unknown): string | undefined {
  let validate = validators.get(schema);
  if (validate === undefined) {
    validate = ajvFor(schema).compile(schema);
    validators.set(schema, validate);
  }
  if (validate(value)) return undefined;
  return formatSchemaErrors(validate.errors ?? [], 'result');
}

/** The declared OutputSchema as plain JSON (TypeBox's symbols dropped), when it is usable. */
export function checkOutputSchema(
  declared: unknown,
  fail: (code: ContractErrorCode, rule: string, fix: string) => void,
): JsonSchema | undefined {
  if (declared === undefined) return undefined;
  const fix =
    'declare it with TypeBox as an object, e.g. static readonly OutputSchema = Type.Object({ total: Type.Number() }), or remove it to send text only';
  if (declared === null || typeof declared !== 'object' || Array.isArray(declared)) {
    fail(
      ContractErrorCode.OUTPUT_SCHEMA_INVALID,
      `OutputSchema must be a JSON Schema object, got ${declared === null ? 'null' : Array.isArray(declared) ? 'an array' : typeof declared}`,
      fix,
    );
    return undefined;
  }
  let schema: JsonSchema;
  try {
    schema = toPlainJson(declared as JsonSchema);
  } catch (error) {
    fail(ContractErrorCode.OUTPUT_SCHEMA_INVALID, `OutputSchema cannot be read as JSON: ${describeThrown(error)}`, fix);
    return undefined;
  }
  const problem = outputSchemaProblem(schema);
  if (problem !== undefined) {
    fail(ContractErrorCode.OUTPUT_SCHEMA_INVALID, problem, fix);
    return undefined;
  }
  return schema;
}

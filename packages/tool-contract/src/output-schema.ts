import type { ValidateFunction } from 'ajv';
import { ajvFor } from './ajv.js';
import { findStrictSchemaProblems, formatSchemaErrors } from './contract-rules.js';
import type { JsonSchema } from './schema.js';

/** Compiled validators of declared output schemas, by the registry's plain-JSON copy of each. */
const validators = new WeakMap<JsonSchema, ValidateFunction>();

/**
 * Why a declared `OutputSchema` cannot be used, or undefined when it can: it must be valid JSON Schema
 * (draft-07 as TypeBox emits it, or 2020-12 when it says so in `$schema`), pass ajv's strict rules, compile, and describe an object at its root,
 * since MCP sends the result as `structuredContent`, which is an object.
 */
export function outputSchemaProblem(schema: JsonSchema): string | undefined {
  const ajv = ajvFor(schema);
  if (!ajv.validateSchema(schema)) return `OutputSchema is not a valid JSON Schema: ${formatSchemaErrors(ajv.errors ?? [], 'OutputSchema')}`;
  const strict = findStrictSchemaProblems(schema, 'OutputSchema');
  if (strict.length > 0) return `OutputSchema breaks ajv's strict rules: ${strict.join('; ')}`;
  if (schema.type !== 'object') return `OutputSchema must describe an object (type: 'object' at its root), because MCP sends the result as structuredContent, an object; got type ${JSON.stringify(schema.type) ?? 'undefined'}`;
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

import { validateArguments } from '../arguments.js';
import type { JsonSchema } from '../schema.js';

type Schema = Record<string, unknown>;

/**
 * The simplest arguments `parameters` accepts, for checks that need a call to get past validation:
 * each required property gets its `const`, first `enum` value, `default`, or the smallest value of its
 * type. Undefined when no such value passes the schema (a `pattern`, a `format`…): the caller then
 * needs arguments from the tool's author.
 */
export function sampleArguments(toolName: string, parameters: JsonSchema): Record<string, unknown> | undefined {
  const value = sampleOf(parameters as Schema, 0);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  try {
    return validateArguments(toolName, parameters, structuredClone(value)).ok
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined; // a schema ajv cannot compile: the rules report it
  }
}

function sampleOf(schema: Schema, depth: number): unknown {
  if (depth > 8) return undefined;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('default' in schema) return schema.default;
  const choices = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(choices) && choices.length > 0)
    return sampleOf(choices.find((choice) => choice.type !== 'null') ?? choices[0]!, depth + 1);
  const type = Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? schema.type[0]) : schema.type;
  switch (type) {
    case 'string':
      return 'x'.repeat(Math.max(1, Number(schema.minLength ?? 1)));
    case 'integer':
    case 'number': {
      const minimum =
        typeof schema.minimum === 'number'
          ? schema.minimum
          : typeof schema.exclusiveMinimum === 'number'
            ? schema.exclusiveMinimum + 1
            : 0;
      return type === 'integer' ? Math.ceil(minimum) : minimum;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: Number(schema.minItems ?? 0) }, () =>
        sampleOf((schema.items ?? {}) as Schema, depth + 1),
      );
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      return Object.fromEntries(required.map((key) => [key, sampleOf(properties[key] ?? {}, depth + 1)]));
    }
    default:
      return undefined;
  }
}

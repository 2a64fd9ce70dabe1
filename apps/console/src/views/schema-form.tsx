import type { JsonSchema } from '../api.js';

/** The field kind a property gets in the form. */
export type FieldKind = 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

export interface Field {
  readonly name: string;
  readonly kind: FieldKind;
  readonly required: boolean;
  readonly description: string;
  readonly options: readonly string[];
}

function baseType(schema: JsonSchema): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null');
  if (schema.anyOf) return schema.anyOf.map(baseType).find((t) => t !== undefined && t !== 'null');
  return undefined;
}

/** The form's fields, one per top-level property, from the tool's parameters schema. */
export function fieldsOf(schema: JsonSchema): Field[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const type = baseType(property);
    const options = Array.isArray(property.enum) ? property.enum.map(String) : [];
    const kind: FieldKind =
      options.length > 0
        ? 'enum'
        : type === 'string'
          ? 'text'
          : type === 'number'
            ? 'number'
            : type === 'integer'
              ? 'integer'
              : type === 'boolean'
                ? 'boolean'
                : 'json';
    return { name, kind, required: required.has(name), description: property.description ?? '', options };
  });
}

/**
 * The arguments the form's values stand for. Empty optional fields are left out; a value that cannot
 * be read (a number field holding text) is sent as typed, so the host's own check names the field.
 */
export function argumentsOf(
  fields: readonly Field[],
  values: Record<string, string | boolean>,
): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === 'boolean') {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      if (value !== undefined) args[field.name] = value === true;
      continue;
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (value === undefined || value === '') continue;
    const text = String(value);
    if (field.kind === 'number' || field.kind === 'integer')
      args[field.name] = text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
    else if (field.kind === 'json') {
      try {
        args[field.name] = JSON.parse(text);
      } catch {
        args[field.name] = text;
      }
    } else args[field.name] = text;
  }
  return args;
}

/**
 * Splits the executor's INVALID_ARGUMENTS message ("Invalid arguments for t: 'b' is required; 'a' must
 * be number, got string") into problems by top-level field, and the rest.
 */
export function problemsByField(
  message: string,
  fields: readonly Field[],
): { byField: Record<string, string[]>; other: string[] } {
  const byField: Record<string, string[]> = {};
  const other: string[] = [];
  const detail = message.replace(/^Invalid arguments for [^:]+:\s*/, '').replace(/\.$/, '');
  for (const problem of detail.split('; ')) {
    const match = /^'([^'.[\]]+)/.exec(problem);
    const field = match?.[1];
    if (field !== undefined && fields.some((f) => f.name === field)) (byField[field] ??= []).push(problem);
    else other.push(problem);
  }
  return { byField, other };
}

import { contractAjv } from '../ajv.js';
import type { JsonSchema, ObjectSchemaLike } from '../schema.js';
import { rootPropertyNames } from './schema-walk.js';

/** One garbage input: what a confused, truncated or hostile model could send as a tool's arguments. */
export interface GarbageArguments {
  /** A short description for reports, e.g. `a 1 MB string for 'name'`. */
  readonly label: string;
  /** The arguments JSON text, exactly as a model would send it. */
  readonly json: string;
}

/** About 1 MB: larger than any sane argument, small enough to run in milliseconds. */
export const HUGE_STRING_LENGTH = 1_000_000;
/** Nesting deeper than any real argument and than most recursive code survives. */
export const DEEP_NESTING_LEVELS = 10_000;
/** The key the prototype-pollution inputs try to plant on `Object.prototype`. */
export const POLLUTION_MARKER = 'aptixContractPolluted';

/** Candidate values for "the wrong type": the first one a property's schema refuses is used. */
const WRONG_VALUES: readonly unknown[] = [
  12345,
  'not-the-right-type',
  true,
  ['not', 'an', 'object'],
  { not: 'a string' },
  null,
  1.5,
  -1,
];

/**
 * The garbage inputs the kit sends a tool with these parameters: invalid JSON, JSON that is not an
 * object, `{}`, arguments of the wrong types, 1 MB strings, 10,000 levels of nesting and prototype keys.
 * Which of them must fail is decided per input against the schema, not here.
 *
 * @example for (const { label, json } of garbageArguments(HelloWorldTool.getSchema().parameters)) await executor.execute(name, json);
 */
export function garbageArguments(schema: JsonSchema | ObjectSchemaLike): GarbageArguments[] {
  const parameters = schema as JsonSchema;
  const names = rootPropertyNames(parameters);
  const properties = (parameters.properties ?? {}) as Record<string, JsonSchema>;
  const first = names[0] ?? 'value';
  const key = JSON.stringify(first);
  const huge = 'x'.repeat(HUGE_STRING_LENGTH);
  const pollution = `{"${POLLUTION_MARKER}":true}`;
  const cases: GarbageArguments[] = [
    { label: 'invalid JSON (cut off)', json: '{"unterminated": ' },
    { label: 'text that is not JSON', json: 'please greet Ada' },
    { label: 'JSON null', json: 'null' },
    { label: 'a JSON array', json: '[]' },
    { label: 'a JSON number', json: '42' },
    { label: 'a JSON string', json: '"arguments"' },
    { label: 'a JSON boolean', json: 'true' },
    { label: 'an empty object {}', json: '{}' },
  ];

  const wrong = Object.fromEntries(
    names.flatMap((name) => {
      const value = wrongValueFor(properties[name]!);
      return value.found ? [[name, value.value]] : [];
    }),
  );
  if (Object.keys(wrong).length > 0) {
    cases.push({ label: 'every argument of the wrong type', json: JSON.stringify(wrong) });
    for (const [name, value] of Object.entries(wrong))
      cases.push({
        label: `'${name}' of the wrong type (${describeKind(value)})`,
        json: JSON.stringify({ [name]: value }),
      });
  }

  const stringNames = names.filter((name) => declaresType(properties[name]!, 'string'));
  for (const name of stringNames.length > 0 ? stringNames : [first]) {
    cases.push({ label: `a 1 MB string for '${name}'`, json: JSON.stringify({ [name]: huge }) });
  }
  cases.push(
    { label: 'a 1 MB string as the whole arguments', json: JSON.stringify(huge) },
    { label: 'a 1 MB unterminated string', json: `{${key}: "${huge}` },
    {
      label: `${DEEP_NESTING_LEVELS.toLocaleString('en')} nested arrays`,
      json: '['.repeat(DEEP_NESTING_LEVELS) + ']'.repeat(DEEP_NESTING_LEVELS),
    },
    {
      label: `${DEEP_NESTING_LEVELS.toLocaleString('en')} nested objects in '${first}'`,
      json: `{${key}:${'{"a":'.repeat(DEEP_NESTING_LEVELS)}1${'}'.repeat(DEEP_NESTING_LEVELS)}}`,
    },
    {
      label: `${DEEP_NESTING_LEVELS.toLocaleString('en')} unclosed objects`,
      json: '{"a":'.repeat(DEEP_NESTING_LEVELS),
    },
    { label: 'a __proto__ key', json: `{"__proto__":${pollution}}` },
    { label: 'constructor.prototype keys', json: `{"constructor":{"prototype":${pollution}}}` },
    { label: `a __proto__ key inside '${first}'`, json: `{${key}:{"__proto__":${pollution}}}` },
    { label: `a __proto__ key in an array in '${first}'`, json: `{${key}:[{"__proto__":${pollution}}]}` },
    { label: `a __proto__ key beside '${first}'`, json: `{${key}:"x","__proto__":${pollution}}` },
  );
  return cases;
}

function wrongValueFor(schema: JsonSchema): { found: true; value: unknown } | { found: false } {
  let validate: (value: unknown) => boolean;
  try {
    validate = contractAjv().compile(schema);
  } catch {
    return { found: false };
  }
  for (const value of WRONG_VALUES) if (!validate(value)) return { found: true, value };
  return { found: false };
}

function declaresType(schema: JsonSchema, type: string): boolean {
  return schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));
}

function describeKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

import { MCP_HEADER_KEYWORD } from './mcp-header.js';

/** Keywords that constrain no object's keys, or only as checked below; any other makes a schema count as open. */
const KNOWN = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'enum',
  'const',
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'format',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'contentMediaType',
  'contentEncoding',
  MCP_HEADER_KEYWORD,
]);
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor']);

/**
 * True when no value the schema accepts can hold a `__proto__` or `constructor` key at any depth: every
 * object it admits is closed (`additionalProperties: false`) and declares neither key, every array's
 * items are such, and nothing else (`allOf`, `$ref`, `patternProperties`…) is in play. Conservative:
 * false for anything it does not fully understand.
 *
 * For such a schema, a value that passes validation needs no scan for prototype keys: the validator
 * has refused every key the schema does not declare. (One that fails is still scanned, so the reason
 * given is the same.) Strict-mode tools, whose schemas are closed throughout, are such.
 */
export function closedToPrototypeKeys(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return false;
  const node = schema as Record<string, unknown>;
  for (const key of Object.keys(node)) if (!KNOWN.has(key)) return false;
  // A value equal to an enum member or the const is that value: only scalars are safe to admit.
  if (node.enum !== undefined && !(Array.isArray(node.enum) && node.enum.every(isScalar))) return false;
  if (node.const !== undefined && !isScalar(node.const)) return false;
  // Every value this node accepts matches one of the branches, so closed branches are enough.
  if (node.anyOf !== undefined)
    return Array.isArray(node.anyOf) && node.anyOf.length > 0 && node.anyOf.every(closedToPrototypeKeys);
  const types =
    typeof node.type === 'string' ? [node.type] : Array.isArray(node.type) ? (node.type as unknown[]) : undefined;
  if (types === undefined) return false; // no type: objects of any shape pass
  for (const type of types) {
    if (type === 'object') {
      if (node.additionalProperties !== false) return false;
      const properties = node.properties ?? {};
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      if (properties === null || typeof properties !== 'object') return false;
      for (const [name, child] of Object.entries(properties))
        if (PROTOTYPE_KEYS.has(name) || !closedToPrototypeKeys(child)) return false;
    } else if (type === 'array') {
      if (!closedToPrototypeKeys(node.items)) return false;
    } else if (typeof type !== 'string' || !SCALAR_TYPES.has(type)) return false;
  }
  return true;
}

function isScalar(value: unknown): boolean {
  return value === null || typeof value !== 'object';
}

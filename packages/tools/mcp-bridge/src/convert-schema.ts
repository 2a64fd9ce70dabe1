import { toStrictMode, type JsonSchema, type ParametersSchema } from '@aptix/tool-contract';

/** What became of a remote tool's input schema. */
export interface ConvertedSchema {
  /** The parameters Aptix offers and validates, or undefined when the schema cannot be converted. */
  readonly parameters: ParametersSchema | undefined;
  /** Whether the tool is offered with OpenAI `strict: true`. */
  readonly strict: boolean;
  /** Why strict mode cannot take the schema (empty when it can): the strict-mode report's problems. */
  readonly strictProblems: readonly string[];
  /** What the conversion changed, for the logs (dropped keywords, generated descriptions…). */
  readonly notes: readonly string[];
  /** Why the schema cannot be converted at all (the tool is then not offered). */
  readonly problems: readonly string[];
}

/** JSON Schema keywords the contract's ajv (draft-07, strict) knows; anything else is dropped and noted. */
const KNOWN_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'enum',
  'const',
  'description',
  'title',
  'default',
  'examples',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'uniqueItems',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'patternProperties',
  'propertyNames',
  'dependencies',
  'contains',
  'minProperties',
  'maxProperties',
  'additionalItems',
  'readOnly',
  'writeOnly',
  '$comment',
  'contentEncoding',
  'contentMediaType',
  '$ref',
  '$defs',
  'definitions',
]);
/** The formats ajv-formats checks; an unknown format would make ajv refuse the schema on the first call. */
const KNOWN_FORMATS = new Set([
  'date',
  'time',
  'date-time',
  'iso-time',
  'iso-date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'url',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'json-pointer-uri-fragment',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
]);
const ANY_JSON = ['string', 'number', 'boolean', 'object', 'array', 'null'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties'] as const;
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf'] as const;
const SUBSCHEMAS = [
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
] as const;
const MAX_DEPTH = 32;

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Converts an MCP tool's `inputSchema` into parameters that pass the Aptix contract, changing no value
 * the server accepts or refuses where it can:
 * - local `$ref`s (`#/$defs/…`, `#/definitions/…`) are inlined; a recursive one cannot be, and the tool is refused;
 * - keywords and formats the contract's validator does not know are dropped (the server still checks them);
 * - a property without a type gets every JSON type (what "no type" means), one without a description a
 *   generated one naming it, so the model reads something for every field (TUL-011 §4);
 * - `required` names without a property are dropped (the server would refuse any value for them anyway).
 * Then the strict-mode view is derived: where OpenAI strict mode cannot take the schema, the tool is
 * offered with `strict: false` and `strictProblems` says why.
 */
export function convertInputSchema(inputSchema: unknown): ConvertedSchema {
  const notes: string[] = [];
  const problems: string[] = [];
  if (!isNode(inputSchema)) return refused(['the input schema is not a JSON object']);
  let root: Node;
  try {
    root = JSON.parse(JSON.stringify(inputSchema)) as Node;
  } catch {
    return refused(['the input schema is not plain JSON']);
  }
  const definitions: Node = {
    ...(isNode(root.$defs) ? { ...root.$defs } : {}),
    ...(isNode(root.definitions) ? root.definitions : {}),
  };
  const lookup = (ref: string): Node | undefined => {
    const match = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(ref);
    const found = match
      ? definitions[decodeURIComponent(match[1]!.replace(/~1/g, '/').replace(/~0/g, '~'))]
      : undefined;
    return isNode(found) ? found : undefined;
  };

  const visit = (node: Node, path: string, refs: readonly string[], depth: number): Node => {
    if (depth > MAX_DEPTH) {
      problems.push(`${path}: nested deeper than ${MAX_DEPTH} levels`);
      return node;
    }
    if (typeof node.$ref === 'string') {
      const ref = node.$ref;
      if (refs.includes(ref)) {
        problems.push(`${path}: '$ref' ${ref} refers to itself (a recursive schema cannot be offered to a model)`);
        return node;
      }
      const target = lookup(ref);
      if (target === undefined) {
        problems.push(`${path}: '$ref' ${ref} does not point into the schema's own $defs or definitions`);
        return node;
      }
      const { $ref: _ignored, ...siblings } = node;
      return visit({ ...target, ...siblings }, path, [...refs, ref], depth);
    }
    const out: Node = {};
    for (const [keyword, value] of Object.entries(node)) {
      if (keyword === '$defs' || keyword === 'definitions') continue; // inlined where used
      if (keyword === '$schema' || keyword === '$id') continue; // dialect and identity markers: the contract's validator sets its own
      if (!KNOWN_KEYWORDS.has(keyword)) {
        notes.push(`${path}: dropped the keyword '${keyword}'`);
        continue;
      }
      if (keyword === 'format' && !KNOWN_FORMATS.has(String(value))) {
        notes.push(`${path}: dropped the format '${String(value)}' (the server still checks it)`);
        continue;
      }
      if ((SUBSCHEMA_MAPS as readonly string[]).includes(keyword) && isNode(value)) {
        const children: Node = {};
        for (const [name, child] of Object.entries(value))
          children[name] = isNode(child) ? visit(child, `${path}.${name}`, refs, depth + 1) : child;
        out[keyword] = children;
      } else if ((SUBSCHEMA_LISTS as readonly string[]).includes(keyword) && Array.isArray(value)) {
        out[keyword] = value.map((child, index) =>
          isNode(child) ? visit(child, `${path}|${index}`, refs, depth + 1) : child,
        );
      } else if ((SUBSCHEMAS as readonly string[]).includes(keyword) && isNode(value)) {
        out[keyword] = visit(value, keyword === 'items' ? `${path}[]` : `${path}.${keyword}`, refs, depth + 1);
      } else {
        out[keyword] = value;
      }
    }
    if (isNode(out.properties)) {
      const properties = out.properties as Record<string, Node>;
      for (const [name, child] of Object.entries(properties)) {
        if (!isNode(child)) continue;
        if (
          child.type === undefined &&
          child.anyOf === undefined &&
          child.oneOf === undefined &&
          child.enum === undefined &&
          !('const' in child)
        ) {
          child.type = ANY_JSON;
          notes.push(`${path}.${name}: declares no type, so it accepts any JSON value; its type now says so`);
        }
        if (typeof child.description !== 'string' || child.description.trim() === '') {
          child.description = generatedDescription(name, child);
          notes.push(`${path}.${name}: the server gives no description; a generated one names it`);
        }
      }
      if (Array.isArray(out.required)) {
        const kept = out.required.filter((name) => typeof name === 'string' && Object.hasOwn(properties, name));
        if (kept.length !== out.required.length)
          notes.push(`${path}: dropped 'required' names that are not among its properties`);
        out.required = kept;
      }
    }
    return out;
  };

  const converted = visit(root, 'parameters', [], 0);
  if (converted.type !== undefined && converted.type !== 'object')
    problems.push(`parameters: the root must be an object schema, got type ${JSON.stringify(converted.type)}`);
  if (problems.length > 0) return refused(problems, notes);
  const { type: _type, properties, required, ...rest } = converted;
  const parameters = {
    type: 'object',
    properties: isNode(properties) ? properties : {},
    required: Array.isArray(required) ? required : [],
    ...rest,
  } as unknown as ParametersSchema;
  const view = toStrictMode(parameters as unknown as JsonSchema);
  return { parameters, strict: view.problems.length === 0, strictProblems: view.problems, notes, problems: [] };
}

function refused(problems: string[], notes: string[] = []): ConvertedSchema {
  return { parameters: undefined, strict: false, strictProblems: [], notes, problems };
}

function generatedDescription(name: string, schema: Node): string {
  const type = Array.isArray(schema.type)
    ? schema.type.length === ANY_JSON.length
      ? 'any JSON value'
      : schema.type.join(' or ')
    : typeof schema.type === 'string'
      ? schema.type
      : undefined;
  const title = typeof schema.title === 'string' && schema.title.trim() !== '' ? `${schema.title.trim()}. ` : '';
  return `${title}The '${name}' argument${type ? ` (${type})` : ''}; the MCP server gives no description of it.`;
}

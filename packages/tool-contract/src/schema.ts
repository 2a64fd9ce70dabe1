import { MCP_HEADER_KEYWORD } from './mcp-header.js';
import type { JsonSchema } from './json-schema.js';

// In a module of its own, so that mcp-header.ts (which reads schemas) is not imported back.
export type { JsonSchema } from './json-schema.js';

/** The `parameters` of a function tool: always an object schema with `properties` and `required`. */
export interface ParametersSchema extends JsonSchema {
  readonly type: 'object';
  readonly properties: { readonly [name: string]: JsonSchema };
  readonly required: readonly string[];
}

/**
 * The OpenAI function-tool schema a tool's `getSchema()` returns (TUL-011 §4, AGN-005 §7.1).
 * `strict: false` opts out of OpenAI strict mode; say why in the tool's docs.
 */
export interface FunctionToolSchema {
  readonly type: 'function';
  readonly name: string;
  readonly description: string;
  readonly parameters: ParametersSchema;
  readonly strict?: boolean;
}

/** An object schema as TypeBox builds it (`Type.Object(...)`). */
export interface ObjectSchemaLike {
  readonly type: 'object';
  readonly properties: { readonly [name: string]: unknown };
  readonly required?: readonly string[];
}

/**
 * Builds the deterministic function-tool schema from a TypeBox object, so the schema is declared once
 * and also types the parsed arguments. The result is plain JSON data: no symbols, no undefined.
 * @example
 * static getSchema = () => functionToolSchema(HelloWorldTool.ToolName, 'Creates a friendly greeting using the user\'s name.', Args);
 */
export function functionToolSchema(
  name: string,
  description: string,
  parameters: ObjectSchemaLike,
  options: { readonly strict?: boolean } = {},
): FunctionToolSchema {
  const { type, properties, required, ...rest } = toPlainJson(parameters) as unknown as ParametersSchema;
  const schema: FunctionToolSchema = {
    type: 'function',
    name,
    description,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    parameters: { type, properties, required: required ?? [], ...rest },
  };
  return options.strict === undefined ? schema : { ...schema, strict: options.strict };
}

/** Deep copy through JSON: drops symbol keys (TypeBox's `~kind`), functions and undefined. */
export function toPlainJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** JSON with object keys sorted at every level: two schemas are the same iff their canonical JSON is. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** The Responses API's flat function tool (AGN-005 §7.1). */
export interface ResponsesFunctionDefinition {
  readonly type: 'function';
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly strict: boolean;
}

/** The Chat Completions API's function tool, nested under `function` (Story 6.1). */
export interface ChatFunctionDefinition {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: JsonSchema;
    readonly strict: boolean;
  };
}

/** An MCP `tools/list` entry. */
export interface McpToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** The tool's declared `OutputSchema`, when it has one: its results come with `structuredContent`. */
  readonly outputSchema?: JsonSchema;
  readonly annotations?: { readonly [hint: string]: boolean };
  /** Aptix's own facts about the tool, e.g. `{ "aptix/approval": "dynamic" }` for a gated tool. */
  readonly _meta?: { readonly [key: string]: unknown };
}

export type DefinitionFormat = 'responses' | 'chat' | 'mcp';
export interface DefinitionByFormat {
  responses: ResponsesFunctionDefinition;
  chat: ChatFunctionDefinition;
  mcp: McpToolDefinition;
}

// ---------------------------------------------------------------------------------------------
// OpenAI strict mode
// ---------------------------------------------------------------------------------------------

/** Keywords OpenAI strict mode rejects but that only narrow values: left out of the model's view, still enforced by the server. */
const RELAXABLE_KEYWORDS = new Set([
  'minLength',
  'maxLength',
  'minProperties',
  'maxProperties',
  'uniqueItems',
  'default',
  'examples',
  'contains',
  'minContains',
  'maxContains',
]);
/** Keywords strict mode cannot express at all. */
const IMPOSSIBLE_KEYWORDS = new Set([
  'allOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'patternProperties',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'propertyNames',
  'unevaluatedProperties',
  'additionalItems',
]);
const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const MAX_STRICT_DEPTH = 10;

/** How a tool's parameters look to OpenAI strict mode. */
export interface StrictModeView {
  /** The parameters as sent with `strict: true`: every property required, optional ones nullable, objects closed. */
  readonly parameters: JsonSchema;
  /** Why strict mode cannot take this schema (empty when it can). */
  readonly problems: readonly string[];
  /** Keywords left out of the strict view; the server still enforces them. */
  readonly relaxed: readonly string[];
}

/**
 * Derives the OpenAI strict-mode view of a tool's parameters from its one definition.
 * Optional properties become required and nullable; the executor turns a `null` sent for such a
 * property back into "absent" before validating, so tools see the arguments they declared.
 */
export function toStrictMode(parameters: JsonSchema): StrictModeView {
  const problems: string[] = [];
  const relaxed: string[] = [];
  const visit = (node: JsonSchema, path: string, depth: number): JsonSchema => {
    if (depth > MAX_STRICT_DEPTH) {
      problems.push(`${path}: nested deeper than ${MAX_STRICT_DEPTH} levels`);
      return node;
    }
    const out: Record<string, unknown> = {};
    for (const [keyword, value] of Object.entries(node)) {
      if (IMPOSSIBLE_KEYWORDS.has(keyword)) {
        problems.push(`${path}: '${keyword}' is not supported in strict mode`);
        out[keyword] = value;
      } else if (keyword === MCP_HEADER_KEYWORD) {
        // For MCP transports only: not a constraint, and not a keyword OpenAI knows.
      } else if (RELAXABLE_KEYWORDS.has(keyword) || (keyword === 'format' && !STRICT_FORMATS.has(String(value)))) {
        relaxed.push(`${path}.${keyword}`);
      } else if (keyword === 'properties' || keyword === '$defs' || keyword === 'definitions') {
        const children: Record<string, unknown> = {};
        for (const [name, child] of Object.entries(value as Record<string, JsonSchema>)) {
          children[name] = visit(child, `${path}.${name}`, depth + 1);
        }
        out[keyword] = children;
      } else if (keyword === 'items') {
        out[keyword] = Array.isArray(value) ? value : visit(value as JsonSchema, `${path}[]`, depth + 1);
        if (Array.isArray(value)) problems.push(`${path}: tuple 'items' are not supported in strict mode`);
      } else if (keyword === 'anyOf') {
        out[keyword] = (value as JsonSchema[]).map((branch, index) => visit(branch, `${path}|${index}`, depth));
      } else {
        out[keyword] = value;
      }
    }
    if (isObjectNode(node)) closeObject(out, path, problems);
    if (node.type === 'array' && node.items === undefined) problems.push(`${path}: arrays need 'items' in strict mode`);
    return out;
  };
  const view = visit(parameters, 'parameters', 0);
  if (parameters.type !== 'object') problems.push(`parameters: the root must be an object schema`);
  return { parameters: view, problems, relaxed };
}

function isObjectNode(node: JsonSchema): boolean {
  return node.type === 'object' || (node.type === undefined && node.properties !== undefined);
}

function closeObject(out: Record<string, unknown>, path: string, problems: string[]): void {
  const additional = out.additionalProperties;
  if (additional !== undefined && additional !== false) {
    problems.push(`${path}: open objects ('additionalProperties' other than false) are not supported in strict mode`);
    return;
  }
  out.additionalProperties = false;
  const properties = (out.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((out.required as string[] | undefined) ?? []);
  for (const [name, child] of Object.entries(properties)) {
    if (!required.has(name) && !acceptsNull(child)) properties[name] = nullable(child);
  }
  out.properties = properties;
  out.required = Object.keys(properties);
}

/** True when the schema already admits `null`. */
export function acceptsNull(schema: JsonSchema): boolean {
  const type = schema.type;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).some(acceptsNull);
  return false;
}

function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string' && schema.anyOf === undefined) {
    const widened: Record<string, unknown> = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum)) widened.enum = [...(schema.enum as unknown[]), null];
    return widened;
  }
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...(schema.anyOf as JsonSchema[]), { type: 'null' }] };
  const { description, ...rest } = schema;
  return description === undefined
    ? { anyOf: [rest, { type: 'null' }] }
    : { anyOf: [rest, { type: 'null' }], description };
}

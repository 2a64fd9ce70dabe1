import type { JsonSchema } from './json-schema.js';

/**
 * SEP-2243 (MCP 2026-07-28, Streamable HTTP): a parameter annotated `"x-mcp-header": "Region"` is sent
 * by conforming clients in an `Mcp-Param-Region` header as well as in the arguments, so a gateway or
 * load balancer can route on it without reading the body; the server refuses a call whose header and
 * argument disagree. The annotation changes nothing else: HTTP invoke, the CLI and the OpenAI formats
 * ignore it (the strict-mode view leaves it out).
 */
export const MCP_HEADER_KEYWORD = 'x-mcp-header';

/** RFC 9110 `token`: what an HTTP field name may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The types SEP-2243 admits on an annotated property (`number` is not among them). */
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);
/** Keywords whose subschemas are not reachable by a plain chain of `properties`. */
const UNREACHABLE = [
  'items',
  'prefixItems',
  'additionalProperties',
  'patternProperties',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
  'contains',
  'propertyNames',
  'dependentSchemas',
];

/**
 * Why a tool's parameters misuse `x-mcp-header`, or undefined when every annotation is valid: it
 * must be a token, stand on a string, integer or boolean property reached through `properties` only,
 * and name each header once, whatever the case.
 */
export function mcpHeaderProblem(parameters: JsonSchema): string | undefined {
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: readonly string[], reachable: boolean): string | undefined => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    const schema = node as Record<string, unknown>;
    const at = path.length === 0 ? 'parameters' : `parameters.${path.join('.')}`;
    if (MCP_HEADER_KEYWORD in schema) {
      const header = schema[MCP_HEADER_KEYWORD];
      if (!reachable || path.length === 0)
        return `${at}: x-mcp-header may only stand on a property reached through "properties" alone (not the root, items, anyOf and the like)`;
      if (typeof header !== 'string' || !TOKEN.test(header))
        return `${at}: x-mcp-header ${JSON.stringify(header)} is not an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~ only)`;
      if (typeof schema.type !== 'string' || !HEADER_TYPES.has(schema.type))
        return `${at}: x-mcp-header stands on a property of type ${JSON.stringify(schema.type ?? null)}; only string, integer and boolean properties can travel in a header`;
      const earlier = seen.get(header.toLowerCase());
      if (earlier !== undefined)
        return `${at}: x-mcp-header "${header}" is already used by parameters.${earlier}; header names must differ whatever their case`;
      seen.set(header.toLowerCase(), path.join('.'));
    }
    if (schema.properties !== null && typeof schema.properties === 'object') {
      for (const [name, child] of Object.entries(schema.properties)) {
        const problem = visit(child, [...path, name], reachable);
        if (problem !== undefined) return problem;
      }
    }
    for (const keyword of UNREACHABLE) {
      const sub = schema[keyword];
      if (sub === undefined || sub === null || typeof sub !== 'object') continue;
      const branches = Array.isArray(sub)
        ? sub
        : ['$defs', 'definitions', 'patternProperties', 'dependentSchemas'].includes(keyword)
          ? Object.values(sub)
          : [sub];
      for (const branch of branches) {
        const problem = visit(branch, [...path, `<${keyword}>`], false);
        if (problem !== undefined) return problem;
      }
    }
    return undefined;
  };
  return visit(parameters, [], true);
}

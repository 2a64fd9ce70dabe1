import type { AgentToolRegistry, JsonSchema, RegisteredTool } from '@aptix/tool-contract';
import { MCP_HEADER_KEYWORD } from '@aptix/tool-contract';

/**
 * SEP-2243 (2026-07-28 over Streamable HTTP): a parameter a tool annotates with `x-mcp-header` is
 * also sent in an `Mcp-Param-<Name>` header, so a gateway can route on it without reading the body.
 * A call whose header is missing, badly encoded or different from the argument is refused, 400 with
 * HeaderMismatch (-32020), before the tool runs: what the gateway saw is what the tool gets.
 */
export const HEADER_MISMATCH = -32020;

interface Declaration {
  readonly path: readonly string[];
  readonly header: string;
  readonly type: string;
}

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const declarationsOf = new WeakMap<RegisteredTool, readonly Declaration[]>();

/** The tool's header declarations, found once per registered tool (a tool replaced is a new object). */
function declarations(tool: RegisteredTool): readonly Declaration[] {
  let found = declarationsOf.get(tool);
  if (found === undefined) {
    const out: Declaration[] = [];
    const visit = (schema: JsonSchema, path: readonly string[]) => {
      const header = schema[MCP_HEADER_KEYWORD];
      if (path.length > 0 && typeof header === 'string') out.push({ path, header, type: String(schema.type) });
      const properties = schema.properties;
      if (properties !== null && typeof properties === 'object') {
        for (const [name, child] of Object.entries(properties as Record<string, JsonSchema>))
          visit(child, [...path, name]);
      }
    };
    visit(tool.parameters, []);
    found = out;
    declarationsOf.set(tool, found);
  }
  return found;
}

/** A header value as the client meant it: `=?base64?…?=` decoded (undefined when it is not canonical Base64 of UTF-8), anything else literal. */
function decode(value: string): string | undefined {
  if (!(
    value.startsWith(BASE64_PREFIX) &&
    value.endsWith(BASE64_SUFFIX) &&
    value.length >= BASE64_PREFIX.length + BASE64_SUFFIX.length
  ))
    return value;
  const payload = value.slice(BASE64_PREFIX.length, -BASE64_SUFFIX.length);
  if (!CANONICAL_BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function agrees(declared: Declaration, decoded: string, value: string | number | boolean): boolean {
  if (typeof value === 'number') return DECIMAL.test(decoded) && Number(decoded) === value;
  return decoded === String(value);
}

/**
 * The answer to a 2026-07-28 `tools/call` whose `Mcp-Param-*` headers disagree with its arguments, or
 * undefined when they agree (or the tool declares none). Only arguments that are present and
 * primitive are compared; an absent or null one expects no header.
 */
export function paramHeaderRejection(
  registry: AgentToolRegistry,
  message: unknown,
  headers: Headers,
): Response | undefined {
  if (message === null || typeof message !== 'object' || (message as { method?: unknown }).method !== 'tools/call')
    return undefined;
  const params = (message as { params?: { name?: unknown; arguments?: unknown } }).params;
  const tool = typeof params?.name === 'string' ? registry.get(params.name) : undefined;
  if (tool === undefined) return undefined;
  for (const declared of declarations(tool)) {
    const value = valueAt(params!.arguments, declared.path);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    const name = `Mcp-Param-${declared.header}`;
    const argument = declared.path.join('.');
    const header = headers.get(name);
    let problem: string | undefined;
    if (header === null)
      problem = `the ${name} header is missing, but the arguments carry ${argument}=${JSON.stringify(value)}. Fix: send the header with the same value (an MCP 2026-07-28 client does this itself)`;
    else {
      const decoded = decode(header);
      if (decoded === undefined)
        problem = `the ${name} header is not canonical Base64 of UTF-8 text inside =?base64?…?=. Fix: encode the value again, or send it literally`;
      else if (!agrees(declared, decoded, value))
        problem = `the ${name} header says ${JSON.stringify(decoded.slice(0, 200))}, but the arguments carry ${argument}=${JSON.stringify(value)}. Fix: send the same value in both`;
    }
    if (problem !== undefined) {
      const id = (message as { id?: unknown }).id;
      const body = {
        jsonrpc: '2.0',
        id: typeof id === 'string' || typeof id === 'number' ? id : null,
        error: {
          code: HEADER_MISMATCH,
          message: `Bad Request: ${problem}.`,
          data: { mismatch: { header: name, body: argument } },
        },
      };
      return new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } });
    }
  }
  return undefined;
}

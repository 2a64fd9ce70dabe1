import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply } from 'fastify';
import {
  isInputRequiredResult,
  isJsonContentType,
  isSpecType,
  ProtocolErrorCode,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolRequestParams,
  type CallToolResult,
  type Implementation,
  type ListToolsResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ResumableAnswer } from './lane-answer.js';
import { LaneRequest, sendAnswer, type LaneOutput } from './lane-request.js';
import { checkedCallResult, isCallToolParams, isJsonRpcRequest, isPlainObject, validEnvelope } from './lane-checks.js';

/**
 * The HTTP fast lane: a plain `tools/call` or `tools/list` POST served without building an SDK
 * server, transport, web `Request` and `ReadableStream` for it (about a millisecond of CPU per request
 * in the v2 SDK, 30 times the tool call itself).
 *
 * It takes only requests it can answer exactly as the SDK would, checked with the SDK's own code
 * (`classifyInboundRequest`, the `isSpecType` schemas) or checks held equal to it (lane-checks.ts) plus a strict shape: nothing but `name`,
 * `arguments` and `_meta`, with known `_meta` keys only. Anything else (another method, a batch, an
 * odd header, an envelope or field it does not know, any invalid message) returns `undefined` before
 * anything runs, and the SDK serves the request, errors included. The answer is encoded as the SDK
 * encodes it: the result checked against the SDK's `CallToolResult` schema; on 2026-07-28 the
 * `resultType`, cache fields and `serverInfo` stamps; errors with the SDK's codes. Notifications a
 * call sends before its answer go out as SSE events on the request's own stream, as the SDK does:
 * always SSE on a 2025 session, SSE from the first notification on 2026-07-28 (JSON otherwise).
 */

/** The revision the fast lane serves statelessly; any other modern revision goes to the SDK. */
export const MODERN_REVISION = '2026-07-28';
/** The SDK's cache hint for a 2026-07-28 `tools/list` (createMcpServer configures the same). */
export const TOOLS_LIST_CACHE_HINT = { ttlMs: 300_000, cacheScope: 'public' } as const;

const ENVELOPE_KEYS = new Set([
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/clientInfo',
  'io.modelcontextprotocol/clientCapabilities',
  'io.modelcontextprotocol/logLevel',
]);
const MESSAGE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const CALL_KEYS = new Set(['name', 'arguments', '_meta']);
const LIST_KEYS = new Set(['_meta']);

export type FastLaneMessage =
  | {
      readonly era: 'legacy' | 'modern';
      readonly id: string | number;
      readonly method: 'tools/call';
      readonly params: CallToolRequestParams;
      readonly envelope?: Record<string, unknown>;
    }
  | {
      readonly era: 'legacy' | 'modern';
      readonly id: string | number;
      readonly method: 'tools/list';
      readonly envelope?: Record<string, unknown>;
    };

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

/** Splits `_meta` into the 2026-07-28 envelope and the rest; undefined when it holds a key the fast lane does not know. */
function splitMeta(meta: unknown, era: 'legacy' | 'modern'): { envelope?: Record<string, unknown> } | undefined {
  if (meta === undefined) return {};
  if (!isPlainObject(meta)) return undefined;
  let envelope: Record<string, unknown> | undefined;
  for (const key in meta) {
    // Trace context (the MCP semantic conventions' _meta.traceparent) is read by the request's span, not the lane.
    if (key === 'progressToken' || key === 'traceparent' || key === 'tracestate') continue;
    if (era === 'modern' && ENVELOPE_KEYS.has(key)) (envelope ??= {})[key] = meta[key];
    else return undefined;
  }
  return envelope === undefined ? {} : { envelope };
}

/**
 * The request as the fast lane would serve it, or undefined when the SDK must serve it. `era` is
 * what the endpoint expects: `legacy` for a request in a 2025 session (after the session was found),
 * `modern` for a request without one.
 */
export function fastLaneMessage(
  era: 'legacy' | 'modern',
  headers: IncomingHttpHeaders,
  body: unknown,
): FastLaneMessage | undefined {
  if (!isPlainObject(body) || !onlyKeys(body, MESSAGE_KEYS)) return undefined;
  const method = body.method;
  if (method !== 'tools/call' && method !== 'tools/list') return undefined;
  if (!isJsonContentType(header(headers, 'content-type') ?? null)) return undefined;
  const protocolVersion = header(headers, 'mcp-protocol-version');
  if (era === 'legacy') {
    const accept = header(headers, 'accept');
    // The SDK's 2025 transport answers 406 without both, and 400 for a version it does not support.
    if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream'))
      return undefined;
    if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) return undefined;
  } else {
    // Only the exact standard headers; a missing or differing one gets the SDK's own rejection.
    if (protocolVersion !== MODERN_REVISION || header(headers, 'mcp-method') !== method) return undefined;
  }
  const params = body.params;
  if (params !== undefined && !isPlainObject(params)) return undefined;
  const meta = splitMeta(params?._meta, era);
  if (meta === undefined) return undefined;
  if (
    era === 'modern' &&
    (meta.envelope === undefined || meta.envelope['io.modelcontextprotocol/protocolVersion'] !== MODERN_REVISION)
  )
    return undefined;
  // Both eras: a JSON-RPC request (the SDK refuses anything else: a bad id, jsonrpc 1.0, no id at all).
  if (!isJsonRpcRequest(body)) return undefined;
  // A 2025 request in the subset above has no envelope claim and no modern header: the SDK classifies it legacy, so only 2026-07-28 asks the classifier.
  if (era === 'modern' && !validEnvelope(method, params!._meta as Record<string, unknown>)) return undefined;
  const id = body.id as string | number;
  if (method === 'tools/list') {
    if (params !== undefined && !onlyKeys(params, LIST_KEYS)) return undefined;
    if (!isSpecType.ListToolsRequest(body)) return undefined;
    return { era, id, method, ...meta };
  }
  if (params === undefined || !onlyKeys(params, CALL_KEYS) || !isCallToolParams(params)) return undefined;
  if (era === 'modern' && header(headers, 'mcp-name') !== params.name) return undefined;
  return { era, id, method, params: params as CallToolRequestParams, ...meta };
}

export interface FastLaneHandlers {
  listTools(): Promise<ListToolsResult>;
  callTool(request: { params: CallToolRequestParams }, ctx: ServerContext): Promise<CallToolResult>;
}

export interface FastLaneOptions extends LaneOutput {
  /** Aborts the call: the client went away (or, on a 2025 session, cancelled it). Its signal is made only if the call asks. */
  readonly cancel: { readonly signal: AbortSignal };
  readonly serverInfo: Implementation;
  /** Whether a 2026-07-28 list carries the configured cache hint; without it the SDK serves the list. */
  readonly listCacheHint: boolean;
  /** 2025 sessions: whether the client cancelled the call (`notifications/cancelled`); it then gets no answer. */
  cancelledByClient(): boolean;
  /**
   * 2025-11-25 sessions: the answer as a resumable stream (priming event, an id on every event; see
   * resumable-streams.ts), opened once the lane knows it answers; undefined for any other request.
   * `signal` then aborts on `notifications/cancelled` only: a dropped connection is not a cancellation.
   */
  resumable(reply: FastifyReply): ResumableAnswer | undefined;
}

/** The `_meta` stamping the server's identity, made once per identity (an object literal with a computed key is a slow one to make per call); serialized at once, never changed. */
const serverMetas = new WeakMap<Implementation, Readonly<Record<string, unknown>>>();

function serverMeta(serverInfo: Implementation): Readonly<Record<string, unknown>> {
  let meta = serverMetas.get(serverInfo);
  if (meta === undefined) serverMetas.set(serverInfo, (meta = Object.freeze({ [SERVER_INFO_META_KEY]: serverInfo })));
  return meta;
}

/** The SDK's 2026-07-28 encoding of a result: `resultType`, the cache fields of a list, and the server's identity. */
function encodeModern(
  method: 'tools/call' | 'tools/list',
  result: Record<string, unknown>,
  serverInfo: Implementation,
): Record<string, unknown> {
  // The common call result in one copy (the same keys in the same order as the steps below give).
  if (method === 'tools/call' && result.resultType === undefined && result._meta === undefined)
    return { ...result, resultType: 'complete', _meta: serverMeta(serverInfo) };
  let encoded = result.resultType === undefined ? { ...result, resultType: 'complete' } : result;
  if (method === 'tools/list' && encoded.resultType === 'complete')
    encoded = { ...encoded, ttlMs: TOOLS_LIST_CACHE_HINT.ttlMs, cacheScope: TOOLS_LIST_CACHE_HINT.cacheScope };
  const meta = encoded._meta;
  if (meta === undefined) return { ...encoded, _meta: { [SERVER_INFO_META_KEY]: serverInfo } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return encoded;
  return { ...encoded, _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfo } };
}

/** A 2025 list whose tools the SDK would rewrite (an output schema with a non-object root, a 2026-only field): left to the SDK. */
function listNeedsSdk(result: ListToolsResult): boolean {
  return result.tools.some(
    (tool) =>
      'execution' in tool ||
      (tool.outputSchema !== undefined && (tool.outputSchema as { type?: unknown }).type !== 'object'),
  );
}

const MISSING_CAPABILITY = ProtocolErrorCode.MissingRequiredClientCapability;

/** The JSON-RPC error the SDK's dispatch sends for an error a handler threw. */
function errorMessage(id: string | number, error: unknown): Record<string, unknown> {
  const { code, message, data } = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  const thrown = Number.isSafeInteger(code) ? (code as number) : -32603;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: thrown === -32002 ? -32602 : thrown,
      message: typeof message === 'string' ? message : 'Internal error',
      ...(data === undefined ? {} : { data }),
    },
  };
}

/**
 * Serves a message {@link fastLaneMessage} accepted. Resolves to `false` without answering when the
 * SDK must serve it after all (a `tools/list` whose tools the SDK would rewrite; nothing has run).
 */
export async function serveFastLane(
  reply: FastifyReply,
  message: FastLaneMessage,
  handlers: FastLaneHandlers,
  options: FastLaneOptions,
): Promise<boolean> {
  const sse = message.era === 'legacy';
  if (message.method === 'tools/list') {
    const result = await handlers.listTools();
    if (message.era === 'legacy' && listNeedsSdk(result)) return false;
    if (message.era === 'modern' && (!options.listCacheHint || result.tools.some((tool) => 'execution' in tool)))
      return false;
    const encoded =
      message.era === 'modern'
        ? encodeModern('tools/list', result as unknown as Record<string, unknown>, options.serverInfo)
        : result;
    const answer = JSON.stringify({ result: encoded, jsonrpc: '2.0', id: message.id });
    const resumable = options.resumable(reply);
    if (resumable) resumable.end(answer);
    else sendAnswer(reply, sse, answer, options);
    return true;
  }
  const request = new LaneRequest(message, options.cancel, reply, options, options.resumable(reply));
  let answer: Record<string, unknown>;
  let status = 200;
  try {
    const result = await handlers.callTool({ params: message.params }, { mcpReq: request } as unknown as ServerContext);
    answer = { result: encodeCallResult(message, result, options.serverInfo), jsonrpc: '2.0', id: message.id };
  } catch (error) {
    answer = errorMessage(message.id, error);
    // As the SDK answers an in-band error: a 2026-07-28 MissingRequiredClientCapability (-32021) is a 400.
    if (message.era === 'modern' && (answer.error as { code: number }).code === MISSING_CAPABILITY) status = 400;
  }
  // The specification: a request the client cancelled gets no response (2025 revisions; 2026-07-28 has no cancellation by notification here).
  if (message.era === 'legacy' && options.cancelledByClient()) request.drop();
  else request.answer(JSON.stringify(answer), status);
  return true;
}

function encodeCallResult(
  message: FastLaneMessage,
  result: CallToolResult,
  serverInfo: Implementation,
): Record<string, unknown> {
  // A tool only asks for input from a client that can answer, and the lane takes none of those.
  if (isInputRequiredResult(result))
    throw new Error('A call in the MCP fast lane asked for input its client cannot give.');
  const checked = checkedCallResult(result);
  if ('issues' in checked)
    throw Object.assign(
      new Error(`Invalid tools/call result: ${checked.issues.map((issue) => issue.message).join('; ')}`),
      { code: -32602 },
    );
  return message.era === 'modern' ? encodeModern('tools/call', checked.value, serverInfo) : checked.value;
}

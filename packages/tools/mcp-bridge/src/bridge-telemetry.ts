import { context, propagation, SpanKind, type Attributes } from '@opentelemetry/api';
import { inSpan, meterInstruments, scopeTracer, tracingEnabled } from '@aptix/tool-contract';

// The bridge as an MCP client, after the OpenTelemetry MCP conventions: a client span per remote
// tools/call, whose context travels to the server in the request's `_meta` (traceparent, tracestate)
// and, over Streamable HTTP, in the W3C headers too. Nothing of it runs while no SDK is registered.

const SCOPE = '@aptix/tool-mcp-bridge';
const tracer = scopeTracer(SCOPE);
const instruments = meterInstruments(SCOPE, (meter) => ({
  reconnects: meter.createCounter('aptix.mcp_bridge.reconnects', {
    description: 'Times a bridged MCP server was connected again after its connection broke, by server.',
    unit: '{reconnect}',
  }),
}));

/** Counts a reconnect of `server` (a no-op without an SDK). */
export function countReconnect(server: string): void {
  instruments()?.reconnects.add(1, { 'aptix.mcp_bridge.server': server });
}

/**
 * Runs a remote tools/call in a client span; `send` gets the `_meta` to add to the request (the span's
 * trace context), or undefined when tracing is off.
 */
export function tracedRemoteCall<T>(
  server: string,
  tool: string,
  /** The server's URL over Streamable HTTP; undefined for a stdio server. */
  url: string | undefined,
  send: (meta: Record<string, string> | undefined) => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return send(undefined);
  const attributes: Attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': tool,
    'gen_ai.operation.name': 'execute_tool',
    'aptix.mcp_bridge.server': server,
  };
  const parsed = url === undefined ? undefined : URL.parse(url);
  if (parsed) {
    attributes['server.address'] = parsed.hostname;
    if (parsed.port !== '') attributes['server.port'] = Number(parsed.port);
    attributes['network.transport'] = 'tcp';
  } else attributes['network.transport'] = 'pipe';
  return inSpan(tracer, `tools/call ${tool}`, { kind: SpanKind.CLIENT, attributes }, () => send(traceMeta()));
}

/** The active context as `_meta` entries (or HTTP headers): `traceparent` and, when set, `tracestate`. */
export function traceMeta(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * `fetch` for the Streamable HTTP transport: adds the active trace context's W3C headers to each
 * request when tracing is on, and is plain `fetch` otherwise.
 */
export const tracingFetch: typeof fetch = (input, init) => {
  if (!tracingEnabled()) return fetch(input, init);
  const headers = new Headers(init?.headers);
  for (const [name, value] of Object.entries(traceMeta())) headers.set(name, value);
  return fetch(input, { ...init, headers });
};

import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
} from '@opentelemetry/api';
import { tracingEnabled } from '@aptix/tool-contract';
import type { FastifyReply, FastifyRequest } from 'fastify';

const tracer = trace.getTracer('@aptix/host');

/** The longest `_meta.traceparent` or `_meta.tracestate` read (W3C caps tracestate at 512); longer ones are ignored. */
export const MAX_META_TRACE_LENGTH = 512;

interface JsonRpcRequestLike {
  readonly method: string;
  readonly id?: string | number | null;
  readonly params?: { readonly name?: unknown; readonly _meta?: unknown };
}

/**
 * Wraps the MCP route's handler in a span per JSON-RPC request (the MCP semantic conventions: kind
 * SERVER, named `{mcp.method.name} {target}`, with `mcp.method.name`, `mcp.session.id`,
 * `jsonrpc.request.id`, `mcp.protocol.version`, and `gen_ai.tool.name` for tools/call). Its parent
 * is the trace context the client put in `params._meta` (`traceparent`, `tracestate`), as the
 * conventions ask; the HTTP request's span is then a link. Without one, it is the HTTP span's child.
 * Both the fast lane and the SDK path run inside it. With tracing off the handler runs as it was.
 */
export function tracedMcpHandler<Q extends FastifyRequest, R extends FastifyReply, T>(
  handle: (request: Q, reply: R) => Promise<T>,
): (request: Q, reply: R) => Promise<T> {
  return (request, reply) => {
    if (!tracingEnabled() || request.method !== 'POST') return handle(request, reply);
    const message = jsonRpcRequest(request.body);
    if (message === undefined) return handle(request, reply);
    const httpContext = context.active();
    const carrier = metaCarrier(message.params?._meta);
    const fromMeta = carrier === undefined ? undefined : propagation.extract(ROOT_CONTEXT, carrier);
    const metaSpan = fromMeta === undefined ? undefined : trace.getSpanContext(fromMeta);
    const parent = metaSpan === undefined ? httpContext : fromMeta!;
    const httpSpan = trace.getSpanContext(httpContext);
    const links: Link[] = metaSpan !== undefined && httpSpan !== undefined ? [{ context: httpSpan }] : [];
    const tool =
      message.method === 'tools/call' && typeof message.params?.name === 'string' ? message.params.name : undefined;
    const attributes: Attributes = {
      'mcp.method.name': message.method,
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
    };
    if (message.id !== undefined && message.id !== null) attributes['jsonrpc.request.id'] = String(message.id);
    const session = request.headers['mcp-session-id'];
    if (typeof session === 'string') attributes['mcp.session.id'] = session;
    const version = request.headers['mcp-protocol-version'];
    if (typeof version === 'string') attributes['mcp.protocol.version'] = version;
    const agentSession = request.headers['x-aptix-session-id'];
    if (typeof agentSession === 'string') attributes['aptix.session.id'] = agentSession;
    if (tool !== undefined) {
      attributes['gen_ai.tool.name'] = tool;
      attributes['gen_ai.operation.name'] = 'execute_tool';
    }
    const span = tracer.startSpan(
      tool === undefined ? message.method : `${message.method} ${tool}`,
      { kind: SpanKind.SERVER, attributes, links },
      parent,
    );
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) {
        span.setAttribute('error.type', 'aborted');
        span.setStatus({ code: SpanStatusCode.ERROR });
      } else if (reply.raw.statusCode >= 400) {
        span.setAttribute('error.type', String(reply.raw.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    });
    return context.with(trace.setSpan(parent, span), handle, undefined, request, reply);
  };
}

/** The body as a JSON-RPC request (one message, with a method), read only when tracing is on. */
function jsonRpcRequest(body: unknown): JsonRpcRequestLike | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const message = value as { method?: unknown; params?: unknown };
  if (typeof message.method !== 'string' || message.method.length > 256) return undefined;
  if (message.params !== undefined && (message.params === null || typeof message.params !== 'object')) return undefined;
  return value as JsonRpcRequestLike;
}

/** `traceparent` and `tracestate` from `_meta`, when they are strings of a sane length; undefined otherwise. */
export function metaCarrier(meta: unknown): Record<string, string> | undefined {
  if (meta === null || typeof meta !== 'object') return undefined;
  const { traceparent, tracestate } = meta as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== 'string' || traceparent.length > MAX_META_TRACE_LENGTH) return undefined;
  return typeof tracestate === 'string' && tracestate.length <= MAX_META_TRACE_LENGTH
    ? { traceparent, tracestate }
    : { traceparent };
}

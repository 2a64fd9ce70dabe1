import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';

const tracer = trace.getTracer('@aptix/host');
const REQUEST_CONTEXT = Symbol('aptix.otel.context');

type TracedRequest = FastifyRequest & { [REQUEST_CONTEXT]?: Context };

/** The headers the registered propagators read (`traceparent`, `tracestate`, `baggage`), read once. */
let propagationFields: readonly string[] | undefined;

/**
 * The caller's context from the request's headers. Most requests carry none of the headers the
 * propagators read, and then none of them needs to run (each would look its header up and give the
 * root context back).
 */
function callerContext(headers: FastifyRequest['headers']): Context {
  // Kept once a propagator is registered (before it, there are none to read).
  const fields = propagationFields ?? propagation.fields().map((field) => field.toLowerCase());
  if (fields.length > 0) propagationFields = fields;
  for (const field of fields) if (headers[field] !== undefined) return propagation.extract(ROOT_CONTEXT, headers);
  return ROOT_CONTEXT;
}

/**
 * A server span per HTTP request (the stable HTTP semantic conventions), child of the caller's W3C
 * `traceparent` when it sends a valid one (a malformed one is ignored, as the W3C propagator does).
 * The span is made current for the route's handler, so everything the request runs (the MCP request
 * span, the tool call's, the session store's) is its child.
 *
 * A hook and a wrapper of each route's handler rather than `@fastify/otel`: that plugin also makes a
 * span per hook and per handler, through `@opentelemetry/instrumentation`, far more than a request
 * of this host is worth, and it would need to be registered before Fastify loads. Registered only
 * when tracing is on, before the routes: a host without telemetry adds nothing to a request.
 */
export function registerHttpTracing(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function tracedHandler(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const active = (request as TracedRequest)[REQUEST_CONTEXT];
      return active === undefined
        ? handler.call(this, request, reply)
        : context.with(active, handler, this, request, reply);
    } as RouteHandlerMethod;
  });
  app.addHook('onRequest', (request, reply, done) => {
    const parent = callerContext(request.headers);
    const route = request.routeOptions.url;
    const query = request.url.indexOf('?');
    const attributes: Attributes = {
      'http.request.method': request.method,
      'url.path': query === -1 ? request.url : request.url.slice(0, query),
      'url.scheme': request.protocol,
      'network.protocol.version': request.raw.httpVersion,
      'aptix.request.id': request.id,
    };
    if (route !== undefined) attributes['http.route'] = route;
    const span = tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      { kind: SpanKind.SERVER, attributes },
      parent,
    );
    (request as TracedRequest)[REQUEST_CONTEXT] = trace.setSpan(parent, span);
    reply.raw.once('close', () => {
      const status = reply.raw.writableFinished ? reply.statusCode : undefined;
      if (status === undefined) {
        span.setAttribute('error.type', 'aborted');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the connection closed before the answer was sent' });
      } else {
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) {
          span.setAttribute('error.type', String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      span.end();
    });
    done();
  });
}

/** The context of the request's span, for work that runs outside its handler; undefined when not traced. */
export function requestContext(request: FastifyRequest): Context | undefined {
  return (request as TracedRequest)[REQUEST_CONTEXT];
}

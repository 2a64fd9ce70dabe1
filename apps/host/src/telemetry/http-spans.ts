import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';

const tracer = trace.getTracer('@aptix/host');
const REQUEST_CONTEXT = Symbol('aptix.otel.context');

type TracedRequest = FastifyRequest & { [REQUEST_CONTEXT]?: Context };

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
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = request.routeOptions.url;
    const span = tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'url.path': request.url.split('?', 1)[0]!,
          'url.scheme': request.protocol,
          ...(route === undefined ? {} : { 'http.route': route }),
          'network.protocol.version': request.raw.httpVersion,
          'aptix.request.id': request.id,
        },
      },
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

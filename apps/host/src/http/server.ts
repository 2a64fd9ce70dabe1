import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import parseSecureJson from 'secure-json-parse';
import type { AptixHost } from '../aptix-host.js';
import { clientErrorHandler, frameworkErrors, handleError, parseJsonBody, sendError } from './errors.js';
import { registerHealthRoutes } from './health-routes.js';
import { registerMcpRoutes } from './mcp-http.js';
import { registerRateLimit } from './rate-limit.js';
import { registerReasonerRoutes } from './reasoner-routes.js';
import { registerApprovalRoutes } from './approval-routes.js';
import { registerPrincipalRoute } from './principal-route.js';
import { registerAuditRoutes } from './audit-routes.js';
import { registerConsoleRoutes } from './console-routes.js';
import { apiKeyGuard, hostGuard } from './security.js';
import { registerResourceServer } from '../auth/resource-server.js';
import { registerSessionRoutes } from './session-routes.js';
import { registerToolRoutes } from './tool-routes.js';
import { registerUnitRoutes } from './unit-routes.js';
import { RequestLogger } from './request-logger.js';
import { accessLineWriter, type AccessLineWriter } from '../logger.js';
import { registerHttpTracing } from '../telemetry/http-spans.js';
import { registerMetricsRoute } from '../telemetry/metrics-route.js';
import { runningTelemetry } from '../telemetry/sdk.js';
import { observePendingApprovals } from '../telemetry/host-metrics.js';
import { tracingEnabled } from '@aptix/tool-contract';

import type { AnyFastifyInstance } from './fastify-instance.js';

/**
 * The access line of a request whose connection closed before its whole answer was sent: the client
 * hung up, or the host cut it off (a client too slow to send its request gets 408, then the connection
 * closes; shutdown closes what is left at its deadline). The line cannot tell which, so it names neither.
 */
export const REQUEST_ABORTED = 'request aborted: the connection closed before its answer was sent';

/** How often, while the host shuts down, the keep-alive connections that went idle are closed. */
const CLOSING_SWEEP_MS = 20;

/** Longest path segment (a tool name, a session id) the router accepts; longer gets 414. */
const MAX_PARAM_LENGTH = 256;

/** One route the server registered: its method and its pattern as the router matches it (`/v1/sessions/:id`). */
export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
}

export interface HttpServer {
  readonly app: AnyFastifyInstance;
  /**
   * Every route and method the server registered, its plugins' included (Fastify's `onRoute`), in the
   * order registered: what a test enumerates to check every route without a list of its own.
   */
  readonly routes: readonly RegisteredRoute[];
  /** Stops accepting, finishes the calls in flight, closes MCP sessions. */
  close(): Promise<void>;
}

/**
 * The HTTP surface: discovery, invocation, sessions, liveness and readiness, OpenAPI at /openapi.json,
 * docs at /docs, MCP at /mcp. Every route but the public ones needs the API key when one is set.
 * Logs go through the host's one pino instance, each line carrying the request id and the key's name.
 */
export async function createHttpServer(host: AptixHost, version: string): Promise<HttpServer> {
  const { config, pino } = host.cradle;
  // A request without an X-Request-Id gets this server's random prefix and a count: unique across hosts
  // and restarts (64 random bits), and cheaper than a UUID per request.
  const requestIdPrefix = `${randomBytes(8).toString('hex')}-`;
  let requestCount = 0;
  // One line per request at info, when it is answered: method, URL, status and time (an access log).
  // "incoming request" is logged at debug. The host's level is set once, at start: when a line is off,
  // nothing that would build it is set up (a log line costs more than the rest of a small request).
  const logRequests = pino.isLevelEnabled('info');
  const logIncoming = pino.isLevelEnabled('debug');
  const accessLine = accessLineWriter(pino);
  const app = Fastify({
    // Every request's logger carries `reqId`; the routes pass it down to the executor and the tools
    // (see AptixHost.call's `logger`), so every line of a request carries it. It is a RequestLogger,
    // given by the first onRequest hook, whose pino child is made only if the request logs a line other
    // than its access line. Fastify gets no logger of its own (it would only announce its listening,
    // which serve.ts does in Aptix's words): so it makes no pino child per request (not through
    // childLoggerFactory either, whose every logger Fastify checks method by method), and adds no
    // 'finish' and 'error' listeners or timing to each response, as it does with a logger or an
    // onResponse hook (at info, about 3k instructions of a request's 147k, callgrind).
    bodyLimit: config.bodyLimitBytes,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given)
        ? given
        : `${requestIdPrefix}${(++requestCount).toString(36)}`;
    },
    requestIdHeader: false,
    // Requests are logged below in Aptix's own words.
    logController: new LogController({ disableRequestLogging: true }),
    // Answered by the first hook below, in Aptix's error shape.
    return503OnClosing: false,
    // Unknown fields are refused with a message naming the right one, not silently dropped;
    // `verbose` gives the messages the schema the error is about.
    ajv: { customOptions: { removeAdditional: false, verbose: true } },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- it returns the FastifyReply (a thenable that never rejects), which Fastify ignores
    frameworkErrors: frameworkErrors(MAX_PARAM_LENGTH),
    clientErrorHandler: clientErrorHandler(config),
    // A client that sends slowly is cut off (408) instead of holding a connection forever. Node checks
    // these every connectionsCheckingInterval, so it is kept near the shortest of them.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  const routes: RegisteredRoute[] = [];
  // Added first, so it sees every route registered after it, including the HEAD route Fastify adds for each GET.
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  // OpenTelemetry, when the host started it: a span per request, and /metrics when asked for.
  const telemetry = runningTelemetry();
  if (telemetry?.config.traces ?? tracingEnabled()) registerHttpTracing(app);

  let boundPort = config.port;
  let closing = false;
  const guardHost = hostGuard(config, () => boundPort);
  // One onRequest hook for the request's logger, its X-Request-Id answer header and the
  // host's own checks, then the Host/Origin guard, in that order. The header is set here, where every
  // answer Fastify sends keeps it, not in an onSend hook: that hook cost about 4.7k instructions per
  // request (callgrind), 4 % of a small call, on every route the MCP ones included.
  app.addHook('onRequest', (request, reply, done) => {
    request.log = reply.log = RequestLogger.forRequest(pino, request.id).asFastifyLogger();
    if (logRequests) logWhenAnswered(request, reply, pino, accessLine);
    void reply.header('x-request-id', request.id);
    if (logIncoming)
      request.log.debug(
        { req: { method: request.method, url: request.url, remoteAddress: request.ip } },
        'incoming request',
      );
    if (closing) {
      void reply.header('connection', 'close');
      return void sendError(
        reply,
        'SHUTTING_DOWN',
        'The host is shutting down. Retry on another host, or once this one has restarted.',
      );
    }
    if (request.raw.url !== undefined && request.raw.url.length > config.maxUrlLength) {
      return void sendError(
        reply,
        'URL_TOO_LONG',
        `The URL is longer than ${config.maxUrlLength} characters. Send a shorter URL (the limit is maxUrlLength in the host's configuration).`,
      );
    }
    guardHost(request, reply, done);
  });
  app.decorateRequest('actor', undefined);
  if (config.oauth !== undefined) registerResourceServer(app, config.oauth, config.apiKeys);
  else if (config.apiKeys.length > 0) app.addHook('onRequest', apiKeyGuard(config.apiKeys));

  // Our own JSON parser: the same secure-json-parse, with messages that say what was wrong. No other
  // content-type is accepted (415 says to send application/json).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    parseJsonBody((text) => parseSecureJson(text, { protoAction: 'error', constructorAction: 'error' })),
  );
  app.setErrorHandler(handleError(config));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      'NOT_FOUND',
      `No route ${request.method} ${request.url.split('?')[0]}. The API is described at /docs.`,
    ),
  );

  await registerRateLimit(app, config);
  const guarded = config.apiKeys.length > 0 || config.oauth !== undefined;
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Aptix host',
        version,
        description: 'Tools for LLM agents, over HTTP, OpenAI function formats and MCP (at /mcp).',
      },
      components: guarded ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } } : {},
      ...(guarded ? { security: [{ bearer: [] }] } : {}),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());

  registerHealthRoutes(app, host);
  registerToolRoutes(app, host);
  registerUnitRoutes(app, host);
  registerSessionRoutes(app, host);
  registerReasonerRoutes(app, host);
  registerApprovalRoutes(app, host);
  registerPrincipalRoute(app, host);
  registerAuditRoutes(app, host);
  if (telemetry?.config.prometheus === 'route') registerMetricsRoute(app, host, telemetry);
  const stopObservingApprovals = observePendingApprovals(host.cradle.sessionManager.approvals);
  app.addHook('onClose', async () => stopObservingApprovals());
  if (config.console) await registerConsoleRoutes(app);
  const mcp = registerMcpRoutes(app, host, version, {
    idleMs: config.mcp.sessionIdleMs,
    maxSessions: config.mcp.maxSessions,
    streams: { retryMs: config.mcp.streamRetryMs, holdMs: config.mcp.streamHoldMs },
    fastLane: config.mcp.fastLane,
  });
  app.addHook('onClose', async () => {
    await mcp.close();
  });
  app.addHook('onListen', async () => {
    const address = app.server.address();
    if (address && typeof address === 'object') boundPort = address.port;
  });

  return {
    app,
    routes,
    async close() {
      closing = true;
      // A call that finishes while the host shuts down leaves its keep-alive connection idle, and close()
      // would wait on it: idle connections are closed as they appear (a request that comes first on one
      // is answered SHUTTING_DOWN with connection: close, by the onRequest hook).
      const sweep = setInterval(() => app.server.closeIdleConnections(), CLOSING_SWEEP_MS);
      try {
        await mcp.close();
        await app.close();
      } finally {
        clearInterval(sweep);
      }
    },
  };
}

/**
 * The request's access line at info, once its answer is sent (or its client gone): method, URL, status
 * and time. Written when the response closes, as Fastify's onResponse hooks are, but without one: an onResponse hook makes
 * Fastify time every response and add and remove 'finish' and 'error' listeners of its own, then run
 * the hook through its runner (about 3k instructions per request, callgrind).
 */
function logWhenAnswered(
  request: FastifyRequest,
  reply: FastifyReply,
  pino: Logger,
  accessLine: AccessLineWriter | undefined,
): void {
  const started = performance.now();
  // 'close', not 'finish': a request whose connection closes before its answer is sent (after its call
  // may have changed something) still leaves a line in the access log, saying so, with no status.
  reply.raw.once('close', () => {
    // In ms, to the µs: a float's 17 digits cost pino more to write than the rest of the line's
    // numbers (and a rounded time is mostly one V8 has already turned into text).
    const responseTime = Math.round((performance.now() - started) * 1000) / 1000;
    if (!reply.raw.writableFinished) {
      request.log.info({ method: request.method, url: request.url, responseTime }, REQUEST_ABORTED);
      return;
    }
    // The request's logger as it is now (the API key guard gives it the key's name).
    const log: unknown = request.log;
    if (log instanceof RequestLogger)
      log.completed(request.method, request.url, reply.statusCode, responseTime, accessLine);
    else
      pino.info(
        { reqId: request.id, method: request.method, url: request.url, statusCode: reply.statusCode, responseTime },
        'request completed',
      );
  });
}

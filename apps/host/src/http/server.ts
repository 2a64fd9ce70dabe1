import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
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
import { registerConsoleRoutes } from './console-routes.js';
import { apiKeyGuard, hostGuard } from './security.js';
import { registerSessionRoutes } from './session-routes.js';
import { registerToolRoutes } from './tool-routes.js';
import { RequestLogger } from './request-logger.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyFastifyInstance = FastifyInstance<any, any, any, any, any>;

/** How often, while the host shuts down, the keep-alive connections that went idle are closed. */
const CLOSING_SWEEP_MS = 20;

/** Longest path segment (a tool name, a session id) the router accepts; longer gets 414. */
const MAX_PARAM_LENGTH = 256;

export interface HttpServer {
  readonly app: AnyFastifyInstance;
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
  // the hook that would build it is not even registered (a hook costs every request a turn of
  // Fastify's runner, and a log line costs more than the rest of a small request).
  const logRequests = pino.isLevelEnabled('info');
  const logIncoming = pino.isLevelEnabled('debug');
  const app = Fastify({
    // Every request's logger carries `reqId`; the routes pass it down to the executor and the tools
    // (see AptixHost.call's `logger`), so every line of a request carries it. At info, where every
    // request logs its access line, it is Fastify's own pino child of the host's logger. Above info,
    // most requests log nothing: Fastify gets no logger (it would only announce its listening, which
    // serve.ts does in Aptix's words), so it makes no child per request and adds no 'finish' and
    // 'error' listeners or timing to each response; the first onRequest hook gives the request a
    // RequestLogger instead, whose child is made on its first line (not through childLoggerFactory,
    // whose every logger Fastify checks method by method). Host CPU per request, bench section 3.
    ...(logRequests ? { loggerInstance: pino } : {}),
    bodyLimit: config.bodyLimitBytes,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : `${requestIdPrefix}${(++requestCount).toString(36)}`;
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
    frameworkErrors: frameworkErrors(MAX_PARAM_LENGTH),
    clientErrorHandler: clientErrorHandler(config),
    // A client that sends slowly is cut off (408) instead of holding a connection forever. Node checks
    // these every connectionsCheckingInterval, so it is kept near the shortest of them.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs) },
  }).withTypeProvider<TypeBoxTypeProvider>();

  let boundPort = config.port;
  let closing = false;
  const guardHost = hostGuard(config, () => boundPort);
  // One onRequest hook for the request's logger (above info), its X-Request-Id answer header and the
  // host's own checks, then the Host/Origin guard, in that order. The header is set here, where every
  // answer Fastify sends keeps it, not in an onSend hook: that hook cost about 4.7k instructions per
  // request (callgrind), 4 % of a small call, on every route the MCP ones included.
  app.addHook('onRequest', (request, reply, done) => {
    if (!logRequests) request.log = reply.log = new RequestLogger(pino, { reqId: request.id }).asFastifyLogger();
    void reply.header('x-request-id', request.id);
    if (logIncoming) request.log.debug({ req: { method: request.method, url: request.url, remoteAddress: request.ip } }, 'incoming request');
    if (closing) {
      void reply.header('connection', 'close');
      return void sendError(reply, 'SHUTTING_DOWN', 'The host is shutting down. Retry on another host, or once this one has restarted.');
    }
    if (request.raw.url !== undefined && request.raw.url.length > config.maxUrlLength) {
      return void sendError(reply, 'URL_TOO_LONG', `The URL is longer than ${config.maxUrlLength} characters. Send a shorter URL (the limit is maxUrlLength in the host's configuration).`);
    }
    guardHost(request, reply, done);
  });
  if (logRequests) {
    app.addHook('onResponse', (request, reply, done) => {
      // Flat fields: pino writes strings and numbers directly, nested objects through a slower path.
      request.log.info({ method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime }, 'request completed');
      done();
    });
  }
  app.decorateRequest('actor', undefined);
  if (config.apiKeys.length > 0) app.addHook('onRequest', apiKeyGuard(config.apiKeys));

  // Our own JSON parser: the same secure-json-parse, with messages that say what was wrong. No other
  // content-type is accepted (415 says to send application/json).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody((text) => parseSecureJson(text, { protoAction: 'error', constructorAction: 'error' })));
  app.setErrorHandler(handleError(config));
  app.setNotFoundHandler((request, reply) => sendError(reply, 'NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}. The API is described at /docs.`));

  await registerRateLimit(app, config);
  await app.register(swagger, {
    openapi: {
      info: { title: 'Aptix host', version, description: 'Tools for LLM agents, over HTTP, OpenAI function formats and MCP (at /mcp).' },
      components: config.apiKeys.length > 0 ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } } : {},
      ...(config.apiKeys.length > 0 ? { security: [{ bearer: [] }] } : {}),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());

  registerHealthRoutes(app, host);
  registerToolRoutes(app, host);
  registerSessionRoutes(app, host);
  registerReasonerRoutes(app, host);
  registerApprovalRoutes(app, host);
  if (config.console) await registerConsoleRoutes(app);
  const mcp = registerMcpRoutes(app, host, version, { idleMs: config.mcp.sessionIdleMs, maxSessions: config.mcp.maxSessions, streams: { retryMs: config.mcp.streamRetryMs, holdMs: config.mcp.streamHoldMs }, fastLane: config.mcp.fastLane });
  app.addHook('onClose', async () => {
    await mcp.close();
  });
  app.addHook('onListen', async () => {
    const address = app.server.address();
    if (address && typeof address === 'object') boundPort = address.port;
  });

  return {
    app,
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

import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ScopeError, type AptixHost, type ToolScope } from '../aptix-host.js';
import { requestContext } from '../request-context.js';
import { registerMcpRoutes } from './mcp-http.js';
import { registerReasonerRoutes } from './reasoner-routes.js';
import { apiKeyGuard, hostGuard } from './security.js';

const ErrorBody = Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) });
const InvokeResultBody = Type.Object({
  successful: Type.Boolean(),
  result: Type.Unknown({ description: "The tool's result, parsed from its JSON; null when the call failed." }),
  errors: Type.Array(Type.Object({ message: Type.String(), code: Type.Optional(Type.String()) })),
});
const SessionBody = Type.Object({
  id: Type.String(),
  mode: Type.String(),
  parentId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  history: Type.Array(Type.Object({ fromMode: Type.String(), toMode: Type.String(), reason: Type.String(), branch: Type.Boolean(), at: Type.String() })),
});
const Format = Type.Union([Type.Literal('responses'), Type.Literal('chat'), Type.Literal('mcp')], { default: 'responses' });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyFastifyInstance = FastifyInstance<any, any, any, any, any>;

export interface HttpServer {
  readonly app: AnyFastifyInstance;
  /** Stops accepting, finishes the calls in flight, closes MCP sessions. */
  close(): Promise<void>;
}

/**
 * The HTTP surface: discovery, invocation, sessions, OpenAPI at /openapi.json, docs at /docs, MCP at
 * /mcp. Logs go through the host's one pino instance, each line carrying the request id.
 */
export async function createHttpServer(host: AptixHost, version: string): Promise<HttpServer> {
  const { config, pino } = host.cradle;
  const app = Fastify({
    loggerInstance: pino,
    bodyLimit: config.bodyLimitBytes,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // The request id reaches every log line through the pino mixin (see request-context.ts), tools'
    // lines included, so requests share the root logger instead of each making a child.
    childLoggerFactory: (logger) => logger,
    // Logged below, inside the request's context, so these lines carry the request id too.
    disableRequestLogging: true,
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  let boundPort = config.port;
  // Every log line of a request, including the tools' own, carries its request id.
  // The fields of a line pino would drop are not even built (at LOG_LEVEL=warn, on every request).
  app.addHook('onRequest', (request, _reply, done) =>
    requestContext.run({ reqId: request.id }, () => {
      if (pino.isLevelEnabled('info')) request.log.info({ req: { method: request.method, url: request.url, remoteAddress: request.ip } }, 'incoming request');
      done();
    }),
  );
  app.addHook('onResponse', (request, reply, done) => {
    if (pino.isLevelEnabled('info')) request.log.info({ res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });
  app.addHook('onRequest', hostGuard(config, () => boundPort));
  if (config.apiKey) app.addHook('onRequest', apiKeyGuard(config.apiKey));
  let closing = false;
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    // A call that finishes while the host shuts down also ends its keep-alive connection, or close() would wait on it.
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string; validation?: unknown }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return reply.code(status).send({ error: { code: 'INTERNAL', message: 'The host failed to answer this request. See the host logs for the request id.' } });
    }
    const code = error.validation ? 'BAD_REQUEST' : status === 413 ? 'BODY_TOO_LARGE' : (error.code ?? 'BAD_REQUEST');
    const message = status === 413 ? `The request body is larger than the limit of ${config.bodyLimitBytes} bytes.` : error.message;
    return reply.code(status).send({ error: { code, message } });
  });
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ error: { code: 'NOT_FOUND', message: `No route ${request.method} ${request.url.split('?')[0]}. The API is described at /docs.` } }));

  await app.register(swagger, {
    openapi: {
      info: { title: 'Aptix host', version, description: 'Tools for LLM agents, over HTTP, OpenAI function formats and MCP (at /mcp).' },
      components: config.apiKey ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } } : {},
      ...(config.apiKey ? { security: [{ bearer: [] }] } : {}),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());

  app.get('/healthz', { schema: { summary: 'Liveness and what is loaded', response: { 200: Type.Object({ status: Type.Literal('ok'), tools: Type.Integer(), modes: Type.Integer() }) } } }, () => ({
    status: 'ok' as const,
    tools: host.cradle.registry.size,
    modes: host.cradle.modeCatalog.modes.length,
  }));

  const ToolsQuery = Type.Object({
    mode: Type.Optional(Type.String({ description: "Only this mode's tools." })),
    sessionId: Type.Optional(Type.String({ description: "Only the tools of this session's current mode." })),
    format: Type.Optional(Format),
  });
  app.get('/v1/tools', { schema: { summary: 'The tool definitions, for a mode or a session', querystring: ToolsQuery, response: { 200: Type.Object({ format: Type.String(), tools: Type.Array(Type.Unknown()) }), 400: ErrorBody, 404: ErrorBody } } }, async (request, reply) => {
    const { mode, sessionId, format = 'responses' } = request.query;
    if (mode !== undefined && sessionId !== undefined) return reply.code(400).send({ error: { code: 'BAD_REQUEST', message: 'Give either mode or sessionId, not both.' } });
    const scope: ToolScope = { ...(mode === undefined ? {} : { mode }), ...(sessionId === undefined ? {} : { sessionId }) };
    try {
      return { format, tools: [...(await host.definitions(format, scope))] };
    } catch (error) {
      if (error instanceof ScopeError) return reply.code(error.code === 'UNKNOWN_MODE' ? 400 : 404).send({ error: { code: error.code, message: error.message } });
      throw error;
    }
  });

  app.get('/v1/tools/:name', { schema: { summary: 'One tool: schema, usage guidance and definitions', params: Type.Object({ name: Type.String() }), response: { 200: Type.Unknown(), 404: ErrorBody } } }, async (request, reply) => {
    const { registry } = host.cradle;
    const tool = registry.get(request.params.name);
    if (tool === undefined) return reply.code(404).send({ error: { code: 'TOOL_NOT_FOUND', message: `Tool "${request.params.name}" does not exist. Available tools: ${registry.names().join(', ')}.` } });
    const [responses] = registry.definitions('responses', [tool.name]);
    const [chat] = registry.definitions('chat', [tool.name]);
    const [mcp] = registry.definitions('mcp', [tool.name]);
    return { name: tool.name, description: tool.description, parameters: tool.parameters, usageMetadata: tool.usageMetadata, strict: tool.strict, annotations: tool.annotations ?? {}, definitions: { responses, chat, mcp } };
  });

  app.get('/v1/modes', { schema: { summary: 'The mode catalog' } }, () => ({ modes: host.modes() }));

  const InvokeBody = Type.Object(
    {
      arguments: Type.Union([Type.Object({}, { additionalProperties: true }), Type.String()], { description: 'The arguments, as an object or a JSON string.' }),
      context: Type.Optional(Type.Object({ sessionId: Type.Optional(Type.String({ minLength: 1 })), conversationId: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: false })),
    },
    { additionalProperties: false },
  );
  // Not an async function (a promise chain), which spares the route two awaits; see AptixHost.call.
  app.post('/v1/tools/:name/invoke', { schema: { summary: 'Call a tool', params: Type.Object({ name: Type.String() }), body: InvokeBody, response: { 200: InvokeResultBody, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody } } }, (request, reply) => {
    // A client that hangs up before the answer cancels the call (the tool's signal aborts). The signal
    // is made only for a call still running after its synchronous start: an AbortSignal costs about
    // 3 µs to make on Node 20, more than the rest of a small call.
    let abort: AbortController | undefined;
    let hungUp = false;
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return;
      hungUp = true;
      abort?.abort();
    });
    const signal = () => {
      abort ??= new AbortController();
      if (hungUp) abort.abort();
      return abort.signal;
    };
    const { sessionId, conversationId } = request.body.context ?? {};
    const options = { ...(sessionId === undefined ? {} : { sessionId }), ...(conversationId === undefined ? {} : { conversationId }), signal };
    const answered = host.call(request.params.name, request.body.arguments, options).then((outcome) => {
      if (outcome.kind === 'not_found') return reply.code(404).send({ error: { code: 'TOOL_NOT_FOUND', message: outcome.message } });
      if (outcome.kind === 'refused') return reply.code(outcome.code === 'SESSION_NOT_FOUND' ? 404 : 403).send({ error: { code: outcome.code, message: outcome.message } });
      const { result } = outcome;
      // The result is already JSON text (the executor checked it): splice it in rather than parse and re-serialise.
      const body = result.successful ? `{"successful":true,"result":${result.result},"errors":[]}` : JSON.stringify({ successful: false, result: null, errors: result.errors });
      return reply.code(200).type('application/json; charset=utf-8').serializer((payload) => payload as string).send(body as never);
    });
    // Fastify takes the reply itself as "already sent"; its route types only know the payload types.
    return answered as unknown as Promise<void>;
  });

  const CreateSession = Type.Object(
    { mode: Type.Optional(Type.String({ minLength: 1 })), org: Type.Optional(Type.String({ minLength: 1 })), user: Type.Optional(Type.String({ minLength: 1 })) },
    { additionalProperties: false },
  );
  app.post('/v1/sessions', { schema: { summary: 'Create an agent session', body: Type.Optional(CreateSession), response: { 201: SessionBody, 400: ErrorBody } } }, async (request, reply) => {
    try {
      return reply.code(201).send(await host.createSession(request.body ?? {}));
    } catch (error) {
      if (error instanceof ScopeError) return reply.code(400).send({ error: { code: error.code, message: error.message } });
      throw error;
    }
  });

  const SessionPage = Type.Object({ ...SessionBody.properties, nextCursor: Type.Union([Type.String(), Type.Null()]) });
  const PageQuery = Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, description: 'History rows in this page (default and maximum: the host\'s sessions.historyPageSize and sessions.maxHistoryPageSize).' })),
      cursor: Type.Optional(Type.String({ maxLength: 32, description: 'The nextCursor of the previous page; omit for the first page.' })),
    },
    { additionalProperties: false },
  );
  app.get(
    '/v1/sessions/:id',
    { schema: { summary: 'A session, its mode and one page of its mode history', params: Type.Object({ id: Type.String() }), querystring: PageQuery, response: { 200: SessionPage, 400: ErrorBody, 404: ErrorBody } } },
    async (request, reply) => {
      try {
        const session = await host.getSessionPage(request.params.id, request.query);
        if (session === undefined) return reply.code(404).send({ error: { code: 'SESSION_NOT_FOUND', message: `Session "${request.params.id}" does not exist.` } });
        return session;
      } catch (error) {
        if (error instanceof ScopeError) return reply.code(400).send({ error: { code: error.code, message: error.message } });
        throw error;
      }
    },
  );

  registerReasonerRoutes(app, host);
  const mcp = registerMcpRoutes(app, host, version, { idleMs: config.mcp.sessionIdleMs, maxSessions: config.mcp.maxSessions });
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
      await mcp.close();
      await app.close();
    },
  };
}

import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  legacyStatelessFallback,
  type ClientCapabilities,
} from '@modelcontextprotocol/server';
import { keepReadingTooLargeBody } from './errors.js';
import type { AnyFastifyInstance } from './fastify-instance.js';
import type { AptixHost } from '../aptix-host.js';
import { keptCapabilities, LegacySessions, SessionCapError, type LegacySession } from '../mcp/legacy-sessions.js';
import { createMcpServer, type McpScope } from '../mcp/mcp-server.js';
import { ScopeHandlers } from '../mcp/scope-handlers.js';
import { CALL_TOOL } from '../mcp/discovery.js';
import {
  AGENT_SESSION_HEADER,
  agentHeader,
  LaneOptions,
  modernScope,
  SessionScope,
  type Caller,
} from '../mcp/http-scopes.js';
import { fastLaneMessage, serveFastLane } from '../mcp/fast-lane.js';
import { tracedMcpHandler } from '../telemetry/mcp-spans.js';
import { observeMcpEndpoint } from '../telemetry/host-metrics.js';
import { cancelledByClient, LazyAbort } from '../mcp/lazy-abort.js';
import { withoutAnswerOnceCancelled } from '../mcp/cancelled-answer.js';
import { canBeAsked } from '../mcp/tool-input.js';
import { jsonRpcError, parseBody, requestId, send, toWebRequest, withBody } from './mcp-web.js';
import { ElicitationRelay, isClientResponse } from '../mcp/elicitation-relay.js';
import { paramHeaderRejection } from '../mcp/param-headers.js';
import { ResumableStreams } from '../mcp/resumable-streams.js';
import type { ResumableStreamsOptions } from '../mcp/stream-table.js';
import { watchListenRequest } from '../mcp/unit-subscriptions.js';
import { followForListeners } from '../mcp/unit-notifications.js';
import { hostUnits, unitScope } from '../units/unit-scope.js';

export { AGENT_SESSION_HEADER } from '../mcp/http-scopes.js';

export interface McpRoutesOptions {
  readonly idleMs: number;
  readonly maxSessions: number;
  /** Resumable response streams of 2025-11-25 sessions. */
  readonly streams?: Partial<ResumableStreamsOptions>;
  /** Serve plain tools/call and tools/list requests through the fast lane (see fast-lane.ts); default true. */
  readonly fastLane?: boolean;
}

/**
 * MCP over Streamable HTTP at `/mcp` and `/modes/<mode>/mcp` (also `/mcp/modes/<mode>`), through the v2 SDK.
 *
 * - 2026-07-28 requests (stateless) are served by the SDK's `createMcpHandler`, one server instance
 *   per request. The endpoint's URL decides the mode listed; `X-Aptix-Session-Id` names the agent
 *   session calls run in (see docs/mcp.md).
 * - 2025-era requests get sessions: `initialize` opens an MCP session bound to a persisted agent
 *   session (a new one, or the one named by `X-Aptix-Session-Id`). Each later request is answered by
 *   a fresh server instance over the SDK's stateless legacy transport, so a session costs no transport
 *   and survives a restart or a move to another host that shares the store.
 */
export function registerMcpRoutes(
  app: AnyFastifyInstance,
  host: AptixHost,
  version: string,
  options: McpRoutesOptions,
): { close(): Promise<void> } {
  // Resolved once: each read of host.cradle goes through the container's resolver.
  const { config, sessionManager, pino, registry, modeCatalog } = host.cradle;
  const sessions = new LegacySessions(sessionManager, options, Date.now, (error) =>
    pino.warn(
      { err: error },
      'Could not record an expired MCP session as closed in the session store; the store refuses it anyway once its last use is older than the idle limit plus the marking interval',
    ),
  );
  const onerror = (error: Error) => pino.debug({ err: error }, 'MCP request refused or failed');
  const maxRequestBodySize = config.bodyLimitBytes;
  /** In-flight 2025-era calls by session and JSON-RPC id, so `notifications/cancelled` (a separate request) reaches them. */
  const inFlight = new Map<string, { abort(): void }>();
  const scopes = new WeakMap<Request, McpScope>();
  /** Each request's logger (carrying its request id), for the calls it makes: passed down, never held in async context. */
  const logs = new WeakMap<Request, FastifyBaseLogger>();
  /** The API key name of each request (who asks, and who decides an approval over MCP). */
  const actors = new WeakMap<Request, string>();
  /** 2025 sessions: the approval question waiting for the client's answer, by session. */
  const relay = new ElicitationRelay();
  /** 2025-11-25 response streams a client can resume after its connection dropped. */
  const streams = new ResumableStreams(options.streams);
  const stopObserving = observeMcpEndpoint({ sessions: () => sessions.size, streams: () => streams.size });
  const logOf = (request: Request): Caller => ({ log: logs.get(request), actor: actors.get(request) });

  /** The mode a URL pins (`/modes/<mode>/mcp`, or the older `/mcp/modes/<mode>`), or undefined for `/mcp`. */
  const pinnedMode = (url: string): string | undefined => {
    const match = /^\/(?:mcp\/modes\/([^/?]+)|modes\/([^/?]+)\/mcp)\/?$/.exec(new URL(url).pathname);
    const key = match?.[1] ?? match?.[2];
    return key === undefined ? undefined : decodeURIComponent(key);
  };

  const modern = createMcpHandler(
    (ctx) => {
      const request = ctx.requestInfo!;
      const pinned = pinnedMode(request.url);
      const scope = modernScope(
        request.headers.get(AGENT_SESSION_HEADER),
        pinned ?? modeCatalog.defaultMode.key,
        logOf(request),
        pinned === undefined,
      );
      scopes.set(request, scope);
      return createMcpServer(host, scope, version);
    },
    { legacy: 'reject', onerror, maxRequestBodySize },
  );
  // 2026-07-28 clients listening on subscriptions/listen hear of list changes and resource updates.
  const stopFollowing = followForListeners(host, modern.notify);
  const units = hostUnits(host);

  const serveLegacySession = async (request: Request, session: LegacySession, body: unknown): Promise<Response> => {
    const id = requestId(body);
    const method = (body as { method?: unknown } | null)?.method;
    if (method === 'notifications/cancelled') {
      const cancelled = (body as { params?: { requestId?: unknown } }).params?.requestId;
      const call = inFlight.get(`${session.id}\u0000${String(cancelled)}`);
      if (call !== undefined) cancelledByClient.add(call);
      call?.abort();
    }
    const controller = new AbortController();
    const key = `${session.id}\u0000${String(id)}`;
    if (id !== null) inFlight.set(key, controller);
    const scope = new SessionScope(
      session,
      sessions,
      relay,
      logOf(request),
      pinnedMode(request.url) === undefined,
      controller.signal,
    );
    // A resumable answer outlives its connection: the call is served on a request the client's
    // disconnect does not abort (notifications/cancelled still does), and its events are kept.
    const resumable = streams.accepts(request, id !== null);
    try {
      const served = resumable ? new Request(request, { signal: null }) : request;
      const answered = await legacyStatelessFallback(() => createMcpServer(host, scope, version), onerror, {
        maxRequestBodySize,
      })(served, { parsedBody: body });
      scope.keep();
      // A request the client cancelled gets no response (the specification's SHOULD NOT): its answer is left out of the stream.
      // (A resumable stream leaves it out where it records the events.)
      const response =
        id === null || resumable
          ? answered
          : withoutAnswerOnceCancelled(answered, id, () => cancelledByClient.has(controller));
      const tracked = withBody(response, () => inFlight.delete(key));
      return resumable
        ? streams.record(session.id, tracked, request.signal, id, () => cancelledByClient.has(controller))
        : tracked;
    } catch (error) {
      inFlight.delete(key);
      throw error;
    }
  };

  const initialize = async (request: Request, body: unknown): Promise<Response> => {
    const requested = request.headers.get(AGENT_SESSION_HEADER)?.trim();
    if (requested) {
      const existing = await host.getSession(requested, actors.get(request));
      if (existing === undefined)
        return jsonRpcError(
          404,
          -32002,
          `Agent session ${requested} does not exist. Omit the ${AGENT_SESSION_HEADER} header to start a new one.`,
          requestId(body),
        );
    }
    if (sessions.size >= options.maxSessions) sessions.sweep();
    if (sessions.size >= options.maxSessions) return capReached(body);
    // A session opened at a mode's URL starts in that mode.
    const pinned = pinnedMode(request.url);
    const scope: McpScope = {
      era: 'legacy',
      agentSessionId: requested || undefined,
      discovery: pinned === undefined,
      ...logOf(request),
    };
    const response = await legacyStatelessFallback(() => createMcpServer(host, scope, version), onerror, {
      maxRequestBodySize,
    })(request, { parsedBody: body });
    // Only an initialize the SDK accepted opens a session, and only then is an agent session made.
    if (response.status !== 200) return response;
    let session: LegacySession;
    try {
      session = await sessions.open(
        requested || (await host.createSession(pinned === undefined ? {} : { mode: pinned }, actors.get(request))).id,
      );
    } catch (error) {
      if (error instanceof SessionCapError) return capReached(body);
      throw error;
    }
    const capabilities = keptCapabilities((body as { params?: { capabilities?: unknown } }).params?.capabilities);
    if (capabilities !== undefined) session.clientCapabilities = capabilities;
    const headers = new Headers(response.headers);
    headers.set('mcp-session-id', session.id);
    headers.set(AGENT_SESSION_HEADER, session.agentSessionId);
    return new Response(response.body, { status: response.status, headers });
  };

  const capReached = (body: unknown) =>
    jsonRpcError(503, -32000, sessions.capMessage(), requestId(body), { 'retry-after': '30' });

  const legacy = async (request: Request, text: string | undefined): Promise<Response> => {
    const parsed = parseBody(text);
    const header = request.headers.get('mcp-session-id');
    if (header === null) {
      if (request.method === 'POST' && parsed.ok && isInitializeRequest(parsed.value))
        return initialize(request, parsed.value);
      if (request.method === 'POST' && !parsed.ok)
        return jsonRpcError(
          400,
          -32700,
          'Parse error: the body is not valid JSON. Send one JSON-RPC message as application/json.',
        );
      const id = parsed.ok ? requestId(parsed.value) : null;
      return jsonRpcError(
        400,
        -32600,
        'No MCP session: send an initialize request first (without an Mcp-Session-Id header), or use protocol revision 2026-07-28, which needs no session.',
        id,
      );
    }
    const sessionId = header.trim();
    if (sessionId === '')
      return jsonRpcError(
        400,
        -32600,
        'The Mcp-Session-Id header is empty. Send the id the initialize response gave, or omit the header to initialize.',
      );
    const session = await sessions.find(sessionId).catch((error: unknown) => {
      if (error instanceof SessionCapError) return 'full' as const;
      throw error;
    });
    if (session === 'full') return capReached(parsed.ok ? parsed.value : undefined);
    if (session === undefined) {
      const agentSessionId = await sessionManager.getMcpBinding(sessionId);
      const hint = agentSessionId
        ? ` It was bound to agent session ${agentSessionId}: initialize a new MCP session with the header "X-Aptix-Session-Id: ${agentSessionId}" to continue in it.`
        : ' Initialize a new MCP session.';
      return jsonRpcError(
        404,
        -32001,
        `MCP session ${sessionId} is not open on this host (ended, expired or never opened).${hint}`,
        parsed.ok ? requestId(parsed.value) : null,
      );
    }
    const agentHeader = { [AGENT_SESSION_HEADER]: session.agentSessionId };
    if (request.method === 'DELETE') {
      await sessions.close(session.id);
      return new Response(null, { status: 200, headers: agentHeader });
    }
    if (request.method === 'GET') {
      const lastEventId = request.headers.get('last-event-id');
      if (lastEventId !== null) {
        const resumed = streams.resume(session.id, lastEventId);
        resumed.headers.set(AGENT_SESSION_HEADER, session.agentSessionId);
        return resumed;
      }
      // Every notification goes out on the stream of the request it belongs to; there is no standalone stream.
      return new Response(
        JSON.stringify({
          jsonrpc: '2.0',
          error: {
            code: -32000,
            message:
              'Method not allowed: this host sends no server-initiated messages outside a request; POST requests to /mcp.',
          },
          id: null,
        }),
        {
          status: 405,
          headers: { 'content-type': 'application/json', allow: 'POST, DELETE', ...agentHeader },
        },
      );
    }
    if (!parsed.ok)
      return jsonRpcError(
        400,
        -32700,
        'Parse error: the body is not valid JSON. Send one JSON-RPC message as application/json.',
      );
    // The client's answer to a question the host asked (an approval) goes to the call that waits for it.
    const answered = isClientResponse(parsed.value) ? relay.deliver(session.id, parsed.value) : undefined;
    const response = answered ?? (await serveLegacySession(request, session, parsed.value));
    const headers = new Headers(response.headers);
    headers.set(AGENT_SESSION_HEADER, session.agentSessionId);
    return new Response(response.body, { status: response.status, headers });
  };

  const serverInfo = { name: 'aptix', version };

  /**
   * Serves a plain tools/call or tools/list through the fast lane; false when the SDK must serve the
   * request (anything else, including every request the SDK would refuse), before anything ran.
   * The SDK also keeps: a call from a client that declared form elicitation, sampling or roots (a
   * tool may ask it mid-call), and a tool that can run as a task. A 2025-11-25 answer is a resumable stream
   * (see resumable-streams.ts), as on the SDK path.
   */
  const fastLane = async (
    request: FastifyRequest<{ Params: { mode?: string } }>,
    reply: FastifyReply,
    body: unknown,
    abort: LazyAbort,
  ): Promise<boolean> => {
    const sessionHeader = request.headers['mcp-session-id'];
    const params = (body as { params?: { name?: unknown; arguments?: { name?: unknown } } }).params;
    // A call through aptix_call_tool runs the tool it names: a tool that can run as a task needs the SDK path either way.
    const name =
      params !== undefined && params.name === CALL_TOOL && request.params.mode === undefined
        ? params.arguments?.name
        : params?.name;
    if (typeof name === 'string' && (registry.get(name)?.taskSupport ?? 'forbidden') !== 'forbidden') return false;
    // A 2026-07-28 list carries cache fields only while the tools cannot change (no bridged server): the SDK fills the rest.
    const listCacheHint = !host.toolsMayChange;
    if (sessionHeader === undefined) {
      const message = fastLaneMessage('modern', request.headers, body);
      if (
        message === undefined ||
        canBeAsked(message.envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)
      )
        return false;
      // SEP-2243: a call whose Mcp-Param-* headers disagree with its arguments gets the SDK path's refusal.
      if (
        paramHeaderRejection(registry, body, {
          get: (header: string) => headerValue(request.headers, header),
        } as Headers) !== undefined
      )
        return false;
      const header = request.headers[AGENT_SESSION_HEADER];
      const pinned = request.params.mode;
      const scope = modernScope(
        typeof header === 'string' ? header : header?.join(', '),
        pinned ?? modeCatalog.defaultMode.key,
        request,
        pinned === undefined,
      );
      return serveFastLane(
        reply,
        message,
        new ScopeHandlers(host, scope),
        new LaneOptions(serverInfo, listCacheHint, abort, scope),
      );
    }
    const sessionId = typeof sessionHeader === 'string' ? sessionHeader.trim() : '';
    const version = headerValue(request.headers, 'mcp-protocol-version');
    if (sessionId === '' || (version ?? '') > '2025-11-25') return false;
    const message = fastLaneMessage('legacy', request.headers, body);
    if (message === undefined) return false;
    const session = sessions.findLive(sessionId) ?? (await sessions.find(sessionId).catch(() => undefined));
    if (session === undefined || canBeAsked(session.clientCapabilities)) return false;
    // 2025-11-25: a resumable answer, as on the SDK path (see serveLegacySession); its call outlives the connection.
    const resumable = streams.acceptsHeaders(version, headerValue(request.headers, 'accept'), true);
    // One signal for the client going away (unless the answer is resumable) and for notifications/cancelled
    // (no AbortSignal.any per call); a cancelled call still answers, as through the SDK.
    const cancel = resumable ? new LazyAbort() : abort;
    const key = `${session.id}\u0000${String(message.id)}`;
    inFlight.set(key, cancel);
    const scope = new SessionScope(session, sessions, relay, request, request.params.mode === undefined);
    try {
      const options = new LaneOptions(
        serverInfo,
        listCacheHint,
        cancel,
        scope,
        resumable ? streams : undefined,
        session.id,
      );
      return await serveFastLane(reply, message, new ScopeHandlers(host, scope), options);
    } finally {
      scope.keep();
      if (inFlight.get(key) === cancel) inFlight.delete(key);
    }
  };

  const handle = async (request: FastifyRequest<{ Params: { mode?: string } }>, reply: FastifyReply) => {
    const abort = new LazyAbort(reply.raw);
    const mode = request.params.mode;
    if (mode !== undefined && modeCatalog.getMode(mode) === undefined) {
      return send(
        reply,
        jsonRpcError(
          404,
          -32602,
          `Mode "${mode}" does not exist. Modes: ${modeCatalog.keys.join(', ')}. Each is served at /modes/<mode>/mcp; /mcp serves the default mode and finds every mode's tools.`,
        ),
      );
    }
    const text = request.body as string | undefined;
    const parsed = parseBody(text);
    if (
      options.fastLane !== false &&
      request.method === 'POST' &&
      parsed.ok &&
      parsed.value !== undefined &&
      (await fastLane(request, reply, parsed.value, abort))
    )
      return reply;
    const web = toWebRequest(request, abort.signal);
    logs.set(web, request.log);
    if (request.actor !== undefined) actors.set(web, request.actor);
    // The predicate clones the request itself when it has to read the body.
    if (await isLegacyRequest(web, parsed.ok ? parsed.value : undefined, { maxRequestBodySize })) {
      return send(reply, await legacy(web, text));
    }
    // SEP-2243: the Mcp-Param-* headers a gateway routed on must match the arguments the tool gets.
    const mismatch = parsed.ok ? paramHeaderRejection(registry, parsed.value, web.headers) : undefined;
    if (mismatch !== undefined) return send(reply, mismatch);
    if (parsed.ok)
      watchListenRequest(
        units,
        parsed.value,
        async (uri) =>
          units?.resolve(uri, await unitScope(host, { mode: request.params.mode }, request.actor)) !== undefined,
        web.signal,
      );
    const response = await modern.fetch(
      web,
      parsed.ok && parsed.value !== undefined ? { parsedBody: parsed.value } : {},
    );
    const scope = scopes.get(web);
    return send(reply, response, scope ? agentHeader(scope) : {});
  };

  void app.register(async (scope) => {
    // The SDK reads the body itself: a body Fastify cannot parse must still get a JSON-RPC answer.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    scope.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
      const status = error.statusCode ?? 500;
      if (status >= 500) request.log.error({ err: error }, 'MCP request failed');
      if (status === 413) keepReadingTooLargeBody(request, reply, maxRequestBodySize);
      const message =
        status === 413
          ? `The request body is larger than the limit of ${maxRequestBodySize} bytes.`
          : status >= 500
            ? 'The host failed to answer this request. See the host logs for the request id.'
            : error.message;
      return reply
        .code(status)
        .send({ jsonrpc: '2.0', error: { code: status >= 500 ? -32603 : -32600, message }, id: null });
    });
    // /modes/<mode>/mcp ends in /mcp, so clients that pick the transport from the path (the Inspector) take it for Streamable HTTP; /mcp/modes/<mode> is the older spelling.
    for (const url of ['/mcp', '/modes/:mode/mcp', '/mcp/modes/:mode']) {
      scope.route({
        method: ['GET', 'POST', 'DELETE'],
        url,
        schema: { hide: true },
        handler: tracedMcpHandler(handle),
      });
    }
  });

  return {
    async close() {
      for (const controller of inFlight.values()) controller.abort();
      inFlight.clear();
      relay.clear();
      sessions.clear();
      streams.clear();
      stopFollowing();
      units?.watches.close();
      stopObserving();
      await modern.close();
    },
  };
}

/** A request header as the web `Headers.get` gives it: repeated values joined, null when absent. */
function headerValue(headers: FastifyRequest['headers'], name: string): string | null {
  const value = headers[name.toLowerCase()];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

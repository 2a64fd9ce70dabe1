/**
 * The server's own route table, as a test enumerates it: an in-process host (built the way
 * http-security's "a route added later" builds one) whose HttpServer lists every route and method it
 * registered (Fastify's onRoute), each turned into a real request with its parameters filled in and a
 * minimal body. A route added later is enumerated without anyone listing it. For the authorization
 * tests: 401 without a key (http-routes-auth.test.ts), and what a principal may not do.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { AptixHost } from '../src/aptix-host.js';
import { loadConfig } from '../src/config.js';
import { composeHost } from '../src/container.js';
import { createHttpServer, type HttpServer, type RegisteredRoute } from '../src/http/server.js';
import { scratch } from './support.js';

export type { RegisteredRoute };

/** A host serving HTTP in this process, on a free loopback port. */
export interface RouteHost {
  readonly url: string;
  readonly server: HttpServer;
  close(): Promise<void>;
}

/** What a route host starts with: its environment (APTIX_API_KEYS…), its configuration file's fields (principals…), and a last step on the server before it listens (to add a route, say). */
export interface RouteHostOptions {
  readonly env?: Record<string, string>;
  readonly file?: Record<string, unknown>;
  readonly configure?: (server: HttpServer) => void;
  /** The port to listen on (default: a free one picked by the system). */
  readonly port?: number;
}

/**
 * Starts an in-process host listening on loopback, its database a scratch SQLite file.
 *
 * @example
 * const routes = await startRouteHost({ env: { APTIX_API_KEYS: `ops=${KEY}` } });
 * for (const route of protectedRoutes(routes.server.routes)) expect((await send(routes.url, requestFor(route))).status).toBe(401);
 */
export async function startRouteHost(options: RouteHostOptions = {}): Promise<RouteHost> {
  const space = scratch();
  const file = join(space.dir, 'aptix.config.json');
  if (options.file !== undefined) writeFileSync(file, JSON.stringify(options.file));
  const config = await loadConfig({
    env: { APTIX_DB: space.db, ...options.env },
    cwd: space.dir,
    ...(options.file === undefined ? {} : { file }),
  });
  const host = new AptixHost(await composeHost(config, { pino: pino({ level: 'silent' }) }));
  const server = await createHttpServer(host, '0.0.0-test');
  options.configure?.(server);
  const url = await server.app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  return {
    url,
    server,
    async close() {
      await server.close();
      await host.close();
      space.cleanup();
    },
  };
}

/**
 * The routes anyone may call, as docs/hosting.md documents them: liveness, readiness, the OpenAPI
 * document, the API docs and their assets, the console's static files, and the OAuth Protected
 * Resource Metadata (served only by a host with `oauth`). Kept here rather than read
 * from security.ts (PUBLIC_ROUTES, PUBLIC_ROUTE_PREFIXES, which a test holds equal to these): a route
 * made public there by mistake is then still enumerated, and fails.
 */
export const DOCUMENTED_PUBLIC_ROUTES: readonly string[] = ['/healthz', '/readyz', '/openapi.json'];
export const DOCUMENTED_PUBLIC_PREFIXES: readonly string[] = [
  '/docs',
  '/console',
  '/.well-known/oauth-protected-resource',
];

/** Whether a route pattern is on the documented public list. */
export function isDocumentedPublic(url: string): boolean {
  return (
    DOCUMENTED_PUBLIC_ROUTES.includes(url) ||
    DOCUMENTED_PUBLIC_PREFIXES.some((prefix) => url === prefix || url.startsWith(`${prefix}/`))
  );
}

/** Every registered route and method but the documented public ones, each once. */
export function protectedRoutes(routes: readonly RegisteredRoute[]): RegisteredRoute[] {
  const seen = new Set<string>();
  return routes.filter((route) => {
    const id = `${route.method} ${route.url}`;
    if (isDocumentedPublic(route.url) || seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** A concrete request for a route: each `:param` a fresh random id, a wildcard a path segment, a JSON body where one may go. */
export interface RouteRequest {
  readonly method: string;
  readonly path: string;
  readonly body: string | undefined;
}

export function requestFor(route: RegisteredRoute): RouteRequest {
  const path = route.url.replace(/:[A-Za-z0-9_]+/g, () => `r${randomUUID().slice(0, 8)}`).replace(/\*/g, 'anything');
  const body = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method) ? '{}' : undefined;
  return { method: route.method, path, body };
}

/** The answer to a request: status, the error code of an Aptix error body, and the headers. */
export interface RouteAnswer {
  readonly status: number;
  readonly code: string | undefined;
  readonly headers: Headers;
}

/** Sends `request` over real HTTP, with `Authorization: Bearer <key>` when a key is given; an SSE answer is not read past its headers. */
export async function send(url: string, request: RouteRequest, key?: string): Promise<RouteAnswer> {
  const response = await fetch(url + request.path, {
    method: request.method,
    headers: {
      accept: 'application/json, text/event-stream',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(request.body === undefined ? {} : { body: request.body }),
    signal: AbortSignal.timeout(10_000),
  });
  let code: string | undefined;
  if ((response.headers.get('content-type') ?? '').startsWith('application/json')) {
    const body = (await response.json().catch(() => undefined)) as { error?: { code?: unknown } } | undefined;
    code = typeof body?.error?.code === 'string' ? body.error.code : undefined;
  } else {
    await response.body?.cancel();
  }
  return { status: response.status, code, headers: response.headers };
}

/**
 * What each protected route asks of a principal (the 403 half of issue 32's route test). Every route
 * the host registers, but the public ones, is in exactly one class, or the test fails naming it: a route
 * added later must be put here deliberately, with what it needs.
 *
 * - `forbidden`: a principal without the permission gets 403 FORBIDDEN naming it. Each entry builds a
 *   request that reaches the permission check (a real tool, a pending approval of someone else's).
 * - `ownSessions`: the route is on one agent session; another principal's session answers 404
 *   SESSION_NOT_FOUND, as a missing one does (no oracle for ids), never 403.
 * - `scoped`: any principal may call it, and the answer holds only what that principal may see or do,
 *   with the reason (a list filtered to its permissions, a session of its own, MCP's own refusals).
 */
export interface RouteClasses {
  readonly forbidden: Readonly<Record<string, { readonly permission: string; readonly request: RouteRequest }>>;
  readonly ownSessions: Readonly<Record<string, RouteRequest>>;
  readonly scoped: Readonly<Record<string, string>>;
}

/** The classes, given a pending approval another principal asked for and a session another principal owns. */
export function routeClasses(others: { readonly approvalId: string; readonly sessionId: string }): RouteClasses {
  const get = (path: string): RouteRequest => ({ method: 'GET', path, body: undefined });
  const head = (path: string): RouteRequest => ({ method: 'HEAD', path, body: undefined });
  const post = (path: string, body: unknown): RouteRequest => ({ method: 'POST', path, body: JSON.stringify(body) });
  const mcp =
    'every principal may connect; what it lists and calls is held to its permissions (oauth-resource-server, permissions and mcp tests)';
  return {
    forbidden: {
      'GET /v1/tools/:name': { permission: 'tools: testing_calculator', request: get('/v1/tools/testing_calculator') },
      'HEAD /v1/tools/:name': { permission: '', request: head('/v1/tools/testing_calculator') },
      'POST /v1/tools/:name/invoke': {
        permission: 'tools: testing_calculator',
        request: post('/v1/tools/testing_calculator/invoke', { arguments: { operation: 'add', a: 1, b: 2 } }),
      },
      'GET /v1/packages': { permission: 'admin', request: get('/v1/packages') },
      'HEAD /v1/packages': { permission: '', request: head('/v1/packages') },
      'GET /v1/approvals': { permission: 'admin', request: get('/v1/approvals') },
      'HEAD /v1/approvals': { permission: '', request: head('/v1/approvals') },
      'POST /v1/approvals/:id': {
        permission: 'approve',
        request: post(`/v1/approvals/${others.approvalId}`, { decision: 'approve' }),
      },
      'GET /v1/audit': { permission: 'admin', request: get('/v1/audit') },
      'HEAD /v1/audit': { permission: '', request: head('/v1/audit') },
      'GET /v1/audit/:id': { permission: 'admin', request: get('/v1/audit/any-record') },
      'HEAD /v1/audit/:id': { permission: '', request: head('/v1/audit/any-record') },
      'GET /metrics': { permission: 'admin', request: get('/metrics') },
      'HEAD /metrics': { permission: '', request: head('/metrics') },
    },
    ownSessions: {
      'GET /v1/sessions/:id': get(`/v1/sessions/${others.sessionId}`),
      'HEAD /v1/sessions/:id': head(`/v1/sessions/${others.sessionId}`),
      'POST /v1/sessions/:id/messages': post(`/v1/sessions/${others.sessionId}/messages`, { input: 'hello' }),
      'POST /v1/sessions/:id/tool-outputs': post(`/v1/sessions/${others.sessionId}/tool-outputs`, {
        outputs: [{ callId: 'call-1', output: 'done' }],
      }),
      'POST /v1/sessions/:id/resume': post(`/v1/sessions/${others.sessionId}/resume`, {}),
    },
    scoped: {
      'GET /v1/tools': 'lists only the tools the principal may call',
      'HEAD /v1/tools': 'as GET',
      'GET /v1/modes':
        'the mode catalog: names and descriptions, the same for every principal (modes limits moving into one)',
      'HEAD /v1/modes': 'as GET',
      'POST /v1/sessions': 'makes a session the principal owns',
      'GET /v1/principal': 'tells the principal its own name and permissions, nothing of others',
      'HEAD /v1/principal': 'as GET',
      'GET /v1/prompts': 'lists what its permissions allow, as over MCP',
      'HEAD /v1/prompts': 'as GET',
      'POST /v1/prompts/:name': 'renders what its permissions allow, as over MCP',
      'GET /v1/resources': 'lists what its permissions allow, as over MCP',
      'HEAD /v1/resources': 'as GET',
      'GET /v1/resources/read': 'reads what its permissions allow, as over MCP',
      'HEAD /v1/resources/read': 'as GET',
      'GET /v1/approvals/:id': 'an approval in a session the principal may not see answers 404, as a missing one',
      'HEAD /v1/approvals/:id': 'as GET',
      'GET /mcp': mcp,
      'POST /mcp': mcp,
      'DELETE /mcp': mcp,
      'HEAD /mcp': mcp,
      'GET /modes/:mode/mcp': mcp,
      'POST /modes/:mode/mcp': mcp,
      'DELETE /modes/:mode/mcp': mcp,
      'HEAD /modes/:mode/mcp': mcp,
      'GET /mcp/modes/:mode': mcp,
      'POST /mcp/modes/:mode': mcp,
      'DELETE /mcp/modes/:mode': mcp,
      'HEAD /mcp/modes/:mode': mcp,
    },
  };
}

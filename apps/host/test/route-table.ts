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

/**
 * A test that cannot miss a route (issue 32): every route and method the host registers, taken from
 * the server's own route table rather than a list kept here, answers 401 without a key and with a
 * wrong key, and 403 to a principal without the permission it needs (or is classed in route-table.ts
 * as on the principal's own sessions, or scoped to what it may see), except the documented public ones (route-table.ts, held equal to PUBLIC_ROUTES and
 * PUBLIC_ROUTE_PREFIXES in src/http/security.ts). Made public by mistake, a route answers something
 * else and this fails; a route added later is checked without anyone adding it. The same table serves
 * a check per principal (see route-table.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicRoute, PUBLIC_ROUTE_PREFIXES, PUBLIC_ROUTES } from '../src/http/security.js';
import {
  DOCUMENTED_PUBLIC_PREFIXES,
  DOCUMENTED_PUBLIC_ROUTES,
  isDocumentedPublic,
  protectedRoutes,
  requestFor,
  routeClasses,
  send,
  startRouteHost,
  type RegisteredRoute,
  type RouteHost,
} from './route-table.js';

const KEY = 'ops-key-0123456789abcdef0123';
const WRONG = 'not-the-key-0123456789abcdef';
const id = (route: RegisteredRoute) => `${route.method} ${route.url}`;

describe('every route the host registers needs the key', () => {
  let routes: RouteHost;

  beforeAll(async () => {
    routes = await startRouteHost({
      // The key in the configuration file, where principals go too.
      file: { apiKeys: [`ops=${KEY}`] },
      // A route added after the host's own, as a later change would add one.
      configure: (server) => server.app.get('/v2/added-later/:thing', () => ({ secret: 'added-later-data' })),
    });
  });
  afterAll(async () => {
    await routes?.close();
  });

  it('the public list in security.ts is the documented one: a route made public is a deliberate change, here and in docs/hosting.md', () => {
    expect(PUBLIC_ROUTES).toEqual(DOCUMENTED_PUBLIC_ROUTES);
    expect(PUBLIC_ROUTE_PREFIXES).toEqual(DOCUMENTED_PUBLIC_PREFIXES);
    // And the guard's decision agrees with the list, route by route.
    for (const route of routes.server.routes)
      expect(isPublicRoute(route.url), id(route)).toBe(isDocumentedPublic(route.url));
  });

  it("the table is the router's: it holds the routes of every module, the HEAD of each GET, and a route added later", () => {
    const ids = protectedRoutes(routes.server.routes).map(id);
    expect(ids).toEqual(
      expect.arrayContaining([
        'GET /v1/tools',
        'HEAD /v1/tools',
        'POST /v1/tools/:name/invoke',
        'POST /v1/sessions',
        'GET /v1/sessions/:id',
        'POST /v1/sessions/:id/resume',
        'GET /v1/approvals',
        'POST /v1/approvals/:id',
        'POST /mcp',
        'DELETE /mcp/modes/:mode',
        'GET /v2/added-later/:thing',
      ]),
    );
    // The public routes are in the table too, only left out of the check.
    expect(routes.server.routes.map(id)).toEqual(
      expect.arrayContaining(['GET /healthz', 'GET /docs', 'GET /console/*']),
    );
  });

  it('each of them answers 401 UNAUTHORIZED, with WWW-Authenticate, without a key and with a wrong key', async () => {
    const wrong: string[] = [];
    for (const route of protectedRoutes(routes.server.routes)) {
      const request = requestFor(route);
      for (const [who, key] of [
        ['no key', undefined],
        ['a wrong key', WRONG],
      ] as const) {
        const answer = await send(routes.url, request, key);
        // A HEAD answer has no body to carry the code.
        const ok =
          answer.status === 401 &&
          (route.method === 'HEAD' || answer.code === 'UNAUTHORIZED') &&
          answer.headers.get('www-authenticate') === 'Bearer realm="aptix"';
        if (!ok)
          wrong.push(
            `${id(route)} as ${request.method} ${request.path}, with ${who}: ${answer.status} ${answer.code ?? ''}`,
          );
      }
    }
    expect(wrong).toEqual([]);
  });

  it('with the key, each request reaches its route (so none of those 401s was an unmatched URL answered 401)', async () => {
    const unmatched: string[] = [];
    for (const route of protectedRoutes(routes.server.routes)) {
      const request = requestFor(route);
      const answer = await send(routes.url, request, KEY);
      // The router's own 404 is NOT_FOUND (a HEAD shows it only as a 404 with no body); a route's own 404 names what it did not find.
      if (
        answer.status === 401 ||
        answer.code === 'NOT_FOUND' ||
        (route.method === 'HEAD' && answer.status === 404 && answer.code === undefined && !(await sameAsGet(request)))
      ) {
        unmatched.push(`${id(route)} as ${request.method} ${request.path}: ${answer.status} ${answer.code ?? ''}`);
      }
    }
    expect(unmatched).toEqual([]);
  });

  /** Whether the GET of a HEAD request's path answers a route's own 404 (not the router's), so the HEAD matched as well. */
  async function sameAsGet(request: { path: string }): Promise<boolean> {
    const answer = await send(routes.url, { method: 'GET', path: request.path, body: undefined }, KEY);
    return answer.status === 404 && answer.code !== 'NOT_FOUND';
  }
});

describe('every route the host registers answers 403 to a principal without the permission it needs', () => {
  const NOBODY = 'nobody-key-0123456789abcdef';
  let routes: RouteHost;
  let classes: ReturnType<typeof routeClasses>;

  beforeAll(async () => {
    routes = await startRouteHost({
      // nobody may do nothing; ops (no entry) may do everything, and asks for a refund nobody may not decide.
      file: { apiKeys: [`ops=${KEY}`, `nobody=${NOBODY}`], principals: { nobody: { tools: [], modes: [] } } },
      // A route added later that nobody classed: the first test must name it.
      configure: (server) => server.app.get('/v2/unclassed', () => ({ secret: 'unclassed-data' })),
    });
    const asOps = (path: string, body: unknown) =>
      fetch(routes.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((response) => response.json() as Promise<{ id?: string; approvalId?: string }>);
    const sessionId = (await asOps('/v1/sessions', { mode: 'tool_diagnostics' })).id!;
    const approvalId = (
      await asOps('/v1/tools/testing_issue_refund/invoke', {
        arguments: { orderId: 'ROUTES-1', amount: 5000, currency: 'EUR' },
      })
    ).approvalId!;
    classes = routeClasses({ approvalId, sessionId });
  });
  afterAll(async () => {
    await routes?.close();
  });

  it('each route is in exactly one class: a route added later fails here until someone says what it needs', () => {
    const unclassified: string[] = [];
    for (const route of protectedRoutes(routes.server.routes)) {
      const found = [classes.forbidden, classes.ownSessions, classes.scoped].filter((table) => id(route) in table);
      if (found.length !== 1) unclassified.push(`${id(route)} (in ${found.length} classes)`);
    }
    expect(unclassified).toEqual(['GET /v2/unclassed (in 0 classes)', 'HEAD /v2/unclassed (in 0 classes)']);
  });

  it('each permission-gated route answers 403 FORBIDDEN naming the permission, never the key', async () => {
    const wrong: string[] = [];
    for (const route of protectedRoutes(routes.server.routes)) {
      const entry = classes.forbidden[id(route)];
      if (entry === undefined) continue;
      const response = await fetch(routes.url + entry.request.path, {
        method: entry.request.method,
        headers: {
          authorization: `Bearer ${NOBODY}`,
          ...(entry.request.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(entry.request.body === undefined ? {} : { body: entry.request.body }),
      });
      const text = await response.text();
      const ok =
        response.status === 403 &&
        !text.includes(NOBODY) &&
        (route.method === 'HEAD' ||
          (text.includes('"code":"FORBIDDEN"') && text.includes(`the permission ${entry.permission}`)));
      if (!ok) wrong.push(`${id(route)}: ${response.status} ${text.slice(0, 200)}`);
    }
    expect(wrong).toEqual([]);
  });

  it("each route on one agent session answers another principal's session 404 SESSION_NOT_FOUND, as a missing one", async () => {
    const wrong: string[] = [];
    for (const route of protectedRoutes(routes.server.routes)) {
      const request = classes.ownSessions[id(route)];
      if (request === undefined) continue;
      const answer = await send(routes.url, request, NOBODY);
      if (answer.status !== 404 || (route.method !== 'HEAD' && answer.code !== 'SESSION_NOT_FOUND'))
        wrong.push(`${id(route)}: ${answer.status} ${answer.code ?? ''}`);
    }
    expect(wrong).toEqual([]);
  });
});

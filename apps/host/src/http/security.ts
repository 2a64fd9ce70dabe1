import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKey } from '../api-keys.js';
import { isLoopback, type AptixConfig } from '../config.js';
import { sendError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The name of the API key that authenticated the request (never the key); undefined on a host without keys or on a public route. */
    actor: string | undefined;
  }
}

const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/**
 * The routes anyone may call, by the route pattern Fastify matched (never by the raw URL): liveness,
 * readiness and the API's description. Every other route, including one added later, needs a key.
 */
export const PUBLIC_ROUTES: readonly string[] = ['/healthz', '/readyz', '/openapi.json'];
/**
 * The API docs (Swagger UI, its assets and its copy of the OpenAPI document) are public too, and so are
 * the console's static files: the page asks for the key itself, and shows only what the /v1 API gives it.
 * So is the OAuth Protected Resource Metadata (auth/resource-server.ts), which a client reads before it has a token.
 */
export const PUBLIC_ROUTE_PREFIXES: readonly string[] = ['/docs', '/console', '/.well-known/oauth-protected-resource'];

/** Whether the matched route (undefined when none matched) may be called without a key. */
export function isPublicRoute(route: string | undefined): boolean {
  if (route === undefined) return false;
  return (
    PUBLIC_ROUTES.includes(route) ||
    PUBLIC_ROUTE_PREFIXES.some((prefix) => route === prefix || route.startsWith(`${prefix}/`))
  );
}

/** How often a header was sent: Node joins or drops repeated headers, `rawHeaders` keeps them all. */
export function headerCount(request: FastifyRequest, name: string): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) count += 1;
  return count;
}

/**
 * Refuses requests whose Host (or Origin, when sent) is not one this host serves, so a web page
 * cannot reach a loopback host through DNS rebinding (the MCP specification asks this of local servers).
 * An Origin must equal a served origin exactly, scheme and port included; `Origin: null` (sandboxed
 * frames, files) is refused unless `allowedOrigins` lists "null". A host bound to every interface
 * accepts any Host unless `allowedHosts` narrows it; the API key guards it.
 */
export function hostGuard(config: AptixConfig, port: () => number) {
  const wildcard = WILDCARD.has(config.host);
  const bound = new Set<string>();
  if (!wildcard)
    bound.add(
      config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host.toLowerCase(),
    );
  if (isLoopback(config.host)) for (const name of ['localhost', '127.0.0.1', '[::1]']) bound.add(name);
  const checkHost = !wildcard || config.allowedHosts.length > 0;
  const allowedOrigins = new Set(config.allowedOrigins.map((origin) => origin.toLowerCase()));
  // The served names depend on the port, known once the server listens: built once per port, not per request.
  let servedFor = -1;
  let hosts = new Set<string>();
  let origins = new Set<string>();
  const build = (listening: number) => {
    servedFor = listening;
    const bare = [...bound, ...config.allowedHosts.map((name) => name.toLowerCase())];
    hosts = new Set(bare.flatMap((name) => [name, `${name}:${listening}`]));
    origins = new Set([
      ...[...bound].flatMap((name) => [`http://${name}:${listening}`, ...(listening === 80 ? [`http://${name}`] : [])]),
      // A public name behind a proxy, as browsers see it (the proxy may terminate TLS).
      ...config.allowedHosts.flatMap((name) => [`http://${name.toLowerCase()}`, `https://${name.toLowerCase()}`]),
      ...allowedOrigins,
    ]);
  };
  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (servedFor !== port()) build(port());
    if (headerCount(request, 'host') > 1)
      return void sendError(reply, 'DUPLICATE_HEADER', 'The request has more than one Host header. Send exactly one.');
    const host = request.headers.host?.toLowerCase();
    if (checkHost && (host === undefined || !hosts.has(host))) {
      return void sendError(
        reply,
        'HOST_NOT_ALLOWED',
        `Host "${request.headers.host ?? ''}" is not served here. Use one of: ${[...hosts].join(', ')}, or add it to allowedHosts in the configuration.`,
      );
    }
    const origin = request.headers.origin?.toLowerCase();
    if (origin !== undefined) {
      const allowed = checkHost
        ? origins.has(origin)
        : allowedOrigins.has(origin) || origin === `http://${host}` || origin === `https://${host}`;
      if (!allowed) {
        const why =
          origin === 'null'
            ? 'an opaque origin ("null", sent by sandboxed frames and files) cannot be told apart from any other page'
            : 'it is not an origin this host serves';
        return void sendError(
          reply,
          'ORIGIN_NOT_ALLOWED',
          `Origin "${request.headers.origin}" may not call this host: ${why}. Add it to allowedOrigins in the configuration if it should.`,
        );
      }
    }
    done();
  };
}

/**
 * `Authorization: Bearer <key>`, required on every route but the public ones, decided by the route
 * Fastify matched, so no spelling of a URL (percent-encoding, absolute form) can reach a route
 * unchecked. A request that matched no route needs the key too: without it the answer is 401, so
 * the 404 (and its hints) tell nothing about which routes exist. The key is compared in constant
 * time against every accepted key; the matching key's name becomes `request.actor` and is added to
 * every log line of the request.
 */
export function apiKeyGuard(keys: readonly ApiKey[]) {
  const matchKey = keyMatcher(keys);
  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (isPublicRoute(request.routeOptions.url)) return done();
    if (refuseDuplicateAuthorization(request, reply)) return;
    const given = bearerToken(request);
    const actor = given === undefined ? undefined : matchKey(given);
    if (actor === undefined) {
      void reply.header('www-authenticate', 'Bearer realm="aptix"');
      return void sendError(
        reply,
        'UNAUTHORIZED',
        'This host requires an API key: send the header "Authorization: Bearer <key>".',
      );
    }
    actAs(request, reply, actor);
    done();
  };
}

/** Answers 400 when the request has more than one Authorization header; true when it did. */
export function refuseDuplicateAuthorization(request: FastifyRequest, reply: FastifyReply): boolean {
  if (headerCount(request, 'authorization') <= 1) return false;
  void sendError(
    reply,
    'DUPLICATE_HEADER',
    'The request has more than one Authorization header. Send exactly one: "Authorization: Bearer <key>".',
  );
  return true;
}

/** The credential of `Authorization: Bearer <credential>`, or undefined when the header is missing or malformed. */
export function bearerToken(request: FastifyRequest): string | undefined {
  return /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1];
}

/**
 * The name of the accepted key equal to `given`, or undefined. Every key is compared, matched or
 * not, in constant time, so the time taken does not say which one matched.
 */
export function keyMatcher(keys: readonly ApiKey[]): (given: string) => string | undefined {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  const expected = keys.map(({ name, key }) => ({ name, digest: digest(key) }));
  return (given) => {
    const hashed = digest(given);
    let actor: string | undefined;
    for (const candidate of expected)
      if (timingSafeEqual(hashed, candidate.digest) && actor === undefined) actor = candidate.name;
    return actor;
  };
}

/** Makes `actor` the request's principal: from here on the request's lines (and its calls') name it. */
export function actAs(request: FastifyRequest, reply: FastifyReply, actor: string): void {
  request.actor = actor;
  request.log = reply.log = request.log.child({ actor });
}

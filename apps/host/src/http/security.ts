import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopback, type AptixConfig } from '../config.js';

const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/**
 * Refuses requests whose Host (or Origin, when sent) is not an address this host serves, so a web page
 * cannot reach a loopback host through DNS rebinding (the MCP specification asks this of local servers).
 * A host bound to every interface accepts any Host unless `allowedHosts` narrows it; the API key guards it.
 */
export function hostGuard(config: AptixConfig, port: () => number) {
  const wildcard = WILDCARD.has(config.host);
  const hostnames = new Set<string>([...config.allowedHosts]);
  if (!wildcard) hostnames.add(config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host);
  if (isLoopback(config.host)) for (const name of ['localhost', '127.0.0.1', '[::1]']) hostnames.add(name);
  const checkHost = !wildcard || config.allowedHosts.length > 0;
  // The served names depend on the port, known once the server listens: built once per port, not per request.
  let servedFor = -1;
  let served: string[] = [];
  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (servedFor !== port()) {
      servedFor = port();
      served = [...hostnames].flatMap((name) => [name, `${name}:${servedFor}`]);
    }
    const host = request.headers.host;
    if (checkHost && (host === undefined || !served.includes(host.toLowerCase()))) {
      void reply.code(403).send({ error: { code: 'HOST_NOT_ALLOWED', message: `Host "${host ?? ''}" is not served here. Use one of: ${served.join(', ')}, or add it to allowedHosts in the configuration.` } });
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== 'null') {
      let originHost: string;
      try {
        originHost = new URL(origin).host.toLowerCase();
      } catch {
        originHost = '';
      }
      const allowed = config.allowedOrigins.includes(origin) || (checkHost ? served.includes(originHost) : originHost === host);
      if (!allowed) {
        void reply.code(403).send({ error: { code: 'ORIGIN_NOT_ALLOWED', message: `Origin "${origin}" may not call this host. Add it to allowedOrigins in the configuration if it should.` } });
        return;
      }
    }
    done();
  };
}

/** `Authorization: Bearer <key>` on /v1/* and /mcp, compared in constant time. */
export function apiKeyGuard(apiKey: string) {
  const expected = createHash('sha256').update(apiKey).digest();
  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const path = request.url;
    if (!(path.startsWith('/v1/') || path === '/v1' || path.startsWith('/mcp'))) return done();
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const given = createHash('sha256').update(match?.[1] ?? '').digest();
    if (match === null || !timingSafeEqual(given, expected)) {
      void reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="aptix"')
        .send({ error: { code: 'UNAUTHORIZED', message: 'This host requires an API key: send the header "Authorization: Bearer <key>".' } });
      return;
    }
    done();
  };
}

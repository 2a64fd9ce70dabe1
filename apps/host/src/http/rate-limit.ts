import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { AptixConfig } from '../config.js';
import { HttpError } from './errors.js';
import type { AnyFastifyInstance } from './fastify-instance.js';

/** Probes must never fail because a client was busy. */
const UNLIMITED_ROUTES = new Set(['/healthz', '/readyz']);

/**
 * The optional per-client rate limit (`rateLimit` in the configuration; off when absent), built on
 * @fastify/rate-limit. A client is its API key's name once the key is checked (its hook runs after
 * the key's), or its address on a host without keys. Beyond the limit: 429 RATE_LIMITED in Aptix's
 * shape, with retry-after. Register it before the routes: it attaches to each route as it is added.
 */
export async function registerRateLimit(app: AnyFastifyInstance, config: AptixConfig): Promise<void> {
  const limit = config.rateLimit;
  if (limit === undefined) return;
  await app.register(rateLimit, {
    global: true,
    max: limit.max,
    timeWindow: limit.timeWindowMs,
    keyGenerator: (request: FastifyRequest) =>
      request.actor === undefined ? `address:${request.ip}` : `key:${request.actor}`,
    allowList: (request: FastifyRequest) => UNLIMITED_ROUTES.has(request.routeOptions.url ?? ''),
    errorResponseBuilder: (_request: FastifyRequest, context: { max: number; after: string }) =>
      new HttpError(
        'RATE_LIMITED',
        `Too many requests: this host allows ${context.max} per ${limit.timeWindowMs} ms for each client. Retry in ${context.after} (see the retry-after header).`,
      ),
  });
}

import type { FastifyInstance } from 'fastify';
import type { AptixHost } from '../aptix-host.js';
import { adminOnly } from '../http/admin-only.js';
import type { RunningTelemetry } from './sdk.js';

/** The Prometheus text exposition format the scrape expects. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * GET /metrics: the host's metrics in the Prometheus text format, for a principal with the admin
 * permission (behind the API key like every route). Served only when the configuration sets
 * `telemetry.prometheus: true`; `{ port }` serves them on a port of their own instead.
 */
export function registerMetricsRoute(app: FastifyInstance, host: AptixHost, telemetry: RunningTelemetry): void {
  app.get('/metrics', { schema: { hide: true }, preHandler: adminOnly(host) }, async (_request, reply) =>
    reply.type(PROMETHEUS_CONTENT_TYPE).send(await telemetry.prometheusText()),
  );
}

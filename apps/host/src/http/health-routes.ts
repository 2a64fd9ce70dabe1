import { Type } from 'typebox';
import type { AgentSessionStore } from '@aptix/agent-sessions';
import type { AptixHost } from '../aptix-host.js';
import { errorBody } from './errors.js';
import { ErrorBody } from './schemas.js';
import type { AnyFastifyInstance } from './fastify-instance.js';

/**
 * Asks the store whether it answers (`ping`), within `timeoutMs` even if the store does not honour
 * the signal.
 */
export async function storeAnswers(
  store: AgentSessionStore,
  timeoutMs: number,
): Promise<{ ready: true } | { ready: false; why: string }> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      abort.abort();
      resolve('timeout');
    }, timeoutMs);
  });
  const probe = store.ping(abort.signal).then(
    () => 'answered' as const,
    (error: unknown) => error as Error,
  );
  try {
    const outcome = await Promise.race([probe, timedOut]);
    if (outcome === 'answered') return { ready: true };
    return {
      ready: false,
      why: outcome === 'timeout' ? `did not answer within ${timeoutMs} ms` : `failed (${outcome.message})`,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** `/healthz`: the process is alive (touches nothing). `/readyz`: the session store answers, else 503. */
export function registerHealthRoutes(app: AnyFastifyInstance, host: AptixHost): void {
  const { config } = host.cradle;
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process answers, and what it loaded',
        response: { 200: Type.Object({ status: Type.Literal('ok'), tools: Type.Integer(), modes: Type.Integer() }) },
      },
    },
    () => ({
      status: 'ok' as const,
      tools: host.cradle.registry.size,
      modes: host.cradle.modeCatalog.modes.length,
    }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: the session store answers',
        response: { 200: Type.Object({ status: Type.Literal('ready') }), 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const outcome = await storeAnswers(host.cradle.sessionManager, config.readinessTimeoutMs);
      if (outcome.ready) return { status: 'ready' as const };
      request.log.warn({ readiness: outcome.why }, `not ready: the session store ${outcome.why}`);
      // /readyz is public: the store's own error (host names, users) goes to the log, not to the caller.
      return reply
        .code(503)
        .send(
          errorBody(
            'NOT_READY',
            `The session store did not answer within ${config.readinessTimeoutMs} ms, or failed. Send traffic to another host until /readyz answers 200; this host's log says why.`,
          ),
        );
    },
  );
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AptixHost } from '../aptix-host.js';
import { sessionNotFound } from '../host-api.js';

/**
 * For routes on one agent session (`/v1/sessions/:id/…`): another principal's session answers 404, as a
 * session that does not exist does, so no one learns which ids exist (issue 32). Runs before the body
 * is acted on; a missing session is left to the route, which says so in its own words.
 */
export function ownSession(host: AptixHost) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.actor === undefined) return;
    const { id } = request.params as { id: string };
    const head = await host.cradle.sessionManager.getSessionHead(id).catch(() => undefined);
    if (head !== undefined && !host.maySee(head, request.actor))
      return void reply.code(404).send({ error: { code: 'SESSION_NOT_FOUND', message: sessionNotFound(id) } });
  };
}

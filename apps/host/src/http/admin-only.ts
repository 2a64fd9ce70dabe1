import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AptixHost } from '../aptix-host.js';
import { sendError } from './errors.js';

/** A route for principals with the admin permission (the approvals list, the packages list); a key without an entry has it. */
export function adminOnly(host: AptixHost) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (host.permissions.of(request.actor).admin) return done();
    return void sendError(
      reply,
      'FORBIDDEN',
      `${request.routeOptions.url ?? 'This route'} needs the permission admin, which this principal does not have.`,
    );
  };
}

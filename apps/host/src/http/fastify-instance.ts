import type { FastifyInstance } from 'fastify';

/**
 * The Fastify instance every route module registers on, whatever its type provider and logger: a module
 * of its own, so that server.ts, which imports the route modules, is not imported back by them.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Fastify's five type parameters vary by provider and logger; the routes never read them
export type AnyFastifyInstance = FastifyInstance<any, any, any, any, any>;

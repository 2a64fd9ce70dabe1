import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ScopeError, type AptixHost } from '../aptix-host.js';
import { ErrorBody } from './schemas.js';
import type { AnyFastifyInstance } from './fastify-instance.js';

const SessionBody = Type.Object({
  id: Type.String(),
  mode: Type.String(),
  parentId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  history: Type.Array(
    Type.Object({
      fromMode: Type.String(),
      toMode: Type.String(),
      reason: Type.String(),
      branch: Type.Boolean(),
      at: Type.String(),
    }),
  ),
});
const CreateSession = Type.Object(
  {
    mode: Type.Optional(Type.String({ minLength: 1 })),
    org: Type.Optional(Type.String({ minLength: 1 })),
    user: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

/** Agent sessions: `POST /v1/sessions`, `GET /v1/sessions/:id` (one page of its history at a time). */
export function registerSessionRoutes(untyped: AnyFastifyInstance, host: AptixHost): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/sessions',
    {
      schema: {
        summary: 'Create an agent session',
        body: Type.Optional(CreateSession),
        response: { 201: SessionBody, 400: ErrorBody },
      },
    },
    async (request, reply) => {
      try {
        // The session belongs to the principal that made it (issue 32).
        // A POST without a body reaches here with none, whatever the schema's type says.
        const body = (request.body as typeof request.body | undefined) ?? {};
        // eslint-disable-next-line @typescript-eslint/return-await -- a FastifyReply is a thenable that settles once written; Fastify wants the reply itself
        return reply.code(201).send(await host.createSession(body, request.actor));
      } catch (error) {
        if (error instanceof ScopeError)
          return reply.code(400).send({ error: { code: error.code, message: error.message } });
        throw error;
      }
    },
  );

  const SessionPage = Type.Object({ ...SessionBody.properties, nextCursor: Type.Union([Type.String(), Type.Null()]) });
  const PageQuery = Type.Object(
    {
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          description:
            "History rows in this page (default and maximum: the host's sessions.historyPageSize and sessions.maxHistoryPageSize).",
        }),
      ),
      cursor: Type.Optional(
        Type.String({ maxLength: 32, description: 'The nextCursor of the previous page; omit for the first page.' }),
      ),
    },
    { additionalProperties: false },
  );
  app.get(
    '/v1/sessions/:id',
    {
      schema: {
        summary: 'A session, its mode and one page of its mode history',
        params: Type.Object({ id: Type.String() }),
        querystring: PageQuery,
        response: { 200: SessionPage, 400: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      try {
        const session = await host.getSessionPage(request.params.id, request.query, request.actor);
        if (session === undefined)
          // eslint-disable-next-line @typescript-eslint/return-await -- a FastifyReply is a thenable that settles once written; Fastify wants the reply itself
          return reply
            .code(404)
            .send({ error: { code: 'SESSION_NOT_FOUND', message: `Session "${request.params.id}" does not exist.` } });
        return session;
      } catch (error) {
        if (error instanceof ScopeError)
          return reply.code(400).send({ error: { code: error.code, message: error.message } });
        throw error;
      }
    },
  );
}

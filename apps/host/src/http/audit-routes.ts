import { Type } from 'typebox';
import { AUDIT_KINDS, AUDIT_PAGE_MAX, SessionStoreError, type AuditFilter } from '@aptix/agent-sessions';
import type { AptixHost } from '../aptix-host.js';
import type { AnyFastifyInstance } from './fastify-instance.js';
import { adminOnly } from './admin-only.js';
import { errorBody } from './errors.js';

const ErrorBody = Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) });
const Nullable = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const AuditRecordSchema = Type.Object(
  {
    id: Type.String({ description: 'Its place in the trail: later records have greater ids.' }),
    at: Type.String({ description: 'When the call started, or the decision was made (ISO-8601).' }),
    kind: Type.Union(
      AUDIT_KINDS.map((kind) => Type.Literal(kind)),
      { description: 'A call, an approval decision, or a mode change (a call of agent_change_mode).' },
    ),
    principal: Nullable('The API key name or OAuth subject that acted; null on a host without keys.'),
    sessionId: Nullable('The agent session the call ran in.'),
    tool: Type.String(),
    argumentsHash: Nullable("SHA-256 (hex) of the arguments' canonical JSON; the arguments are never kept."),
    outcome: Type.String({
      description:
        'OK, or the error code (TIMEOUT, FORBIDDEN, PENDING_APPROVAL, …); for a decision APPROVED, DENIED, or why it changed nothing.',
    }),
    durationMs: Type.Union([Type.Integer(), Type.Null()]),
    traceId: Nullable('The OpenTelemetry trace id of the call, when tracing is on.'),
    approvalId: Nullable('The approval the call waits for or ran for, or the decision decided.'),
    decision: Type.Union([Type.Literal('approve'), Type.Literal('deny'), Type.Null()]),
    fromMode: Nullable('A mode change: the mode left.'),
    toMode: Nullable('A mode change: the mode entered.'),
  },
  { additionalProperties: false },
);

const Filters = Type.Object({
  tool: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  principal: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  outcome: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'OK, or an error code.' })),
  kind: Type.Optional(Type.Union(AUDIT_KINDS.map((kind) => Type.Literal(kind)))),
  since: Type.Optional(Type.String({ maxLength: 40, description: 'Records at or after this ISO-8601 time.' })),
  until: Type.Optional(Type.String({ maxLength: 40, description: 'Records before this ISO-8601 time.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_PAGE_MAX, default: 100 })),
  cursor: Type.Optional(
    Type.String({ maxLength: 40, description: 'The nextCursor of the previous page; omit for the newest records.' }),
  ),
});

/** A filter or cursor the store refuses: 400 with its code and message, which name what is wrong. */
function refusedFilter(error: unknown): { code: string; message: string } | undefined {
  return error instanceof SessionStoreError && (error.code === 'INVALID_ARGUMENT' || error.code === 'VALUE_TOO_LONG')
    ? { code: error.code, message: error.message }
    : undefined;
}

/**
 * `/v1/audit`: the audit trail, newest first, for principals with the admin permission (it names every
 * principal's calls). Pages are keyset pages: pass `nextCursor` back as `cursor`.
 */
export function registerAuditRoutes(app: AnyFastifyInstance, host: AptixHost): void {
  app.get(
    '/v1/audit',
    {
      preHandler: adminOnly(host),
      schema: {
        summary: 'The audit trail, newest first: filter by tool, principal, session, outcome, kind and time',
        querystring: Filters,
        response: {
          200: Type.Object({
            records: Type.Array(AuditRecordSchema),
            nextCursor: Type.Union([Type.String(), Type.Null()], {
              description: 'Pass it as cursor for the next (older) page; null on the last.',
            }),
          }),
          400: ErrorBody,
          403: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      try {
        return await host.cradle.sessionManager.audit.list(request.query as AuditFilter);
      } catch (error) {
        const refused = refusedFilter(error);
        if (refused === undefined) throw error;
        return reply.code(400).send(errorBody(refused.code, refused.message));
      }
    },
  );

  app.get(
    '/v1/audit/:id',
    {
      preHandler: adminOnly(host),
      schema: {
        summary: 'One audit record',
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 40 }) }),
        response: { 200: AuditRecordSchema, 403: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const record = await host.cradle.sessionManager.audit.get(id);
      if (record === undefined)
        return reply
          .code(404)
          .send(
            errorBody(
              'AUDIT_RECORD_NOT_FOUND',
              `Audit record "${id.slice(0, 40)}" does not exist (or was pruned). List records with GET /v1/audit.`,
            ),
          );
      return record;
    },
  );
}

import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ApprovalStatus } from '@aptix/agent-sessions';
import type { AptixHost } from '../aptix-host.js';
import { approvalView } from '../approvals/present.js';
import type { AnyFastifyInstance } from './fastify-instance.js';
import { adminOnly } from './admin-only.js';

const STATUSES: readonly ApprovalStatus[] = [
  'pending',
  'approved',
  'denied',
  'expired',
  'executing',
  'executed',
  'refused',
  'outcome_unknown',
];
const ErrorBody = Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) });
const Approval = Type.Object(
  {
    id: Type.String(),
    sessionId: Type.Union([Type.String(), Type.Null()]),
    toolName: Type.String(),
    arguments: Type.Unknown({ description: 'Exactly the arguments that run when the call is approved.' }),
    reason: Type.String(),
    requestedBy: Type.Union([Type.String(), Type.Null()]),
    requestedAt: Type.String(),
    expiresAt: Type.String(),
    status: Type.Union(STATUSES.map((status) => Type.Literal(status))),
    decidedBy: Type.Union([Type.String(), Type.Null()]),
    decidedAt: Type.Union([Type.String(), Type.Null()]),
    note: Type.Union([Type.String(), Type.Null()]),
    result: Type.Unknown({
      description: 'The InvokeResult of the call once it ran (or why it was refused when it was to run).',
    }),
    completedAt: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });

/** Who decides: the name of the API key the request carried, when the host requires keys. */
function actorOf(request: FastifyRequest): string | null {
  return request.actor ?? null;
}

/**
 * `/v1/approvals`: the calls that wait for a person, and their decision. Approving runs the stored
 * arguments once and stores the result; deciding twice, too late, or on two hosts at once gives one
 * execution and a clear answer to every other attempt.
 */
export function registerApprovalRoutes(app: AnyFastifyInstance, host: AptixHost): void {
  app.get(
    '/v1/approvals',
    {
      // Every pending call with its arguments: for principals with the admin permission.
      preHandler: adminOnly(host),
      schema: {
        summary: 'Approvals, newest first: filter by session and status',
        querystring: Type.Object({
          sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          status: Type.Optional(Type.Union(STATUSES.map((status) => Type.Literal(status)))),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
        }),
        response: { 200: Type.Object({ approvals: Type.Array(Approval) }), 400: ErrorBody, 403: ErrorBody },
      },
    },
    async (request) => {
      const { sessionId, status, limit } = request.query as {
        sessionId?: string;
        status?: ApprovalStatus;
        limit?: number;
      };
      const approvals = await host.approvals().store.list({
        ...(sessionId ? { sessionId } : {}),
        ...(status ? { status } : {}),
        ...(limit ? { limit } : {}),
      });
      return { approvals: approvals.map(approvalView) };
    },
  );

  app.get(
    '/v1/approvals/:id',
    {
      schema: {
        summary: 'One approval, with its result once the call ran',
        params: Id,
        response: { 200: Approval, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const found = await host.approvals().store.get(id);
      // An approval follows its session's owner: another principal's is as unknown as a missing one.
      const approval =
        found?.sessionId != null &&
        request.actor !== undefined &&
        (await host.sessionMode(found.sessionId, request.actor)) === undefined
          ? undefined
          : found;
      if (approval === undefined)
        return reply.code(404).send({
          error: {
            code: 'APPROVAL_NOT_FOUND',
            message: `Approval "${id}" does not exist. List them with GET /v1/approvals?status=pending.`,
          },
        });
      return approvalView(approval);
    },
  );

  app.post(
    '/v1/approvals/:id',
    {
      schema: {
        summary: 'Approve or deny a call: approving runs it once and answers with its result',
        params: Id,
        body: Type.Object(
          {
            decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')], {
              description: '"approve" runs the stored call once; "deny" records that it must not run.',
            }),
            note: Type.Optional(
              Type.String({ maxLength: 2000, description: 'Why; a denial passes it on to the model.' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Approval,
          403: ErrorBody,
          404: ErrorBody,
          409: Type.Object({ error: ErrorBody.properties.error, approval: Approval }),
          410: Type.Object({ error: ErrorBody.properties.error, approval: Approval }),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const { decision, note } = request.body as { decision: 'approve' | 'deny'; note?: string };
      const outcome = await host
        .approvals()
        .decide(id, decision, actorOf(request), note ?? null, request.log, request.actor);
      switch (outcome.kind) {
        case 'forbidden':
          return reply
            .code(403)
            .send({ error: { code: outcome.code, message: `${outcome.message} Nothing was decided.` } });
        case 'decided':
          return approvalView(outcome.approval);
        case 'not_found':
          return reply.code(404).send({
            error: {
              code: 'APPROVAL_NOT_FOUND',
              message: `Approval "${id}" does not exist. List them with GET /v1/approvals?status=pending.`,
            },
          });
        case 'expired':
          return reply.code(410).send({
            error: {
              code: 'APPROVAL_EXPIRED',
              message: `Approval ${id} expired at ${outcome.approval.expiresAt} before anyone decided; the call did not run and will not. Ask for the call again if it is still wanted.`,
            },
            approval: approvalView(outcome.approval),
          });
        case 'already_decided': {
          const { status, decidedBy, decidedAt } = outcome.approval;
          return reply.code(409).send({
            error: {
              code: 'APPROVAL_ALREADY_DECIDED',
              message:
                `Approval ${id} was already ` +
                `decided${decidedBy ? ` by ${decidedBy}` : ''}${decidedAt ? ` at ${decidedAt}` : ''}; it is ` +
                `now "${status}". Nothing changed; its result, if it ran, is at GET /v1/approvals/${id}.`,
            },
            approval: approvalView(outcome.approval),
          });
        }
      }
    },
  );
}

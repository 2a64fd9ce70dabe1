import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { createAdminLogger } from '@aptix/tool-contract';
import { ReasonerError, toMessageResponse, toServerSentEvent, type ReasonerEvent } from '@aptix/reasoner';
import { turnLogger } from '../audit/audited-calls.js';
import type { AptixHost } from '../aptix-host.js';
import { ownSession } from './own-session.js';
import { ErrorBody } from './schemas.js';
import type { AnyFastifyInstance } from './fastify-instance.js';

const Params = Type.Object({ id: Type.String() });

function sendError(reply: FastifyReply, error: unknown) {
  if (error instanceof ReasonerError)
    return reply.code(error.httpStatus).send({ error: { code: error.code, message: error.message } });
  throw error;
}

/**
 * The agent loop over HTTP: `POST /v1/sessions/:id/messages` runs one turn and answers
 * `{ sessionId, mode, output, toolCalls, branchedSessionId? }`, or, with `Accept: text/event-stream`,
 * streams text deltas and tool events as server-sent events. `POST /v1/sessions/:id/tool-outputs`
 * answers the calls of client-executed tools and resumes the turn.
 */
export function registerReasonerRoutes(app: AnyFastifyInstance, host: AptixHost): void {
  const runStreaming = async (
    request: { id: string; headers: Record<string, unknown> },
    reply: FastifyReply,
    run: (signal: AbortSignal, onEvent?: (event: ReasonerEvent) => void) => Promise<unknown>,
  ) => {
    const abort = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const accept = String(request.headers.accept ?? '');
    if (!accept.includes('text/event-stream')) {
      try {
        return await run(abort.signal);
      } catch (error) {
        return sendError(reply, error);
      }
    }
    // The stream opens on the first event, so a refused turn (404, 409, 503) stays a plain HTTP error.
    let open = false;
    const write = (frame: string) => {
      if (!open) {
        open = true;
        reply.hijack();
        reply.raw.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          'x-request-id': request.id,
        });
      }
      reply.raw.write(frame);
    };
    try {
      await run(abort.signal, (event) => write(toServerSentEvent(event)));
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      if (!open) return sendError(reply, error);
      const known = error instanceof ReasonerError;
      write(
        toServerSentEvent({
          type: 'error',
          code: known ? error.code : 'INTERNAL',
          message: known ? error.message : 'The host failed to finish the turn; see its logs.',
        }),
      );
    }
    reply.raw.end();
    return reply;
  };

  app.post(
    '/v1/sessions/:id/messages',
    {
      preHandler: ownSession(host),
      schema: {
        summary: 'Send a message: the agent answers, using the tools of the session mode',
        params: Params,
        body: Type.Object({ input: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
        response: { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 502: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const { input } = request.body as { input: string };
      return runStreaming(request, reply, async (signal, onEvent) => {
        const result = await host.reasoner().runTurn(id, input, {
          signal,
          approvals: host.turnApprovals(request.actor, request.log),
          logger: turnLogger(createAdminLogger(request.log), request.actor),
          ...(onEvent ? { onEvent } : {}),
        });
        return toMessageResponse(result);
      });
    },
  );

  const Output = Type.Union([
    Type.Object({ callId: Type.String({ minLength: 1 }), output: Type.Unknown() }, { additionalProperties: false }),
    Type.Object(
      {
        callId: Type.String({ minLength: 1 }),
        error: Type.Object({ message: Type.String({ minLength: 1 }), code: Type.Optional(Type.String()) }),
      },
      { additionalProperties: false },
    ),
  ]);
  app.post(
    '/v1/sessions/:id/tool-outputs',
    {
      preHandler: ownSession(host),
      schema: {
        summary: 'Answer pending client-executed tool calls and resume the turn',
        params: Params,
        body: Type.Object({ outputs: Type.Array(Output, { minItems: 1 }) }, { additionalProperties: false }),
        response: { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 502: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const { outputs } = request.body as { outputs: never[] };
      return runStreaming(request, reply, async (signal, onEvent) =>
        toMessageResponse(
          await host.reasoner().submitToolOutputs(id, outputs, {
            signal,
            approvals: host.turnApprovals(request.actor, request.log),
            logger: turnLogger(createAdminLogger(request.log), request.actor),
            ...(onEvent ? { onEvent } : {}),
          }),
        ),
      );
    },
  );

  app.post(
    '/v1/sessions/:id/resume',
    {
      preHandler: ownSession(host),
      schema: {
        summary: 'Resume a turn that waits for approvals, once they are decided',
        description:
          'A turn whose model called a gated tool ends with status waiting_for_approval and ' +
          'pendingApprovals. Decide each (POST /v1/approvals/:id), then resume here: the model reads ' +
          'each result, or that the person declined (with their note), and the turn goes on. While ' +
          'one is undecided the answer is waiting_for_approval again, and nothing changes.',
        params: Params,
        response: { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 502: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      return runStreaming(request, reply, async (signal, onEvent) =>
        toMessageResponse(
          await host.reasoner().resumeApprovals(id, {
            signal,
            approvals: host.turnApprovals(request.actor, request.log),
            logger: turnLogger(createAdminLogger(request.log), request.actor),
            ...(onEvent ? { onEvent } : {}),
          }),
        ),
      );
    },
  );
}

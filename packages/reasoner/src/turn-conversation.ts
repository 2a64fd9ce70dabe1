/**
 * What a turn writes to the session's conversation around its model calls: the opening (answers for
 * calls the host was running when it stopped, then the user's message or the client's outputs) and each
 * batch of call outcomes, following a mode change into a child session when the tool asked for a branch.
 */
import type { AgentSession } from '@aptix/agent-sessions';
import type { AdminLogger } from '@aptix/tool-contract';
import { approvalIdOf } from './approvals.js';
import {
  errorPayload,
  functionCallOutputItem,
  inspectConversation,
  pendingCallItem,
  ToolOutputCode,
  userMessageItem,
  type PendingToolCall,
} from './conversation.js';
import type { ReasonerEventListener } from './events.js';
import type { ReasonerSessionStore } from './reasoner-options.js';
import { ReasonerError, ReasonerErrorCode } from './reasoner-error.js';
import { submissionItems, type ToolOutputSubmission } from './tool-outputs.js';
import type { CallOutcome } from './turn-calls.js';
import { branchRequest, MODE_CHANGE_TOOL } from './turn-endings.js';

/** How a turn starts: a user's message, or outputs for pending calls (`approved`: the decisions of approvals, from resumeApprovals). */
export type TurnStart =
  { kind: 'message'; input: string } | { kind: 'outputs'; outputs: readonly ToolOutputSubmission[]; approved?: true };

/** After the opening: the loop runs, the turn was cancelled before anything was written, or calls are still waiting. */
export type TurnOpening = { kind: 'run' } | { kind: 'cancelled' } | { kind: 'paused'; pending: PendingToolCall[] };

/** @throws {ReasonerError} `SESSION_NOT_FOUND`, naming how to create one. */
export async function requireSession(
  sessions: Pick<ReasonerSessionStore, 'getSession'>,
  sessionId: string,
): Promise<AgentSession> {
  const session = typeof sessionId === 'string' && sessionId !== '' ? await sessions.getSession(sessionId) : undefined;
  if (session === undefined) {
    throw new ReasonerError(
      ReasonerErrorCode.SESSION_NOT_FOUND,
      `Session "${String(sessionId)}" does not exist. Create one first (POST /v1/sessions, or the session store's createSession).`,
    );
  }
  return session;
}

/**
 * Checks `start` against the conversation and writes the turn's opening. Nothing is written when the
 * start is refused or `signal` has already aborted.
 * @throws {ReasonerError} `PENDING_TOOL_CALLS` (a message while client calls wait), `INVALID_INPUT`, `UNKNOWN_TOOL_CALL`.
 */
export async function openTurn(
  sessions: ReasonerSessionStore,
  sessionId: string,
  start: TurnStart,
  signal: AbortSignal | undefined,
): Promise<TurnOpening> {
  const { pending, interrupted } = inspectConversation(await sessions.listConversationItems(sessionId));
  // Calls the host was running when it stopped get an answer, so the conversation is valid again.
  const repairs = interrupted.map((call) =>
    functionCallOutputItem(
      call.callId,
      errorPayload(
        `${call.name} was interrupted: the host stopped before the call finished, so its effect is unknown. Check before calling it again.`,
        ToolOutputCode.CALL_INTERRUPTED,
      ),
    ),
  );
  if (start.kind === 'message') {
    if (pending.length > 0) {
      throw new ReasonerError(
        ReasonerErrorCode.PENDING_TOOL_CALLS,
        `Session ${sessionId} is waiting for the output of client tool call(s) ${pending.map((call) => `${call.callId} (${call.name})`).join(', ')}. ` +
          'Submit them (submitToolOutputs, POST /v1/sessions/:id/tool-outputs) before sending a new message.',
      );
    }
    if (signal?.aborted) return { kind: 'cancelled' };
    await sessions.appendConversationItems(sessionId, [...repairs, userMessageItem(start.input)]);
    return { kind: 'run' };
  }
  // A call waiting for a person is answered by the decision (resumeApprovals), never by the client.
  if (start.approved !== true) {
    for (const entry of start.outputs) {
      const waits = pending.find(
        (call) =>
          call.callId === (entry as { callId?: unknown }).callId && approvalIdOf(call.serverResult) !== undefined,
      );
      if (waits) {
        const approvalId = approvalIdOf(waits.serverResult)!;
        throw new ReasonerError(
          ReasonerErrorCode.INVALID_INPUT,
          `Tool call "${waits.callId}" (${waits.name}) waits for a person's approval, not for a ` +
            `client's output: decide approval ${approvalId} (POST /v1/approvals/${approvalId}), and the turn resumes.`,
        );
      }
    }
  }
  const answers = submissionItems(sessionId, start.outputs, pending);
  if (signal?.aborted) return { kind: 'cancelled' };
  await sessions.appendConversationItems(sessionId, [...repairs, ...answers.items]);
  const remaining = pending
    .filter((call) => !answers.answered.has(call.callId))
    .map((call) => ({ ...call, sessionId }));
  return remaining.length > 0 ? { kind: 'paused', pending: remaining } : { kind: 'run' };
}

/**
 * Writes a batch's outputs (and pending records) to the conversation, and follows a mode change:
 * returns the session the turn continues in, a new child session after `branch: true`.
 */
export async function recordOutcomes(
  sessions: ReasonerSessionStore,
  session: AgentSession,
  outcomes: CallOutcome[],
  emit: ReasonerEventListener,
  logger: AdminLogger,
): Promise<AgentSession> {
  const branch = branchRequest(outcomes);
  const child =
    branch === undefined
      ? undefined
      : await sessions.createSession({ org: session.org, user: session.user, mode: branch.mode, parentId: session.id });
  // The model reads where the work went in the mode change's own output.
  if (branch !== undefined && child !== undefined)
    branch.outcome.output = JSON.stringify({ ...branch.payload, branchedSessionId: child.id });
  await sessions.appendConversationItems(
    session.id,
    outcomes.map((outcome) =>
      outcome.pending
        ? pendingCallItem(outcome.call, outcome.output)
        : functionCallOutputItem(outcome.call.callId, outcome.content ?? outcome.output),
    ),
  );

  if (child === undefined) {
    if (!outcomes.some((outcome) => outcome.tool === MODE_CHANGE_TOOL && outcome.successful)) return session;
    const after = await requireSession(sessions, session.id);
    if (after.mode !== session.mode)
      emit({ type: 'mode_changed', sessionId: session.id, fromMode: session.mode, toMode: after.mode, branch: false });
    return after;
  }

  // The child starts from the whole conversation so far, so the model keeps the context the user
  // confirmed the branch in. The parent keeps its history and the mode the tool gave it (see README).
  await sessions.appendConversationItems(child.id, await sessions.listConversationItems(session.id));
  const pending = outcomes.filter((outcome) => outcome.pending);
  if (pending.length > 0) {
    // Client calls of this batch are answered in the child; the parent must not wait for them.
    await sessions.appendConversationItems(
      session.id,
      pending.map((outcome) =>
        functionCallOutputItem(
          outcome.call.callId,
          errorPayload(
            `This call continues in session ${child.id}, where the work moved when the mode changed.`,
            ToolOutputCode.MOVED_TO_BRANCH,
          ),
        ),
      ),
    );
  }
  logger.addCustomEvent(
    'info',
    '[Reasoner_Turn__Branched]',
    `Session ${session.id} branched into ${child.id} in mode "${child.mode}".`,
    [
      ['SessionId', session.id],
      ['BranchedSessionId', child.id],
      ['Mode', child.mode],
    ],
  );
  emit({
    type: 'mode_changed',
    sessionId: session.id,
    fromMode: session.mode,
    toMode: child.mode,
    branch: true,
    branchedSessionId: child.id,
  });
  return child;
}

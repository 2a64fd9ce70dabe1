import { approvalIdOf } from './approvals.js';
import type { PendingToolCall } from './conversation.js';

/** How a turn ended. */
export type TurnStatus =
  /** The model answered without calling a tool. */
  | 'completed'
  /** A client-executed tool was called: submit its output with `submitToolOutputs` to resume. */
  | 'pending_tool_calls'
  /** A call waits for a person's approval (`pendingToolCalls` name each approval): decide it, then `resumeApprovals`. */
  | 'waiting_for_approval'
  /** The model kept calling tools until `maxSteps` model calls; `output` says so. */
  | 'step_limit'
  /** The caller's signal aborted the turn; tools in flight were cancelled. */
  | 'cancelled';

/** A tool call the server ran during the turn. */
export interface TurnToolCall {
  readonly callId: string;
  readonly name: string;
  /** The arguments as the model sent them (JSON text). */
  readonly arguments: string;
  readonly successful: boolean;
  /** What the model read back: the result JSON, or `{"error":{"message","code"}}`. */
  readonly output: string;
  /** The session the call ran in (after a branch, the new session). */
  readonly sessionId: string;
}

/** What `runTurn` and `submitToolOutputs` return. */
export interface TurnResult {
  /** The session the turn was asked of. */
  readonly sessionId: string;
  /** After `agent_change_mode` with `branch: true`: the new session the work continued in. Send the next message there. */
  readonly branchedSessionId?: string;
  /** The mode of the session the turn ended in (`branchedSessionId ?? sessionId`). */
  readonly mode: string;
  readonly status: TurnStatus;
  /**
   * The model's answer: the text of its last response. For `step_limit` and `cancelled`, a sentence
   * saying what happened (after any text the model had already produced).
   */
  readonly output: string;
  /** Every tool call the server ran in this turn, in call order. */
  readonly toolCalls: readonly TurnToolCall[];
  /** The calls waiting for the client; non-empty exactly when `status` is `pending_tool_calls`. */
  readonly pendingToolCalls: readonly PendingToolCall[];
  /** Model calls made in this turn. */
  readonly steps: number;
}

/**
 * The JSON body of `POST /v1/sessions/:id/messages`: `{ sessionId, mode, output, toolCalls: [{ name,
 * arguments, successful }], branchedSessionId? }`, plus `status`, and `pendingToolCalls` when a client
 * tool waits.
 */
export interface MessageResponseBody {
  readonly sessionId: string;
  readonly mode: string;
  readonly output: string;
  readonly status: TurnStatus;
  readonly toolCalls: ReadonlyArray<{
    readonly name: string;
    readonly arguments: string;
    readonly successful: boolean;
  }>;
  readonly branchedSessionId?: string;
  readonly pendingToolCalls?: ReadonlyArray<{
    readonly callId: string;
    readonly name: string;
    readonly arguments: string;
    readonly sessionId: string;
    readonly serverResult: string;
    readonly approvalId?: string;
  }>;
  /** With `waiting_for_approval`: the approvals to decide (POST /v1/approvals/:id); the turn resumes once all are decided. */
  readonly pendingApprovals?: readonly string[];
}

/**
 * Shapes a turn result as the HTTP body of `POST /v1/sessions/:id/messages`.
 * @example reply.send(toMessageResponse(await reasoner.runTurn(id, body.input, { signal })));
 */
export function toMessageResponse(result: TurnResult): MessageResponseBody {
  return {
    sessionId: result.sessionId,
    mode: result.mode,
    output: result.output,
    status: result.status,
    toolCalls: result.toolCalls.map(({ name, arguments: args, successful }) => ({ name, arguments: args, successful })),
    ...(result.branchedSessionId === undefined ? {} : { branchedSessionId: result.branchedSessionId }),
    ...(result.pendingToolCalls.length === 0
      ? {}
      : {
          pendingToolCalls: result.pendingToolCalls.map(
            ({ callId, name, arguments: args, sessionId, serverResult }) => {
              const approvalId = approvalIdOf(serverResult);
              return {
                callId,
                name,
                arguments: args,
                sessionId,
                serverResult,
                ...(approvalId === undefined ? {} : { approvalId }),
              };
            },
          ),
        }),
    ...(result.status === 'waiting_for_approval'
      ? { pendingApprovals: result.pendingToolCalls.flatMap(({ serverResult }) => approvalIdOf(serverResult) ?? []) }
      : {}),
  };
}

import type { ToolInputChannel } from './input-required.js';

/** The levels of a log entry sent to the caller (MCP's, RFC 5424's). */
export type ToolLogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** One progress report of a running call (the fields of MCP's `notifications/progress`). */
export interface ToolProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/**
 * What a tool knows about the call it serves. Hosts add their own fields by declaration merging:
 *
 * @example
 * declare module '@aptix/tool-contract' {
 *   interface AgentToolExecutionContext { readonly tenant?: string }
 * }
 */
export interface AgentToolExecutionContext {
  /** The agent session the call belongs to (AGN-005 §5: included in every result). */
  readonly sessionId?: string;
  /** The conversation, the records' `Request.ConversationId` (AGN-005 §5). */
  readonly conversationId?: string;
  readonly org?: string;
  readonly user?: string;
  /** The session's mode when the call was made. */
  readonly mode?: string;
  /**
   * Reports how far a long call has got, when the caller asked to hear it (an MCP client that sent a
   * progress token, an HTTP client that accepts `text/event-stream`). Absent otherwise: call it as
   * `context.reportProgress?.(…)`. `progress` must grow from one report to the next; `total`, when
   * known, is the value at completion. Reports after the call has answered are dropped.
   */
  readonly reportProgress?: (progress: ToolProgress) => void;
  /**
   * Sends a log entry to the caller, when it listens (an MCP client, at the level it chose). Absent
   * otherwise: call it as `context.log?.(…)`. Operators' logs still go through the tool's logger.
   */
  readonly log?: (level: ToolLogLevel, message: string, data?: unknown) => void;
  /**
   * Asking the caller mid-call (`InvokeResult.inputRequired`): the user (elicitation), the client's
   * model (sampling) or the client's roots. Present when the caller can relay requests (an MCP client),
   * with what it can answer, and the answers and the tool's own state on a call that continues a round.
   * Absent otherwise: a tool that asks then fails with `INPUT_REQUIRED`, `SAMPLING_UNAVAILABLE` or
   * `ROOTS_UNAVAILABLE`.
   */
  readonly input?: ToolInputChannel;
}

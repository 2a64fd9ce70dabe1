import type {
  InvokeResult,
  AgentToolExecutionContext,
  ContentBlock,
  ExecuteOptions,
  LevelLogger,
  ToolProgress,
} from '@aptix/tool-contract';
import { SessionStoreError, type AgentSession, type SessionHead, type ToolApproval } from '@aptix/agent-sessions';

// What AptixHost takes and answers: the shapes every surface (CLI, HTTP, MCP) shares, and how a
// session and a result are shown.

/** A session as the CLI and HTTP show it. */
export interface SessionView {
  readonly id: string;
  readonly mode: string;
  readonly parentId?: string | null;
  readonly history: Array<{ fromMode: string; toMode: string; reason: string; branch: boolean; at: string }>;
}

/** A session with one page of its mode history, and the cursor of the next page (`null` on the last). */
export interface SessionPageView extends SessionView {
  readonly nextCursor: string | null;
}

/** Which tools to show or allow: one mode's, one session's current mode's, or all. */
export interface ToolScope {
  readonly mode?: string;
  readonly sessionId?: string;
  /** The principal asking: another principal's session is as unknown as a missing one. */
  readonly actor?: string;
}

export interface CallOptions {
  readonly sessionId?: string;
  readonly conversationId?: string;
  /**
   * Who asked: over HTTP, the name of the API key that authenticated the request (never the key).
   * Without `logger`, every log line of the call carries it as `actor`.
   */
  readonly actor?: string;
  /**
   * Where the call's log lines go, the host's, the executor's and the tool's own: over HTTP, the
   * request's child logger (`request.log`), so each line carries the request id (and the actor).
   * Default: the host's logger.
   */
  readonly logger?: LevelLogger;
  /** The caller's cancellation, or a function that makes it on demand (see `ExecuteOptions.signal`). */
  readonly signal?: ExecuteOptions['signal'];
  /** Where the tool's progress reports go (`AgentToolExecutionContext.reportProgress`); none when omitted. */
  readonly onProgress?: (progress: ToolProgress) => void;
  /** Where the tool's log entries for the caller go (`AgentToolExecutionContext.log`); none when omitted. */
  readonly onLog?: AgentToolExecutionContext['log'];
  /** Questions to the user: the caller can relay them (an MCP client), with the answers and the tool's state on a retry. */
  readonly input?: AgentToolExecutionContext['input'];
}

/** The outcome of a call request: the tool's InvokeResult, or why it never reached the tool. */
export type CallOutcome =
  /** `session`: the session the call ran in, as read for the call (its mode then), without its history. */
  | { readonly kind: 'result'; readonly result: InvokeResult<string>; readonly session: SessionHead | undefined }
  | { readonly kind: 'not_found'; readonly message: string }
  /** The tool's policy asks a person first: nothing ran; the approval says where to decide. */
  | { readonly kind: 'pending_approval'; readonly approval: ToolApproval }
  | {
      readonly kind: 'refused';
      readonly code: 'SESSION_NOT_FOUND' | 'UNKNOWN_MODE' | 'TOOL_NOT_IN_MODE' | 'FORBIDDEN';
      readonly message: string;
    };

/**
 * A request the host refuses before any tool runs: an unknown mode or session, or a value the session
 * store refuses (`VALUE_TOO_LONG`, `INVALID_ARGUMENT`: a string over its bound, a bad page cursor).
 */
export class ScopeError extends Error {
  override readonly name = 'ScopeError';
  constructor(
    readonly code: 'SESSION_NOT_FOUND' | 'UNKNOWN_MODE' | 'VALUE_TOO_LONG' | 'INVALID_ARGUMENT',
    message: string,
  ) {
    super(message);
  }
}

/** A session store's refusal of what the caller sent, as the ScopeError every surface answers with 400; other errors pass. */
export function refusedInput(error: unknown): never {
  if (error instanceof SessionStoreError && (error.code === 'VALUE_TOO_LONG' || error.code === 'INVALID_ARGUMENT'))
    throw new ScopeError(error.code, error.message);
  throw error;
}

export function sessionNotFound(id: string): string {
  return `Session "${id}" does not exist. Create one with \`aptix sessions create\` or POST /v1/sessions, and use its id.`;
}

export function toSessionView(session: AgentSession): SessionView {
  return {
    id: session.id,
    mode: session.mode,
    parentId: session.parentId,
    history: session.history.map(({ fromMode, toMode, reason, branch, at }) => ({
      fromMode,
      toMode,
      reason,
      branch,
      at,
    })),
  };
}

/** The InvokeResult as callers see it: `result` parsed from the tool's JSON, and the tool's content blocks when it gave any. */
export function presentResult(result: InvokeResult<string>): {
  successful: boolean;
  result: unknown;
  errors: ReadonlyArray<{ message: string; code?: string }>;
  content?: readonly ContentBlock[];
} {
  const presented = {
    successful: result.successful,
    result: result.successful ? JSON.parse(result.result) : null,
    errors: result.errors,
  };
  return result.successful && result.content !== undefined ? { ...presented, content: result.content } : presented;
}

/** The call's context with the caller's progress and log sinks, when it gave any. */
export function withSinks(context: AgentToolExecutionContext, options: CallOptions): AgentToolExecutionContext {
  if (options.onProgress === undefined && options.onLog === undefined && options.input === undefined) return context;
  return {
    ...context,
    ...(options.onProgress === undefined ? {} : { reportProgress: options.onProgress }),
    ...(options.onLog === undefined ? {} : { log: options.onLog }),
    ...(options.input === undefined ? {} : { input: options.input }),
  };
}

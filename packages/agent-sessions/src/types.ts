import type { ApprovalStore } from './approvals.js';
/** One row of a session's mode history (TUL-007): a committed mode change. */
export interface ModeChange {
  readonly fromMode: string;
  readonly toMode: string;
  readonly reason: string;
  readonly branch: boolean;
  readonly org: string | null;
  readonly user: string | null;
  /** ISO-8601 time the change was committed. */
  readonly at: string;
}

/** A persisted agent session and its mode history, oldest change first. */
export interface AgentSession {
  readonly id: string;
  readonly mode: string;
  readonly org: string | null;
  readonly user: string | null;
  /** The session this one was branched from (`branch: true`), if any. */
  readonly parentId: string | null;
  readonly createdAt: string;
  readonly history: readonly ModeChange[];
}

export interface CreateSessionInput {
  readonly org?: string | null;
  readonly user?: string | null;
  /** The starting mode; the catalog's default when omitted. */
  readonly mode?: string;
  readonly parentId?: string | null;
}

export interface SetSessionModeOptions {
  /** TUL-007's intent flag: the caller means to continue the work in a new session in this mode. */
  readonly branch?: boolean;
}

/**
 * The outcome of a mode change. A refusal (unknown mode, unknown session) is a result, not an
 * exception: its message is meant for the model, and nothing was persisted.
 */
export type SetSessionModeResult =
  | { readonly applied: true; readonly session: AgentSession; readonly change: ModeChange }
  | { readonly applied: false; readonly code: 'UNKNOWN_MODE' | 'SESSION_NOT_FOUND'; readonly message: string };

/**
 * The session manager tools depend on (the records' `IAgentSessionManager`). Importing it pulls in no
 * database driver: the stores live on the `./sqlite` and `./postgres` subpaths.
 */
export interface AgentSessionManager {
  createSession(input: CreateSessionInput): Promise<AgentSession>;
  getSession(id: string): Promise<AgentSession | undefined>;
  /** TUL-007 §3.5's argument order: session, mode, reason, org, user. One transaction: the session and a history row. */
  setSessionMode(sessionId: string, mode: string, reason: string, org: string | null | undefined, user: string | null | undefined, options?: SetSessionModeOptions): Promise<SetSessionModeResult>;
}

/** The modes a session manager accepts: the catalog, seen through the one thing sessions need of it. */
export interface ModeDirectory {
  /** The valid mode keys, in catalog order. */
  modeKeys(signal?: AbortSignal): Promise<readonly string[]>;
  /** The key of the default mode. */
  defaultModeKey(signal?: AbortSignal): Promise<string>;
}

/**
 * Everything the host and the agent loop need of persisted sessions: the tools' {@link AgentSessionManager},
 * plus the link from MCP transport sessions to agent sessions and the stored conversation. Implemented by
 * the SQLite (`./sqlite`) and PostgreSQL (`./postgres`) stores; `openSessionStore` (`./open`) picks one by URL.
 */
export interface AgentSessionStore extends AgentSessionManager {
  /** Approval gates: tool calls waiting for a person, in the same database (see {@link ApprovalStore}). */
  readonly approvals: ApprovalStore;
  /**
   * Links an MCP transport session to an agent session, replacing any earlier link of that MCP session
   * (after a branch the same transport continues in the new session). Throws a `SessionStoreError`
   * `SESSION_NOT_FOUND` when the agent session does not exist.
   */
  bindMcpSession(mcpSessionId: string, agentSessionId: string): Promise<void>;
  /** The agent session an MCP transport session is bound to, or `undefined` when it is not bound. */
  getMcpBinding(mcpSessionId: string): Promise<string | undefined>;
  /**
   * Appends JSON items to a session's conversation, all or none, after every item appended before.
   * What is read back is `JSON.parse(JSON.stringify(item))`. Throws a `SessionStoreError`
   * (`SESSION_NOT_FOUND`, or `INVALID_ARGUMENT` for an item JSON cannot represent).
   */
  appendConversationItems(sessionId: string, items: readonly unknown[]): Promise<void>;
  /** The session's conversation items in the order they were appended; `[]` for an unknown session. */
  listConversationItems(sessionId: string): Promise<unknown[]>;
  /** Releases the database (closes the file, or ends the pool the store created). Idempotent; later calls throw `STORE_CLOSED`. */
  close(): Promise<void>;
}

/**
 * Where a store reports what it did (migrations applied) and what went wrong out of band (an idle
 * PostgreSQL connection dropped). A pino logger and `console` both fit.
 */
export interface SessionStoreLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

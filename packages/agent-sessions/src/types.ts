import type { ApprovalStore } from './approvals.js';
import type { McpTaskStore } from './tasks.js';
import type { AuditStore } from './audit.js';
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
  /**
   * The principal (API key name or OAuth subject) that created the session, or `null` when no one owns
   * it: created by a host without keys, or before the store recorded owners. A branch keeps its parent's.
   */
  readonly owner: string | null;
  readonly createdAt: string;
  readonly history: readonly ModeChange[];
}

/**
 * A session without its history: what a tool call in the session needs (its mode decides which tools
 * may run; org and user go into the call's context; the owner decides who may use it). Read fresh from
 * the database on every call.
 */
export interface SessionHead {
  readonly id: string;
  readonly mode: string;
  readonly org: string | null;
  readonly user: string | null;
  /** See {@link AgentSession.owner}. */
  readonly owner: string | null;
}

export interface CreateSessionInput {
  readonly org?: string | null;
  readonly user?: string | null;
  /** The starting mode; the catalog's default when omitted. */
  readonly mode?: string;
  /** Branches the new session from this one; the new session then belongs to the parent's owner. */
  readonly parentId?: string | null;
  /**
   * The principal creating the session (the API key's name, the OAuth subject); `null` or omitted for a
   * host without keys. Ignored with `parentId`: a branch always belongs to its parent's owner, so a
   * session never changes hands by being branched.
   */
  readonly owner?: string | null;
}

export interface SetSessionModeOptions {
  /** TUL-007's intent flag: the caller means to continue the work in a new session in this mode. */
  readonly branch?: boolean;
  /**
   * Ends the call early. An abort before the change commits rolls it back and answers `CANCELLED`
   * (nothing saved); once the commit is under way the answer is what the database did: the applied
   * change, or `OUTCOME_UNKNOWN` when the connection broke before the database said.
   */
  readonly signal?: AbortSignal;
}

/** Bounds on what a store persists and returns. Every one is in characters or rows. */
export interface SessionStoreLimits {
  /** The longest `reason` of a mode change. Default 1000. */
  readonly maxReasonLength?: number;
  /** The longest org, user, owner, mode key or id (session, parent, MCP session). Default 256. */
  readonly maxKeyLength?: number;
  /** History rows in a page when the caller names no limit. Default 100. */
  readonly defaultHistoryPageSize?: number;
  /** The most history rows one page may hold. Default 1000. */
  readonly maxHistoryPageSize?: number;
}

/** Which page of a session's history to read, oldest change first. */
export interface HistoryPageRequest {
  /** Rows in the page, 1 to the store's `maxHistoryPageSize`; the store's `defaultHistoryPageSize` when omitted. */
  readonly limit?: number;
  /** The `nextCursor` of the previous page; omit for the first page. Opaque: pass it back as it came. */
  readonly cursor?: string | null;
}

/** A session with one page of its history (`session.history` holds the page). */
export interface SessionPage {
  readonly session: AgentSession;
  /** Pass it as `cursor` for the next page; `null` when this page holds the newest change. */
  readonly nextCursor: string | null;
}

/**
 * The outcome of a mode change. A refusal (unknown mode, unknown session) is a result, not an
 * exception: its message is meant for the model, and nothing was persisted.
 */
export type SetSessionModeResult =
  | { readonly applied: true; readonly session: AgentSession; readonly change: ModeChange }
  /** Nothing was saved: the mode or session is unknown, or the call was cancelled (`options.signal`) before the change committed. */
  | {
      readonly applied: false;
      readonly code: 'UNKNOWN_MODE' | 'SESSION_NOT_FOUND' | 'CANCELLED';
      readonly message: string;
    }
  /**
   * The connection broke while the change was being committed: it may or may not have been saved, and
   * the message says how to check (read the session again). Never report this as either outcome.
   */
  | { readonly applied: 'unknown'; readonly code: 'OUTCOME_UNKNOWN'; readonly message: string };

/**
 * The session manager tools depend on (the records' `IAgentSessionManager`). Importing it pulls in no
 * database driver: the stores live on the `./sqlite` and `./postgres` subpaths.
 */
export interface AgentSessionManager {
  createSession(input: CreateSessionInput): Promise<AgentSession>;
  getSession(id: string): Promise<AgentSession | undefined>;
  /** TUL-007 §3.5's argument order: session, mode, reason, org, user. One transaction: the session and a history row. */
  setSessionMode(
    sessionId: string,
    mode: string,
    reason: string,
    org: string | null | undefined,
    user: string | null | undefined,
    options?: SetSessionModeOptions,
  ): Promise<SetSessionModeResult>;
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
/** An MCP transport session as the store knows it (see {@link AgentSessionStore.getMcpSession}). */
export interface McpSessionState {
  readonly agentSessionId: string;
  /** Milliseconds since it was bound or last marked used, by the store's clock. */
  readonly idleMs: number;
  /** It was closed (ended by a client or expired); it never opens again. */
  readonly closed: boolean;
  /** How many times it was marked used or rebound: a host that read it can tell whether another host used it since. */
  readonly touches: number;
}

export interface AgentSessionStore extends AgentSessionManager {
  /** Approval gates: tool calls waiting for a person, in the same database (see {@link ApprovalStore}). */
  readonly approvals: ApprovalStore;
  /** MCP tasks (long tool calls a client polls), in the same database, so any host sharing it reads them (see {@link McpTaskStore}). */
  readonly tasks: McpTaskStore;
  /** The audit trail: calls that changed something, approval decisions, mode changes (see {@link AuditStore}). */
  readonly audit: AuditStore;
  /**
   * The session's current mode, org, user and owner, without its history; `undefined` for an unknown session.
   * One prepared single-row read, never served from a cache: a mode change committed by another host
   * or process is seen by the next call. What a tool call in a session reads.
   */
  getSessionHead(id: string): Promise<SessionHead | undefined>;
  /**
   * Links an MCP transport session to an agent session, replacing any earlier link of that MCP session
   * (after a branch the same transport continues in the new session). Throws a `SessionStoreError`
   * `SESSION_NOT_FOUND` when the agent session does not exist.
   */
  bindMcpSession(mcpSessionId: string, agentSessionId: string): Promise<void>;
  /** The agent session an MCP transport session is bound to, or `undefined` when it is not bound. */
  getMcpBinding(mcpSessionId: string): Promise<string | undefined>;
  /**
   * What the store knows of an MCP transport session: its agent session, how long ago it was last
   * marked used (by the store's clock) and whether it was closed; `undefined` when it is not bound.
   * One single-row read, so any host that shares the store judges the session alike.
   */
  getMcpSession(mcpSessionId: string): Promise<McpSessionState | undefined>;
  /**
   * Marks an open MCP session used now. Returns its new `touches` count, or `undefined` when it is
   * closed or not bound (nothing written then).
   */
  touchMcpSession(mcpSessionId: string): Promise<number | undefined>;
  /**
   * Closes an MCP session for every host: it stays bound (so a refusal can name the agent session to
   * continue in) but is never open again. With `ifTouches`, only when nobody marked it used since
   * that count was read. True when this call closed it.
   */
  closeMcpSession(mcpSessionId: string, ifTouches?: number): Promise<boolean>;
  /**
   * Appends JSON items to a session's conversation, all or none, after every item appended before.
   * What is read back is `JSON.parse(JSON.stringify(item))`. Throws a `SessionStoreError`
   * (`SESSION_NOT_FOUND`, or `INVALID_ARGUMENT` for an item JSON cannot represent).
   */
  appendConversationItems(sessionId: string, items: readonly unknown[]): Promise<void>;
  /**
   * The session with one page of its history, oldest change first; `undefined` for an unknown session.
   * Throws `INVALID_ARGUMENT` for a limit out of range or a cursor the store did not give out.
   */
  getSessionPage(id: string, page?: HistoryPageRequest): Promise<SessionPage | undefined>;
  /** The session's conversation items in the order they were appended; `[]` for an unknown session. */
  listConversationItems(sessionId: string): Promise<unknown[]>;
  /**
   * Resolves when the database answers a trivial read, within the store's time-outs (and `signal`);
   * rejects with a `SessionStoreError` (`TIMEOUT`, `UNAVAILABLE`, `DATABASE_LOCKED`, `CANCELLED`,
   * `STORE_CLOSED`) when it does not. For readiness checks (`/readyz`): it writes nothing.
   */
  ping(signal?: AbortSignal): Promise<void>;
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

/** The PostgreSQL time-outs, in milliseconds. 0 turns one off (not advised). */
export interface PostgresTimeouts {
  /** Opening a connection to the server. Default 5000. */
  readonly connectionTimeoutMs?: number;
  /** Server side (`statement_timeout`): the longest one statement may run. Default 10000. */
  readonly statementTimeoutMs?: number;
  /** Server side (`lock_timeout`): the longest a statement waits for a lock, e.g. a session row another transaction holds. Default 5000. */
  readonly lockTimeoutMs?: number;
  /**
   * Client side: the longest the store waits for any answer to a statement. Past it the store asks the
   * server to cancel the statement and drops the connection. It catches a server that stopped answering,
   * and also bounds the wait for a free pooled connection; keep it above `statementTimeoutMs`, whose error
   * is clearer. Default 15000.
   */
  readonly queryTimeoutMs?: number;
  /** Server side (`idle_in_transaction_session_timeout`): a transaction left idle this long is ended, releasing its locks. Default 60000. */
  readonly idleInTransactionTimeoutMs?: number;
}

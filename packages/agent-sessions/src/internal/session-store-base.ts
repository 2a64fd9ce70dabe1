import type { AuditStore } from '../audit.js';
import type { ApprovalStore } from '../approvals.js';
import type { McpTaskStore } from '../tasks.js';
import { randomUUID } from 'node:crypto';
import { SessionStoreError } from '../errors.js';
import type {
  AgentSession,
  AgentSessionStore,
  CreateSessionInput,
  HistoryPageRequest,
  McpSessionState,
  ModeChange,
  ModeDirectory,
  SessionHead,
  SessionPage,
  SessionStoreLimits,
  SessionStoreLogger,
  SetSessionModeOptions,
  SetSessionModeResult,
} from '../types.js';
import { checkStoredString, isUnstorableKey, resolveLimits, resolvePage, type BoundedField } from './limits.js';
import { observedWrite } from './store-telemetry.js';

/** A session row about to be written. */
export interface NewSession {
  readonly id: string;
  readonly mode: string;
  readonly org: string | null;
  readonly user: string | null;
  readonly parentId: string | null;
  /** The owner given; with a `parentId` the store writes the parent's owner instead, read in the same statement. */
  readonly owner: string | null;
}

/** A mode change about to be committed; the store reads `fromMode` under its lock. */
export interface PendingModeChange {
  readonly sessionId: string;
  readonly toMode: string;
  readonly reason: string;
  readonly branch: boolean;
  readonly org: string | null;
  readonly user: string | null;
}

export const silentLogger: SessionStoreLogger = Object.freeze({ info() {}, warn() {}, error() {} });

/** The refusal text the model reads: the mode it asked for and every key it may use instead. */
export function unknownModeMessage(mode: string, keys: readonly string[]): string {
  const valid = keys.length > 0 ? keys.join(', ') : '(none: the mode catalog is empty)';
  return `Unknown mode "${mode}". Valid mode keys: ${valid}. The session's mode was not changed.`;
}

export function sessionNotFoundMessage(sessionId: string): string {
  return `Session "${sessionId}" does not exist, so its mode was not changed.`;
}

/** What a store read of one history page gives back. */
export interface HistoryPageRead {
  /** The session, its `history` holding the page. */
  readonly session: AgentSession;
  /** The `seq` of the page's last row, when rows after it exist. */
  readonly nextSeq: number | null;
}

/** The answer to a mode change whose outcome the database never told. */
function outcomeUnknown(sessionId: string): SetSessionModeResult {
  return {
    applied: 'unknown',
    code: 'OUTCOME_UNKNOWN',
    message:
      `The connection to the session store broke while the mode change of session "${sessionId}" was being committed, so it may or may not have been saved. ` +
      `Check the session's mode before doing anything else: GET /v1/sessions/${encodeURIComponent(sessionId)} or aptix sessions show ${sessionId}.`,
  };
}

function requireId(what: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `${what} must be a non-empty string; got ${(JSON.stringify(value) as string | undefined) ?? String(value)}.`,
    );
  }
  return value;
}

function optionalText(what: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string')
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `${what} must be a string, null or undefined; got ${typeof value}.`,
    );
  return value;
}

/** Each item as JSON text, or an error naming the first item JSON cannot represent. */
function serializeItems(items: readonly unknown[]): string[] {
  if (!Array.isArray(items))
    throw new SessionStoreError('INVALID_ARGUMENT', `Conversation items must be an array; got ${typeof items}.`);
  const fix = 'Pass plain JSON values: objects, arrays, strings, finite numbers, booleans and null.';
  return items.map((item, index) => {
    let json: string | undefined;
    try {
      json = JSON.stringify(item);
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw new SessionStoreError(
        'INVALID_ARGUMENT',
        `Conversation item ${index} cannot be stored as JSON (${reason}); nothing was appended. ${fix}`,
        { cause },
      );
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, a function or a symbol, whatever its declared type says
    if (json === undefined) {
      throw new SessionStoreError(
        'INVALID_ARGUMENT',
        `Conversation item ${index} is ${typeof item}, which JSON cannot represent; nothing was appended. ${fix}`,
      );
    }
    return json;
  });
}

/**
 * What both stores share: the catalog checks, the refusals, the argument checks and the closed state.
 * A store supplies the storage operations; each mode change it commits is one transaction that reads
 * the current mode under a write lock on the session, appends the history row and updates the session.
 */
export abstract class SessionStoreBase implements AgentSessionStore {
  #closed = false;
  abstract readonly approvals: ApprovalStore;
  abstract readonly tasks: McpTaskStore;
  abstract readonly audit: AuditStore;
  protected readonly limits: Required<SessionStoreLimits>;

  protected constructor(
    protected readonly modes: ModeDirectory,
    /** Names the database in error messages, e.g. `SQLite database /srv/.aptix/aptix.db`. */
    protected readonly location: string,
    limits: SessionStoreLimits | undefined,
  ) {
    this.limits = resolveLimits(limits);
  }

  #bounded(field: BoundedField, value: string): string {
    checkStoredString(this.limits, field, value);
    return value;
  }

  #optionalBounded(field: 'org' | 'user' | 'owner', value: unknown): string | null {
    const text = optionalText(field, value);
    return text === null ? null : this.#bounded(field, text);
  }

  async createSession(input: CreateSessionInput = {}): Promise<AgentSession> {
    this.#assertOpen();
    const org = this.#optionalBounded('org', input.org);
    const user = this.#optionalBounded('user', input.user);
    const owner = this.#optionalBounded('owner', input.owner);
    if (typeof input.mode === 'string') this.#bounded('mode', input.mode);
    const keys = await this.modes.modeKeys();
    let mode = input.mode;
    if (mode === undefined) {
      mode = await this.modes.defaultModeKey();
      if (!keys.includes(mode)) {
        throw new SessionStoreError(
          'CATALOG_INCONSISTENT',
          `The mode catalog's default mode "${mode}" is not one of its mode keys (${keys.join(', ')}); fix the catalog.`,
        );
      }
    } else if (!keys.includes(mode)) {
      throw new SessionStoreError(
        'UNKNOWN_MODE',
        `Cannot create a session in unknown mode "${mode}". Valid mode keys: ${keys.join(', ')}; or omit mode to use the catalog's default.`,
      );
    }
    const parentId =
      input.parentId === undefined || input.parentId === null
        ? null
        : this.#bounded('parentId', requireId('parentId', input.parentId));
    const session = { id: randomUUID(), mode, org, user, parentId, owner };
    return observedWrite(this.location, 'create_session', () => this.insertSession(session));
  }

  async getSession(id: string): Promise<AgentSession | undefined> {
    this.#assertOpen();
    if (typeof id !== 'string' || id === '' || isUnstorableKey(this.limits, id)) return undefined;
    return this.readSession(id);
  }

  /** Not an async function: it is read on every call in a session, and each async layer costs a promise and turns of the microtask queue. */
  getSessionHead(id: string): Promise<SessionHead | undefined> {
    if (this.#closed) return Promise.reject(this.#closedError());
    if (typeof id !== 'string' || id === '' || isUnstorableKey(this.limits, id)) return Promise.resolve(undefined);
    return this.readSessionHead(id);
  }

  async getSessionPage(id: string, page?: HistoryPageRequest): Promise<SessionPage | undefined> {
    this.#assertOpen();
    const { limit, afterSeq } = resolvePage(this.limits, page);
    if (typeof id !== 'string' || id === '' || isUnstorableKey(this.limits, id)) return undefined;
    const read = await this.readSessionPage(id, afterSeq, limit);
    if (read === undefined) return undefined;
    return { session: read.session, nextCursor: read.nextSeq === null ? null : String(read.nextSeq) };
  }

  async setSessionMode(
    sessionId: string,
    mode: string,
    reason: string,
    org: string | null | undefined,
    user: string | null | undefined,
    options: SetSessionModeOptions = {},
  ): Promise<SetSessionModeResult> {
    this.#assertOpen();
    if (typeof reason !== 'string')
      throw new SessionStoreError('INVALID_ARGUMENT', `reason must be a string; got ${typeof reason}.`);
    const branch = options.branch ?? false;
    if (typeof branch !== 'boolean')
      throw new SessionStoreError('INVALID_ARGUMENT', `options.branch must be a boolean; got ${typeof branch}.`);
    const { signal } = options;
    // Every bound is checked before anything else, so an oversized value never reaches a message or the database.
    this.#bounded('reason', reason);
    if (typeof mode === 'string') this.#bounded('mode', mode);
    if (typeof sessionId === 'string' && sessionId.length > this.limits.maxKeyLength)
      this.#bounded('sessionId', sessionId);
    const pending = {
      sessionId,
      toMode: mode,
      reason,
      branch,
      org: this.#optionalBounded('org', org),
      user: this.#optionalBounded('user', user),
    };
    const cancelled = (): SetSessionModeResult => ({
      applied: false,
      code: 'CANCELLED',
      message: `The mode change was cancelled before it was saved; the mode of session "${sessionId}" is unchanged.`,
    });
    if (signal?.aborted) return cancelled();
    // A catalog that honours the signal may reject with its own abort error: that is a cancellation too.
    const keys = await this.modes.modeKeys(signal).catch((error: unknown) => {
      if (signal?.aborted) return undefined;
      throw error;
    });
    if (keys === undefined) return cancelled();
    if (typeof mode !== 'string' || !keys.includes(mode)) {
      return { applied: false, code: 'UNKNOWN_MODE', message: unknownModeMessage(String(mode), keys) };
    }
    if (typeof sessionId !== 'string' || sessionId === '' || isUnstorableKey(this.limits, sessionId)) {
      return { applied: false, code: 'SESSION_NOT_FOUND', message: sessionNotFoundMessage(String(sessionId)) };
    }
    if (signal?.aborted) return cancelled();
    let committed: { session: AgentSession; change: ModeChange } | undefined;
    try {
      committed = await observedWrite(this.location, 'change_mode', () => this.commitModeChange(pending, signal));
    } catch (error) {
      if (error instanceof SessionStoreError && error.code === 'CANCELLED') return cancelled();
      if (error instanceof SessionStoreError && error.code === 'OUTCOME_UNKNOWN') return outcomeUnknown(sessionId);
      throw error;
    }
    if (committed === undefined)
      return { applied: false, code: 'SESSION_NOT_FOUND', message: sessionNotFoundMessage(sessionId) };
    return { applied: true, session: committed.session, change: committed.change };
  }

  async bindMcpSession(mcpSessionId: string, agentSessionId: string): Promise<void> {
    this.#assertOpen();
    const mcp = this.#bounded('mcpSessionId', requireId('mcpSessionId', mcpSessionId));
    const agent = this.#bounded('agentSessionId', requireId('agentSessionId', agentSessionId));
    await observedWrite(this.location, 'bind_mcp_session', () => this.writeMcpBinding(mcp, agent));
  }

  async getMcpBinding(mcpSessionId: string): Promise<string | undefined> {
    this.#assertOpen();
    const id = requireId('mcpSessionId', mcpSessionId);
    if (isUnstorableKey(this.limits, id)) return undefined;
    return this.readMcpBinding(id);
  }

  async getMcpSession(mcpSessionId: string): Promise<McpSessionState | undefined> {
    this.#assertOpen();
    const id = requireId('mcpSessionId', mcpSessionId);
    if (isUnstorableKey(this.limits, id)) return undefined;
    return this.readMcpSession(id);
  }

  async touchMcpSession(mcpSessionId: string): Promise<number | undefined> {
    this.#assertOpen();
    const id = requireId('mcpSessionId', mcpSessionId);
    if (isUnstorableKey(this.limits, id)) return undefined;
    return observedWrite(this.location, 'touch_mcp_session', () => this.markMcpSessionUsed(id));
  }

  async closeMcpSession(mcpSessionId: string, ifTouches?: number): Promise<boolean> {
    this.#assertOpen();
    const id = requireId('mcpSessionId', mcpSessionId);
    if (ifTouches !== undefined && !Number.isSafeInteger(ifTouches))
      throw new SessionStoreError(
        'INVALID_ARGUMENT',
        `ifTouches must be an integer (a touches count getMcpSession or touchMcpSession gave); got ${String(ifTouches)}.`,
      );
    if (isUnstorableKey(this.limits, id)) return false;
    return observedWrite(this.location, 'close_mcp_session', () => this.markMcpSessionClosed(id, ifTouches));
  }

  async appendConversationItems(sessionId: string, items: readonly unknown[]): Promise<void> {
    this.#assertOpen();
    const id = this.#bounded('sessionId', requireId('sessionId', sessionId));
    const serialized = serializeItems(items);
    await observedWrite(this.location, 'append_conversation_items', () => this.insertConversationItems(id, serialized));
  }

  async listConversationItems(sessionId: string): Promise<unknown[]> {
    this.#assertOpen();
    if (typeof sessionId !== 'string' || sessionId === '' || isUnstorableKey(this.limits, sessionId)) return [];
    return this.readConversationItems(sessionId);
  }

  async ping(signal?: AbortSignal): Promise<void> {
    this.#assertOpen();
    if (signal?.aborted) throw new SessionStoreError('CANCELLED', `The ping of the ${this.location} was cancelled.`);
    await this.probe(signal);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.release();
  }

  /** The error for a parent or bound session that does not exist. */
  protected sessionNotFound(what: string, sessionId: string, cause?: unknown): SessionStoreError {
    return new SessionStoreError(
      'SESSION_NOT_FOUND',
      `${what} "${sessionId}" does not exist in the ${this.location}; create it with createSession first.`,
      { cause },
    );
  }

  #assertOpen(): void {
    if (this.#closed) throw this.#closedError();
  }

  #closedError(): SessionStoreError {
    return new SessionStoreError(
      'STORE_CLOSED',
      `The session store on the ${this.location} is closed; open a new one (openSessionStore) to use it again.`,
    );
  }

  /**
   * Writes a new session; throws {@link sessionNotFound} when `parentId` names no session. A branch (with
   * `parentId`) takes its parent's owner in the same statement, so it can never belong to anyone else.
   */
  protected abstract insertSession(session: NewSession): Promise<AgentSession>;
  /** One consistent snapshot of the session and its history, oldest change first. */
  protected abstract readSession(id: string): Promise<AgentSession | undefined>;
  /** The session's row alone (one prepared statement, no cache), for {@link getSessionHead}. */
  protected abstract readSessionHead(id: string): Promise<SessionHead | undefined>;
  /** The session and the history rows after `afterSeq`, at most `limit`, in one consistent snapshot. */
  protected abstract readSessionPage(id: string, afterSeq: number, limit: number): Promise<HistoryPageRead | undefined>;
  /**
   * One transaction; `undefined` (and nothing written) when the session does not exist. Checks `signal`
   * before it commits, and throws `CANCELLED` when it was aborted (nothing written); throws
   * `OUTCOME_UNKNOWN` when the commit went unanswered.
   */
  protected abstract commitModeChange(
    change: PendingModeChange,
    signal: AbortSignal | undefined,
  ): Promise<{ session: AgentSession; change: ModeChange } | undefined>;
  /** Upserts the binding; throws {@link sessionNotFound} when the agent session does not exist. */
  protected abstract writeMcpBinding(mcpSessionId: string, agentSessionId: string): Promise<void>;
  protected abstract readMcpBinding(mcpSessionId: string): Promise<string | undefined>;
  protected abstract readMcpSession(mcpSessionId: string): Promise<McpSessionState | undefined>;
  /** Sets the last use to now and counts a touch, unless closed; the new count, or `undefined` when closed or unbound. */
  protected abstract markMcpSessionUsed(mcpSessionId: string): Promise<number | undefined>;
  /** Sets `closed_at` unless already closed (and, with `ifTouches`, unless touched since); forgets the bound agent session's cached history. */
  protected abstract markMcpSessionClosed(mcpSessionId: string, ifTouches: number | undefined): Promise<boolean>;
  /** One transaction, after every item already stored; throws {@link sessionNotFound} for an unknown session. */
  protected abstract insertConversationItems(sessionId: string, items: readonly string[]): Promise<void>;
  protected abstract readConversationItems(sessionId: string): Promise<unknown[]>;
  /** One trivial read, bounded by the store's time-outs and `signal`; throws a {@link SessionStoreError} when the database does not answer. */
  protected abstract probe(signal: AbortSignal | undefined): Promise<void>;
  /** Frees the database resources; called once. */
  protected abstract release(): Promise<void>;
}

/**
 * @aptix/agent-sessions/sqlite: the session store over better-sqlite3, the default for one host.
 * Everything exported here is public API.
 */
import { HistoryCache } from '../internal/history-cache.js';
import {
  SessionStoreBase,
  silentLogger,
  type HistoryPageRead,
  type NewSession,
  type PendingModeChange,
} from '../internal/session-store-base.js';
import { SessionStoreError } from '../errors.js';
import type {
  AgentSession,
  McpSessionState,
  ModeChange,
  ModeDirectory,
  SessionHead,
  SessionStoreLimits,
  SessionStoreLogger,
} from '../types.js';
import { retryWhileBusy } from './busy.js';
import type Database from 'better-sqlite3';
import { MIGRATIONS_TABLE } from '../internal/migrations.js';
import { SqliteApprovalStore } from './approvals.js';
import { SqliteTaskStore } from './tasks.js';
import { SqliteAuditStore } from './audit.js';
import { AuditWriterThread } from './audit-writer.js';
import {
  isForeignKeyViolation,
  MEMORY,
  openDatabase,
  toChange,
  type ChangeRow,
  type OpenedDatabase,
  type SessionRow,
} from './database.js';

/**
 * The better-sqlite3 `Database` class the store runs on in this process (13 on Node 22.14 and later, 12
 * before), and which package that is. Open other connections to a store's file in the same process
 * with it: two copies of SQLite in one process drop each other's locks on a shared file.
 */
export { Database as SqliteDatabase, SQLITE_DRIVER, type SqliteDriver } from './driver.js';

export interface SqliteSessionStoreOptions {
  /**
   * The database file, resolved against the working directory; its folder is created when missing.
   * `:memory:` gives a private in-memory database that ends with the store. A file or folder this
   * process cannot write is refused at open (`NOT_WRITABLE`).
   */
  readonly filename: string;
  /** The catalog: which modes exist and which one new sessions start in. */
  readonly modes: ModeDirectory;
  readonly logger?: SessionStoreLogger;
  /**
   * How long a call waits for another process's lock before failing with `DATABASE_LOCKED`, in
   * milliseconds. Default 5000. The wait does not block the event loop: each attempt blocks at most
   * a few milliseconds, and the store retries with a growing pause in between.
   */
  readonly busyTimeoutMs?: number;
  /** Bounds on the strings it stores and the history pages it returns. */
  readonly limits?: SessionStoreLimits;
  /**
   * Where the audit trail's batches and prunes are written. `worker` (the default): on a worker thread
   * with a connection of its own to the same file, off the event loop; `inline`: on the store's own
   * connection, holding the event loop while each runs. A database in memory, or one SQLite keeps out
   * of WAL mode (where a second connection's writes would block the store's reads), is always written
   * inline.
   */
  readonly auditWriter?: 'worker' | 'inline';
}

/** Every statement the store runs, prepared once after the migrations. */
function prepareStatements(db: Database.Database) {
  return {
    /** A branch takes its parent's owner in the same statement; a missing parent fails the foreign key. */
    insertSession: db.prepare<[NewSession & { at: string }], { owner_id: string | null }>(
      'INSERT INTO agent_sessions (id, mode, org_id, user_id, parent_id, owner_id, created_at, updated_at) ' +
        'VALUES (@id, @mode, @org, @user, @parentId, CASE WHEN @parentId IS NULL THEN @owner ELSE (SELECT owner_id FROM agent_sessions WHERE id = @parentId) END, @at, @at) ' +
        'RETURNING owner_id',
    ),
    session: db.prepare<[string], SessionRow>(
      'SELECT id, mode, org_id, user_id, parent_id, owner_id, created_at, ' +
        '(SELECT coalesce(max(seq), 0) FROM agent_session_mode_changes WHERE session_id = agent_sessions.id) AS last_seq FROM agent_sessions WHERE id = ?',
    ),
    /** The history rows in (after, upTo]: what a read lacks of what it holds. */
    historyBetween: db.prepare<[string, number, number], ChangeRow>(
      'SELECT from_mode, to_mode, reason, branch, org_id, user_id, changed_at FROM agent_session_mode_changes WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq',
    ),
    /** One page: the rows after a seq, at most the limit given (the store asks for one more, to know whether more follow). */
    historyPage: db.prepare<[string, number, number], ChangeRow & { seq: number }>(
      'SELECT seq, from_mode, to_mode, reason, branch, org_id, user_id, changed_at FROM agent_session_mode_changes WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    probe: db.prepare<[], { version: number }>(`SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`),
    /**
     * What a tool call in a session needs: one row by primary key, no history, as an array (`raw`).
     * better-sqlite3 builds an object row by setting each named property through V8's slow path; the
     * array and the `id` left out (it is the key asked for) cut the read from 17.7k to 12.2k
     * instructions (callgrind, 20 000 reads of a real WAL file). The owner, read for access checks,
     * is the one column added since (schema version 7): about 1.1k more per read when it is NULL, 1.9k
     * when it holds a name (callgrind, the statement alone, 40 000 reads).
     */
    head: db
      .prepare<[string], [mode: string, org: string | null, user: string | null, owner: string | null]>(
        'SELECT mode, org_id, user_id, owner_id FROM agent_sessions WHERE id = ?',
      )
      .raw(),
    currentMode: db.prepare<[string], { mode: string }>('SELECT mode FROM agent_sessions WHERE id = ?'),
    insertChange: db.prepare<[string, string, string, string, 0 | 1, string | null, string | null, string]>(
      'INSERT INTO agent_session_mode_changes (session_id, from_mode, to_mode, reason, branch, org_id, user_id, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    updateMode: db.prepare<[string, string, string]>('UPDATE agent_sessions SET mode = ?, updated_at = ? WHERE id = ?'),
    // A rebind (after a branch) counts as a use; it never reopens a closed session.
    upsertBinding: db.prepare<[string, string, string]>(
      'INSERT INTO agent_mcp_session_bindings (mcp_session_id, agent_session_id, bound_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (mcp_session_id) DO UPDATE SET agent_session_id = excluded.agent_session_id, bound_at = excluded.bound_at, last_used_at = NULL, touches = touches + 1',
    ),
    mcpSession: db.prepare<[string], { agent_session_id: string; used_at: string; closed: 0 | 1; touches: number }>(
      'SELECT agent_session_id, coalesce(last_used_at, bound_at) AS used_at, closed_at IS NOT NULL AS closed, touches FROM agent_mcp_session_bindings WHERE mcp_session_id = ?',
    ),
    touchMcpSession: db.prepare<[string, string], { touches: number }>(
      'UPDATE agent_mcp_session_bindings SET last_used_at = ?, touches = touches + 1 WHERE mcp_session_id = ? AND closed_at IS NULL RETURNING touches',
    ),
    closeMcpSession: db.prepare<[string, string, number | null, number | null], { agent_session_id: string }>(
      'UPDATE agent_mcp_session_bindings SET closed_at = ? WHERE mcp_session_id = ? AND closed_at IS NULL AND (? IS NULL OR touches = ?) RETURNING agent_session_id',
    ),
    binding: db.prepare<[string], { agent_session_id: string }>(
      'SELECT agent_session_id FROM agent_mcp_session_bindings WHERE mcp_session_id = ?',
    ),
    lastPosition: db.prepare<[string], { last: number }>(
      'SELECT coalesce(max(position), 0) AS last FROM agent_conversation_items WHERE session_id = ?',
    ),
    insertItem: db.prepare<[string, number, string, string]>(
      'INSERT INTO agent_conversation_items (session_id, position, item, appended_at) VALUES (?, ?, ?, ?)',
    ),
    items: db.prepare<[string], { item: string }>(
      'SELECT item FROM agent_conversation_items WHERE session_id = ? ORDER BY position',
    ),
  };
}
type Statements = ReturnType<typeof prepareStatements>;

/**
 * The SQLite session store. better-sqlite3 is synchronous, so each attempt of an operation runs to
 * completion on this thread; writes are IMMEDIATE transactions, which take SQLite's write lock up front.
 * While another process holds the lock, the store retries without blocking (see `busyTimeoutMs`).
 */
export class SqliteSessionStore extends SessionStoreBase {
  /** The absolute path of the database file, or `:memory:`. */
  readonly filename: string;
  /** The schema version of the database after start-up migrations. */
  readonly schemaVersion: number;
  readonly #db: Database.Database;
  readonly #sql: Statements;
  readonly #histories = new HistoryCache();
  /** The approval gates of tool calls, in the same database. */
  readonly approvals: SqliteApprovalStore;
  /** MCP tasks, in the same database. */
  readonly tasks: SqliteTaskStore;
  /** The audit trail, in the same database. */
  readonly audit: SqliteAuditStore;
  readonly #busyTimeoutMs: number;
  readonly #auditWriter: AuditWriterThread | undefined;

  private constructor(
    modes: ModeDirectory,
    opened: OpenedDatabase,
    busyTimeoutMs: number,
    options: SqliteSessionStoreOptions,
  ) {
    super(modes, `SQLite database ${opened.filename}`, options.limits);
    this.filename = opened.filename;
    this.schemaVersion = opened.schemaVersion;
    this.#db = opened.db;
    this.approvals = new SqliteApprovalStore(opened.db, (operation) => this.#run(operation));
    this.tasks = new SqliteTaskStore(opened.db, (operation) => this.#run(operation));
    this.#auditWriter =
      (options.auditWriter ?? 'worker') === 'worker' && opened.filename !== MEMORY && opened.journalMode === 'wal'
        ? new AuditWriterThread({ filename: opened.filename, busyTimeoutMs, location: this.location })
        : undefined;
    this.audit = new SqliteAuditStore(opened.db, (operation) => this.#run(operation), this.#auditWriter);
    this.#sql = prepareStatements(opened.db);
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  /** Use {@link openSqliteSessionStore}. */
  static async open(options: SqliteSessionStoreOptions): Promise<SqliteSessionStore> {
    const busyTimeoutMs = Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000));
    const opened = await openDatabase({ filename: options.filename, busyTimeoutMs }, options.logger ?? silentLogger);
    try {
      return new SqliteSessionStore(options.modes, opened, busyTimeoutMs, options);
    } catch (error) {
      opened.db.close();
      throw error;
    }
  }

  /** Runs one statement or transaction, waiting (without blocking) while another process holds the lock. */
  #run<T>(operation: () => T, signal?: AbortSignal): Promise<T> {
    return retryWhileBusy(operation, { waitMs: this.#busyTimeoutMs, location: this.location, signal });
  }

  /**
   * The session and its history. The session row and its last `seq` come from one statement, and rows
   * up to that `seq` never change, so the history read next (only the rows not yet held) matches the
   * mode without a transaction around the two.
   */
  #read(id: string): AgentSession | undefined {
    const row = this.#sql.session.get(id);
    if (row === undefined) {
      this.#histories.forget(id);
      return undefined;
    }
    const base = this.#histories.base(id);
    const history = this.#histories.extend(id, base, this.#rowsAfter(id, base.lastSeq, row.last_seq), row.last_seq);
    return toSession(row, row.mode, history);
  }

  /** The session's history rows in (after, upTo]: none to read when nothing was added since. */
  #rowsAfter(id: string, after: number, upTo: number): ModeChange[] {
    return after >= upTo ? [] : this.#sql.historyBetween.all(id, after, upTo).map(toChange);
  }

  protected async insertSession(session: NewSession): Promise<AgentSession> {
    const at = new Date().toISOString();
    let inserted: { owner_id: string | null } | undefined;
    try {
      inserted = await this.#run(() => this.#sql.insertSession.get({ ...session, at }));
    } catch (error) {
      if (isForeignKeyViolation(error) && session.parentId !== null)
        throw this.sessionNotFound('Parent session', session.parentId, error);
      throw error;
    }
    return { ...session, owner: inserted!.owner_id, createdAt: at, history: [] };
  }

  protected async readSession(id: string): Promise<AgentSession | undefined> {
    return this.#run(() => this.#read(id));
  }

  protected readSessionHead(id: string): Promise<SessionHead | undefined> {
    return this.#run(() => {
      const row = this.#sql.head.get(id);
      // `id = ?` on a TEXT key is a byte-for-byte match, so the row's id is `id`.
      return row === undefined ? undefined : { id, mode: row[0], org: row[1], user: row[2], owner: row[3] };
    });
  }

  /** The session row and the page, in one read transaction: one snapshot even with writers in other processes. */
  protected async readSessionPage(id: string, afterSeq: number, limit: number): Promise<HistoryPageRead | undefined> {
    return this.#run(() =>
      this.#db.transaction(() => {
        const row = this.#sql.session.get(id);
        if (row === undefined) return undefined;
        const rows = this.#sql.historyPage.all(id, afterSeq, limit + 1);
        const more = rows.length > limit;
        const page = more ? rows.slice(0, limit) : rows;
        return { session: toSession(row, row.mode, page.map(toChange)), nextSeq: more ? page.at(-1)!.seq : null };
      })(),
    );
  }

  /**
   * One IMMEDIATE transaction: read the session (and its last `seq`) under the write lock, append the
   * history row, update the mode. The signal is checked inside it, just before it commits: an aborted
   * call rolls back (`CANCELLED`), and a change that committed is reported as committed. The history
   * returned is kept only once the transaction committed.
   */
  protected async commitModeChange(
    pending: PendingModeChange,
    signal: AbortSignal | undefined,
  ): Promise<{ session: AgentSession; change: ModeChange } | undefined> {
    const { sessionId } = pending;
    const committed = await this.#run(
      () =>
        this.#db
          .transaction(() => {
            const current = this.#sql.session.get(sessionId);
            if (current === undefined) return undefined;
            const base = this.#histories.base(sessionId);
            const newer = this.#rowsAfter(sessionId, base.lastSeq, current.last_seq);
            const at = new Date().toISOString();
            const { lastInsertRowid } = this.#sql.insertChange.run(
              sessionId,
              current.mode,
              pending.toMode,
              pending.reason,
              pending.branch ? 1 : 0,
              pending.org,
              pending.user,
              at,
            );
            this.#sql.updateMode.run(pending.toMode, at, sessionId);
            const change: ModeChange = {
              fromMode: current.mode,
              toMode: pending.toMode,
              reason: pending.reason,
              branch: pending.branch,
              org: pending.org,
              user: pending.user,
              at,
            };
            newer.push(change);
            signal?.throwIfAborted(); // rolls the transaction back; turned into CANCELLED below
            return { current, base, newer, change, seq: Number(lastInsertRowid) };
          })
          .immediate(),
      signal,
    ).catch((error: unknown) => {
      if (signal?.aborted && error === signal.reason) {
        throw new SessionStoreError(
          'CANCELLED',
          `The mode change was cancelled before it committed to the ${this.location}; nothing was written.`,
          { cause: error },
        );
      }
      throw error;
    });
    if (committed === undefined) return undefined;
    const { current, base, newer, change, seq } = committed;
    const history = this.#histories.extend(sessionId, base, newer, seq);
    return { session: toSession(current, pending.toMode, history), change };
  }

  protected async writeMcpBinding(mcpSessionId: string, agentSessionId: string): Promise<void> {
    try {
      await this.#run(() => this.#sql.upsertBinding.run(mcpSessionId, agentSessionId, new Date().toISOString()));
    } catch (error) {
      if (isForeignKeyViolation(error)) throw this.sessionNotFound('Agent session', agentSessionId, error);
      throw error;
    }
  }

  protected async readMcpBinding(mcpSessionId: string): Promise<string | undefined> {
    return this.#run(() => this.#sql.binding.get(mcpSessionId)?.agent_session_id);
  }

  protected async readMcpSession(mcpSessionId: string): Promise<McpSessionState | undefined> {
    const row = await this.#run(() => this.#sql.mcpSession.get(mcpSessionId));
    if (row === undefined) return undefined;
    return {
      agentSessionId: row.agent_session_id,
      idleMs: Math.max(0, Date.now() - Date.parse(row.used_at)),
      closed: row.closed === 1,
      touches: row.touches,
    };
  }

  protected async markMcpSessionUsed(mcpSessionId: string): Promise<number | undefined> {
    return this.#run(() => this.#sql.touchMcpSession.get(new Date().toISOString(), mcpSessionId)?.touches);
  }

  protected async markMcpSessionClosed(mcpSessionId: string, ifTouches: number | undefined): Promise<boolean> {
    const guard = ifTouches ?? null;
    const closed = await this.#run(() =>
      this.#sql.closeMcpSession.get(new Date().toISOString(), mcpSessionId, guard, guard),
    );
    if (closed === undefined) return false;
    // Its agent session's history is read again if it is continued; most are not, and the cache is bounded by rows, not sessions.
    this.#histories.forget(closed.agent_session_id);
    return true;
  }

  protected async insertConversationItems(sessionId: string, items: readonly string[]): Promise<void> {
    await this.#run(() =>
      this.#db
        .transaction(() => {
          if (this.#sql.currentMode.get(sessionId) === undefined) throw this.sessionNotFound('Session', sessionId);
          const last = this.#sql.lastPosition.get(sessionId)?.last ?? 0;
          const at = new Date().toISOString();
          items.forEach((item, index) => this.#sql.insertItem.run(sessionId, last + index + 1, item, at));
        })
        .immediate(),
    );
  }

  protected async readConversationItems(sessionId: string): Promise<unknown[]> {
    return this.#run(() => this.#sql.items.all(sessionId).map((row) => JSON.parse(row.item) as unknown));
  }

  /** Reads the bookkeeping table: touches the file, so a lock that blocks readers shows as `DATABASE_LOCKED`. */
  protected async probe(signal: AbortSignal | undefined): Promise<void> {
    await this.#run(() => this.#sql.probe.get(), signal);
  }

  /** Writes what the audit writer thread holds and ends it, then closes the connection. */
  protected async release(): Promise<void> {
    await this.#auditWriter?.close();
    this.#db.close();
  }
}

function toSession(row: SessionRow, mode: string, history: readonly ModeChange[]): AgentSession {
  return {
    id: row.id,
    mode,
    org: row.org_id,
    user: row.user_id,
    parentId: row.parent_id,
    owner: row.owner_id,
    createdAt: row.created_at,
    history,
  };
}

/**
 * Opens (creating when missing) a SQLite session database and applies pending schema migrations.
 * @example
 * const store = await openSqliteSessionStore({ filename: './.aptix/aptix.db', modes: catalog });
 * const session = await store.createSession({ org: 'acme', user: 'kevin' });
 * await store.close();
 */
export function openSqliteSessionStore(options: SqliteSessionStoreOptions): Promise<SqliteSessionStore> {
  return SqliteSessionStore.open(options);
}

/**
 * @aptix/agent-sessions/sqlite: the session store over better-sqlite3, the default for one host.
 * Everything exported here is public API.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { HistoryCache } from '../internal/history-cache.js';
import { MIGRATIONS_TABLE, pendingMigrations } from '../internal/migrations.js';
import { SessionStoreBase, silentLogger, type NewSession, type PendingModeChange } from '../internal/session-store-base.js';
import type { AgentSession, ModeChange, ModeDirectory, SessionStoreLogger } from '../types.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import { SqliteApprovalStore } from './approvals.js';

export interface SqliteSessionStoreOptions {
  /**
   * The database file, resolved against the working directory; its folder is created when missing.
   * `:memory:` gives a private in-memory database that ends with the store.
   */
  readonly filename: string;
  /** The catalog: which modes exist and which one new sessions start in. */
  readonly modes: ModeDirectory;
  readonly logger?: SessionStoreLogger;
  /**
   * How long a write waits for another process's write lock before failing with `SQLITE_BUSY`, in
   * milliseconds (SQLite's `busy_timeout`). Default 5000.
   */
  readonly busyTimeoutMs?: number;
}

interface SessionRow {
  id: string;
  mode: string;
  org_id: string | null;
  user_id: string | null;
  parent_id: string | null;
  created_at: string;
  /** The session's highest history `seq` (0 without history), read in the same statement. */
  last_seq: number;
}

interface ChangeRow {
  from_mode: string;
  to_mode: string;
  reason: string;
  branch: 0 | 1;
  org_id: string | null;
  user_id: string | null;
  changed_at: string;
}

const MEMORY = ':memory:';

function toChange(row: ChangeRow): ModeChange {
  return { fromMode: row.from_mode, toMode: row.to_mode, reason: row.reason, branch: row.branch === 1, org: row.org_id, user: row.user_id, at: row.changed_at };
}

function isForeignKeyViolation(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** Opens the database with its pragmas and applies pending migrations; closes it again if that fails. */
function openDatabase(options: SqliteSessionStoreOptions, logger: SessionStoreLogger): { db: Database.Database; filename: string; schemaVersion: number } {
  const filename = options.filename === MEMORY ? MEMORY : resolve(options.filename);
  if (filename !== MEMORY) mkdirSync(dirname(filename), { recursive: true });
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const db = new Database(filename, { timeout: busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`);
    const journalMode = db.pragma('journal_mode = WAL', { simple: true });
    if (filename !== MEMORY && journalMode !== 'wal') {
      logger.warn({ store: 'sqlite', filename, journalMode }, 'SQLite refused WAL mode for the session database (is it on a network file system?); writers will block readers.');
    }
    // WAL with synchronous=NORMAL: a commit is written to the WAL but fsync'd only at checkpoints. The
    // database never corrupts, and a crash of this process loses nothing committed (the OS still holds
    // the write); only an OS crash or power loss may roll back the last few commits. For sessions and
    // their modes that is the right trade against an fsync per mode change (synchronous=FULL).
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    const schemaVersion = migrate(db, filename, logger);
    return { db, filename, schemaVersion };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Applies pending migrations in one IMMEDIATE transaction: two processes starting at once serialize on
 * SQLite's write lock, and the second finds the versions the first recorded.
 */
function migrate(db: Database.Database, filename: string, logger: SessionStoreLogger): number {
  return db
    .transaction(() => {
      db.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
      const applied = db.prepare<[], { version: number }>(`SELECT version FROM ${MIGRATIONS_TABLE} ORDER BY version`).all().map((row) => row.version);
      const pending = pendingMigrations(`SQLite database ${filename}`, applied, SQLITE_MIGRATIONS);
      const record = db.prepare<[number, string, string]>(`INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_at) VALUES (?, ?, ?)`);
      for (const migration of pending) {
        db.exec(migration.sql);
        record.run(migration.version, migration.name, new Date().toISOString());
      }
      if (pending.length > 0) {
        logger.info({ store: 'sqlite', filename, applied: pending.map((m) => m.version) }, `Migrated the session database to schema version ${pending.at(-1)?.version}.`);
      }
      return Math.max(0, ...applied, ...pending.map((m) => m.version));
    })
    .immediate();
}

/** Every statement the store runs, prepared once after the migrations. */
function prepareStatements(db: Database.Database) {
  return {
    insertSession: db.prepare<[string, string, string | null, string | null, string | null, string, string]>(
      'INSERT INTO agent_sessions (id, mode, org_id, user_id, parent_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    session: db.prepare<[string], SessionRow>(
      'SELECT id, mode, org_id, user_id, parent_id, created_at, ' +
        '(SELECT coalesce(max(seq), 0) FROM agent_session_mode_changes WHERE session_id = agent_sessions.id) AS last_seq FROM agent_sessions WHERE id = ?',
    ),
    /** The history rows in (after, upTo]: what a read lacks of what it holds. */
    historyBetween: db.prepare<[string, number, number], ChangeRow>(
      'SELECT from_mode, to_mode, reason, branch, org_id, user_id, changed_at FROM agent_session_mode_changes WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq',
    ),
    currentMode: db.prepare<[string], { mode: string }>('SELECT mode FROM agent_sessions WHERE id = ?'),
    insertChange: db.prepare<[string, string, string, string, 0 | 1, string | null, string | null, string]>(
      'INSERT INTO agent_session_mode_changes (session_id, from_mode, to_mode, reason, branch, org_id, user_id, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    updateMode: db.prepare<[string, string, string]>('UPDATE agent_sessions SET mode = ?, updated_at = ? WHERE id = ?'),
    upsertBinding: db.prepare<[string, string, string]>(
      'INSERT INTO agent_mcp_session_bindings (mcp_session_id, agent_session_id, bound_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (mcp_session_id) DO UPDATE SET agent_session_id = excluded.agent_session_id, bound_at = excluded.bound_at',
    ),
    binding: db.prepare<[string], { agent_session_id: string }>('SELECT agent_session_id FROM agent_mcp_session_bindings WHERE mcp_session_id = ?'),
    lastPosition: db.prepare<[string], { last: number }>('SELECT coalesce(max(position), 0) AS last FROM agent_conversation_items WHERE session_id = ?'),
    insertItem: db.prepare<[string, number, string, string]>('INSERT INTO agent_conversation_items (session_id, position, item, appended_at) VALUES (?, ?, ?, ?)'),
    items: db.prepare<[string], { item: string }>('SELECT item FROM agent_conversation_items WHERE session_id = ? ORDER BY position'),
  };
}
type Statements = ReturnType<typeof prepareStatements>;

/**
 * The SQLite session store. better-sqlite3 is synchronous, so each operation runs to completion on
 * this thread; writes are IMMEDIATE transactions, which take SQLite's write lock up front, so writers
 * in other processes on the same file queue behind it (for up to `busyTimeoutMs`).
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

  private constructor(modes: ModeDirectory, opened: { db: Database.Database; filename: string; schemaVersion: number }) {
    super(modes, `SQLite database ${opened.filename}`);
    this.filename = opened.filename;
    this.schemaVersion = opened.schemaVersion;
    this.#db = opened.db;
    this.approvals = new SqliteApprovalStore(opened.db);
    this.#sql = prepareStatements(opened.db);
  }

  /** Use {@link openSqliteSessionStore}. */
  static async open(options: SqliteSessionStoreOptions): Promise<SqliteSessionStore> {
    return new SqliteSessionStore(options.modes, openDatabase(options, options.logger ?? silentLogger));
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
    return { id: row.id, mode: row.mode, org: row.org_id, user: row.user_id, parentId: row.parent_id, createdAt: row.created_at, history };
  }

  /** The session's history rows in (after, upTo]: none to read when nothing was added since. */
  #rowsAfter(id: string, after: number, upTo: number): ModeChange[] {
    return after >= upTo ? [] : this.#sql.historyBetween.all(id, after, upTo).map(toChange);
  }

  protected async insertSession(session: NewSession): Promise<AgentSession> {
    const now = new Date().toISOString();
    try {
      this.#sql.insertSession.run(session.id, session.mode, session.org, session.user, session.parentId, now, now);
    } catch (error) {
      if (isForeignKeyViolation(error) && session.parentId !== null) throw this.sessionNotFound('Parent session', session.parentId, error);
      throw error;
    }
    return { ...session, createdAt: now, history: [] };
  }

  protected async readSession(id: string): Promise<AgentSession | undefined> {
    return this.#read(id);
  }

  /**
   * One IMMEDIATE transaction: read the session (and its last `seq`) under the write lock, append the
   * history row, update the mode. The history returned is the rows held, the rows other writers added
   * since (usually none, so no query), and this change; it is kept only once the transaction committed.
   */
  protected async commitModeChange(pending: PendingModeChange): Promise<{ session: AgentSession; change: ModeChange } | undefined> {
    const { sessionId } = pending;
    const committed = this.#db
      .transaction(() => {
        const current = this.#sql.session.get(sessionId);
        if (current === undefined) return undefined;
        const base = this.#histories.base(sessionId);
        const newer = this.#rowsAfter(sessionId, base.lastSeq, current.last_seq);
        const at = new Date().toISOString();
        const { lastInsertRowid } = this.#sql.insertChange.run(sessionId, current.mode, pending.toMode, pending.reason, pending.branch ? 1 : 0, pending.org, pending.user, at);
        this.#sql.updateMode.run(pending.toMode, at, sessionId);
        const change: ModeChange = { fromMode: current.mode, toMode: pending.toMode, reason: pending.reason, branch: pending.branch, org: pending.org, user: pending.user, at };
        newer.push(change);
        return { current, base, newer, change, seq: Number(lastInsertRowid) };
      })
      .immediate();
    if (committed === undefined) return undefined;
    const { current, base, newer, change, seq } = committed;
    const history = this.#histories.extend(sessionId, base, newer, seq);
    return { session: { id: current.id, mode: pending.toMode, org: current.org_id, user: current.user_id, parentId: current.parent_id, createdAt: current.created_at, history }, change };
  }

  protected async writeMcpBinding(mcpSessionId: string, agentSessionId: string): Promise<void> {
    try {
      this.#sql.upsertBinding.run(mcpSessionId, agentSessionId, new Date().toISOString());
    } catch (error) {
      if (isForeignKeyViolation(error)) throw this.sessionNotFound('Agent session', agentSessionId, error);
      throw error;
    }
  }

  protected async readMcpBinding(mcpSessionId: string): Promise<string | undefined> {
    return this.#sql.binding.get(mcpSessionId)?.agent_session_id;
  }

  protected async insertConversationItems(sessionId: string, items: readonly string[]): Promise<void> {
    this.#db
      .transaction(() => {
        if (this.#sql.currentMode.get(sessionId) === undefined) throw this.sessionNotFound('Session', sessionId);
        const last = this.#sql.lastPosition.get(sessionId)?.last ?? 0;
        const at = new Date().toISOString();
        items.forEach((item, index) => this.#sql.insertItem.run(sessionId, last + index + 1, item, at));
      })
      .immediate();
  }

  protected async readConversationItems(sessionId: string): Promise<unknown[]> {
    return this.#sql.items.all(sessionId).map((row) => JSON.parse(row.item) as unknown);
  }

  protected async release(): Promise<void> {
    this.#db.close();
  }
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

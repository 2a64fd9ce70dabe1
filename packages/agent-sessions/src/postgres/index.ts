/**
 * @aptix/agent-sessions/postgres: the session store over a `pg` pool, for several hosts sharing
 * sessions. Everything exported here is public API.
 */
import { Pool, escapeIdentifier } from 'pg';
import { SessionStoreError } from '../errors.js';
import { HistoryCache } from '../internal/history-cache.js';
import {
  SessionStoreBase,
  silentLogger,
  type HistoryPageRead,
  type NewSession,
  type PendingModeChange,
} from '../internal/session-store-base.js';
import type {
  AgentSession,
  McpSessionState,
  ModeChange,
  ModeDirectory,
  SessionHead,
  SessionStoreLimits,
  SessionStoreLogger,
} from '../types.js';
import {
  clientWithConnectTimeout,
  PgGateway,
  resolveTimeouts,
  statementName,
  type NamedStatement,
  type PostgresTimeouts,
} from './connection.js';
import { migrate } from './migrate.js';
import { isForeignKeyViolation, toChanges, type CommittedRow, type SessionJoinRow } from './rows.js';
import { PostgresApprovalStore } from './approvals.js';
import { PostgresTaskStore } from './tasks.js';
import { PostgresAuditStore } from './audit.js';
import { PostgresMcpSessions } from './mcp-sessions.js';

export { DEFAULT_POSTGRES_TIMEOUTS, type PostgresTimeouts } from './connection.js';

export interface PostgresSessionStoreOptions {
  /** `postgres://user:password@host:5432/database`; the store creates a pool and ends it on `close()`. Give this or `pool`. */
  readonly connectionString?: string;
  /** A pool the caller owns: the store runs its queries on it and leaves it open on `close()`. Give this or `connectionString`. */
  readonly pool?: Pool;
  /**
   * The schema that holds the tables, created at start-up when missing. Default `public`. Every
   * table name is qualified with it, so a shared pool's `search_path` does not matter.
   */
  readonly schema?: string;
  /** The catalog: which modes exist and which one new sessions start in. */
  readonly modes: ModeDirectory;
  readonly logger?: SessionStoreLogger;
  /**
   * Connections in the pool the store creates (pg's `max`). Default 10. The pool keeps two of them
   * (or all, when fewer) open while idle, and the rest for 60 s after their last use: every tool call
   * in a session reads the session, and a connection kept open skips the connect and keeps the
   * statements it prepared. Open connections keep a process running: `close()` the store to end them.
   */
  readonly poolSize?: number;
  /**
   * Bounds on every round trip: connecting, lock waits, statements, and the wait for any answer. The
   * server-side ones are set on each transaction (`SET LOCAL`), so they hold on a pool the caller owns too.
   */
  readonly timeouts?: PostgresTimeouts;
  /** Bounds on the strings it stores and the history pages it returns. */
  readonly limits?: SessionStoreLimits;
}

/** Connections the store's own pool never closes for being idle. */
const KEEP_OPEN = 2;
/** How long the pool keeps a connection above {@link KEEP_OPEN} after its last use. */
const IDLE_CLOSE_MS = 60_000;

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/**
 * The PostgreSQL session store. A mode change locks the session row (`SELECT … FOR UPDATE`), so changes
 * to one session from any number of connections, processes or hosts run one after another: each reads
 * the mode the previous one committed, and the history sequence follows commit order.
 */
export class PostgresSessionStore extends SessionStoreBase {
  /** The schema holding the tables. */
  readonly schema: string;
  /** The schema version of the database after start-up migrations. */
  readonly schemaVersion: number;
  readonly #pool: Pool;
  readonly #db: PgGateway;
  readonly #ownsPool: boolean;
  readonly #onPoolError: ((error: Error) => void) | undefined;
  readonly #t: { sessions: string; changes: string; bindings: string; items: string };
  readonly #histories = new HistoryCache();
  readonly #mcp: PostgresMcpSessions;
  /** The approval gates of tool calls, in the same schema. */
  readonly approvals: PostgresApprovalStore;
  /** MCP tasks, in the same schema. */
  readonly tasks: PostgresTaskStore;
  /** The audit trail, in the same schema. */
  readonly audit: PostgresAuditStore;
  readonly #sql: {
    session: string;
    change: string;
    between: string;
    sessionRow: string;
    page: string;
    head: NamedStatement;
  };

  private constructor(
    modes: ModeDirectory,
    init: {
      db: PgGateway;
      ownsPool: boolean;
      onPoolError: ((error: Error) => void) | undefined;
      schema: string;
      schemaVersion: number;
      limits: SessionStoreLimits | undefined;
    },
  ) {
    super(modes, `PostgreSQL schema "${init.schema}"`, init.limits);
    this.schema = init.schema;
    this.schemaVersion = init.schemaVersion;
    this.#db = init.db;
    this.#pool = init.db.pool;
    this.#ownsPool = init.ownsPool;
    this.#onPoolError = init.onPoolError;
    const s = escapeIdentifier(init.schema);
    this.approvals = new PostgresApprovalStore(init.db, s);
    this.tasks = new PostgresTaskStore(init.db, s);
    this.audit = new PostgresAuditStore(init.db, s);
    this.#t = {
      sessions: `${s}.agent_sessions`,
      changes: `${s}.agent_session_mode_changes`,
      bindings: `${s}.agent_mcp_session_bindings`,
      items: `${s}.agent_conversation_items`,
    };
    this.#mcp = new PostgresMcpSessions(init.db, this.#t.bindings);
    const { sessions, changes } = this.#t;
    const head = `SELECT id, mode, org_id, user_id, owner_id FROM ${sessions} WHERE id = $1`;
    const columns =
      'h.seq, h.from_mode, h.to_mode, h.reason, h.branch, h.org_id AS change_org_id, h.user_id AS change_user_id, h.changed_at';
    this.#sql = {
      // The session, its last seq and the history rows after $2 (those not yet held): one statement, one snapshot.
      session:
        `SELECT s.id, s.mode, s.org_id, s.user_id, s.parent_id, s.owner_id, s.created_at, ` +
        `(SELECT coalesce(max(seq), 0) FROM ${changes} WHERE session_id = s.id)::text AS last_seq, ${columns} ` +
        `FROM ${sessions} s LEFT JOIN ${changes} h ON h.session_id = s.id AND h.seq > $2 WHERE s.id = $1 ORDER BY h.seq`,
      // A whole mode change in one statement. Under READ COMMITTED, FOR UPDATE waits for a concurrent
      // change of the session and then reads the row as that change committed it, so from_mode is always
      // the mode the previous change left.
      change:
        `WITH locked AS (SELECT id, mode, org_id, user_id, parent_id, owner_id, created_at FROM ${sessions} WHERE id = $1 FOR UPDATE), ` +
        `ins AS (INSERT INTO ${changes} (session_id, from_mode, to_mode, reason, branch, org_id, user_id) ` +
        `SELECT id, mode, $2, $3, $4, $5, $6 FROM locked RETURNING seq, changed_at, from_mode), ` +
        `upd AS (UPDATE ${sessions} s SET mode = $2, updated_at = ins.changed_at FROM ins WHERE s.id = $1) ` +
        `SELECT ins.seq::text AS seq, ins.changed_at, ins.from_mode, locked.org_id, locked.user_id, locked.parent_id, locked.owner_id, locked.created_at FROM ins, locked`,
      // The rows before a change, read after it took the session's lock: every earlier row has committed.
      between: `SELECT ${columns} FROM ${changes} h WHERE h.session_id = $1 AND h.seq > $2 AND h.seq < $3 ORDER BY h.seq`,
      // A page: the session and its last seq, then the rows after the cursor up to that seq (rows up to it never change).
      sessionRow:
        `SELECT s.id, s.mode, s.org_id, s.user_id, s.parent_id, s.owner_id, s.created_at, (SELECT ` +
        `coalesce(max(seq), 0) FROM ${changes} WHERE session_id = s.id)::text AS last_seq FROM ` +
        `${sessions} s WHERE s.id = $1`,
      page: `SELECT ${columns} FROM ${changes} h WHERE h.session_id = $1 AND h.seq > $2 AND h.seq <= $3 ORDER BY h.seq LIMIT $4`,
      // What a tool call in a session reads: one row by primary key, prepared once per connection
      // (named after its text, which holds the schema, so stores of two schemas on one pool never collide).
      head: { name: statementName('aptix_session_head', head), text: head },
    };
  }

  /** Use {@link openPostgresSessionStore}. */
  static async open(options: PostgresSessionStoreOptions): Promise<PostgresSessionStore> {
    const schema = options.schema ?? 'public';
    if (!SCHEMA_NAME.test(schema)) {
      throw new SessionStoreError(
        'INVALID_ARGUMENT',
        `PostgreSQL schema name ${JSON.stringify(schema)} is not supported; use letters, digits and underscores (at most 63, not starting with a digit).`,
      );
    }
    if ((options.pool === undefined) === (options.connectionString === undefined)) {
      throw new SessionStoreError(
        'INVALID_ARGUMENT',
        'openPostgresSessionStore needs exactly one of connectionString (the store creates and ends its pool) or pool (yours, left open).',
      );
    }
    const logger = options.logger ?? silentLogger;
    const ownsPool = options.pool === undefined;
    const timeouts = resolveTimeouts(options.timeouts);
    const poolSize = options.poolSize ?? 10;
    const pool =
      options.pool ??
      new Pool({
        connectionString: options.connectionString,
        max: poolSize,
        min: Math.min(KEEP_OPEN, poolSize),
        idleTimeoutMillis: IDLE_CLOSE_MS,
        application_name: 'aptix-agent-sessions',
        Client: clientWithConnectTimeout(timeouts.connectionTimeoutMs) as never,
        // Server-side bounds for every statement, also outside transactions (which set them again with SET LOCAL).
        statement_timeout: timeouts.statementTimeoutMs,
        lock_timeout: timeouts.lockTimeoutMs,
        idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
        // Notices a peer that vanished without closing the connection (a frozen or unplugged server).
        keepAlive: true,
      });
    // An idle client's error is emitted on the pool; unhandled, it would crash the host.
    const onPoolError = ownsPool
      ? (error: Error) =>
          logger.error(
            { store: 'postgres', schema, err: error },
            'An idle PostgreSQL connection of the session store failed; the pool replaces it.',
          )
      : undefined;
    if (onPoolError) pool.on('error', onPoolError);
    try {
      const db = new PgGateway(pool, timeouts, `PostgreSQL schema "${schema}"`);
      const schemaVersion = await migrate(db, schema, logger);
      return new PostgresSessionStore(options.modes, {
        db,
        ownsPool,
        onPoolError,
        schema,
        schemaVersion,
        limits: options.limits,
      });
    } catch (error) {
      if (ownsPool) await pool.end().catch(() => undefined);
      throw error;
    }
  }

  protected async insertSession(session: NewSession): Promise<AgentSession> {
    try {
      // A branch takes its parent's owner in the same statement; a missing parent fails the foreign key.
      const { rows } = await this.#db.query<{ owner_id: string | null; created_at: Date }>(
        `INSERT INTO ${this.#t.sessions} (id, mode, org_id, user_id, parent_id, owner_id) ` +
          `VALUES ($1, $2, $3, $4, $5, CASE WHEN $5::text IS NULL THEN $6::text ELSE (SELECT owner_id FROM ${this.#t.sessions} WHERE id = $5) END) ` +
          `RETURNING owner_id, created_at`,
        [session.id, session.mode, session.org, session.user, session.parentId, session.owner],
      );
      const row = rows[0]!;
      return { ...session, owner: row.owner_id, createdAt: row.created_at.toISOString(), history: [] };
    } catch (error) {
      if (isForeignKeyViolation(error) && session.parentId !== null)
        throw this.sessionNotFound('Parent session', session.parentId, error);
      throw error;
    }
  }

  /** One round trip: the session with only the history rows not yet held. */
  protected async readSession(id: string): Promise<AgentSession | undefined> {
    const base = this.#histories.base(id);
    const { rows } = await this.#db.query<SessionJoinRow>(this.#sql.session, [id, base.lastSeq]);
    const [first] = rows;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a query that matched nothing gives no row (rows[0] is undefined; no noUncheckedIndexedAccess)
    if (first === undefined) {
      this.#histories.forget(id);
      return undefined;
    }
    const history = this.#histories.extend(id, base, toChanges(rows), Number(first.last_seq));
    return {
      id: first.id,
      mode: first.mode,
      org: first.org_id,
      user: first.user_id,
      parentId: first.parent_id,
      owner: first.owner_id,
      createdAt: first.created_at.toISOString(),
      history,
    };
  }

  protected async readSessionHead(id: string): Promise<SessionHead | undefined> {
    const { rows } = await this.#db.query<{
      id: string;
      mode: string;
      org_id: string | null;
      user_id: string | null;
      owner_id: string | null;
    }>(this.#sql.head, [id]);
    const row = rows[0];
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a query that matched nothing gives no row (rows[0] is undefined; no noUncheckedIndexedAccess)
    return row === undefined
      ? undefined
      : { id: row.id, mode: row.mode, org: row.org_id, user: row.user_id, owner: row.owner_id };
  }

  /** Two statements on one connection; consistent without a transaction, since rows up to the session's last seq never change. */
  protected async readSessionPage(id: string, afterSeq: number, limit: number): Promise<HistoryPageRead | undefined> {
    return this.#db.withConnection(undefined, async (connection) => {
      const { rows } = await connection.query<SessionJoinRow>(this.#sql.sessionRow, [id]);
      const row = rows[0];
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a query that matched nothing gives no row (rows[0] is undefined; no noUncheckedIndexedAccess)
      if (row === undefined) return undefined;
      const page = await connection.query<SessionJoinRow>(this.#sql.page, [id, afterSeq, row.last_seq, limit + 1]);
      const more = page.rows.length > limit;
      const held = more ? page.rows.slice(0, limit) : page.rows;
      const session: AgentSession = {
        id: row.id,
        mode: row.mode,
        org: row.org_id,
        user: row.user_id,
        parentId: row.parent_id,
        owner: row.owner_id,
        createdAt: row.created_at.toISOString(),
        history: toChanges(held),
      };
      return { session, nextSeq: more ? Number(held.at(-1)!.seq) : null };
    });
  }

  /**
   * One transaction of two statements: the change itself (lock, insert, update), then the history rows
   * other writers added since this store last read the session. The second sees them all: they
   * committed before this change could take the lock. Four round trips with BEGIN and COMMIT, where
   * one statement per step took six; the history is kept only once the transaction committed.
   *
   * The signal reaches every statement before COMMIT: an abort cancels the lock wait or the statement
   * on the server, drops the connection and rolls back (`CANCELLED`); the transaction also checks the
   * signal just before COMMIT. COMMIT itself is not cancelled: it answers committed, or, when the
   * connection breaks first, `OUTCOME_UNKNOWN`.
   */
  protected async commitModeChange(
    pending: PendingModeChange,
    signal: AbortSignal | undefined,
  ): Promise<{ session: AgentSession; change: ModeChange } | undefined> {
    const { sessionId } = pending;
    const base = this.#histories.base(sessionId);
    const committed = await this.#db.transaction(signal, async (connection) => {
      const changed = await connection.query<CommittedRow>(
        this.#sql.change,
        [sessionId, pending.toMode, pending.reason, pending.branch, pending.org, pending.user],
        { signal },
      );
      const row = changed.rows[0];
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a query that matched nothing gives no row (rows[0] is undefined; no noUncheckedIndexedAccess)
      if (row === undefined) return undefined;
      const earlier = await connection.query<SessionJoinRow>(this.#sql.between, [sessionId, base.lastSeq, row.seq], {
        signal,
      });
      return { row, newer: toChanges(earlier.rows) };
    });
    if (committed === undefined) return undefined;
    const { row, newer } = committed;
    const change: ModeChange = {
      fromMode: row.from_mode,
      toMode: pending.toMode,
      reason: pending.reason,
      branch: pending.branch,
      org: pending.org,
      user: pending.user,
      at: row.changed_at.toISOString(),
    };
    newer.push(change);
    const history = this.#histories.extend(sessionId, base, newer, Number(row.seq));
    return {
      session: {
        id: sessionId,
        mode: pending.toMode,
        org: row.org_id,
        user: row.user_id,
        parentId: row.parent_id,
        owner: row.owner_id,
        createdAt: row.created_at.toISOString(),
        history,
      },
      change,
    };
  }

  protected async writeMcpBinding(mcpSessionId: string, agentSessionId: string): Promise<void> {
    try {
      await this.#mcp.bind(mcpSessionId, agentSessionId);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw this.sessionNotFound('Agent session', agentSessionId, error);
      throw error;
    }
  }

  protected async readMcpBinding(mcpSessionId: string): Promise<string | undefined> {
    return (await this.#mcp.read(mcpSessionId))?.agentSessionId;
  }

  protected async readMcpSession(mcpSessionId: string): Promise<McpSessionState | undefined> {
    return this.#mcp.read(mcpSessionId);
  }

  protected async markMcpSessionUsed(mcpSessionId: string): Promise<number | undefined> {
    return this.#mcp.markUsed(mcpSessionId);
  }

  protected async markMcpSessionClosed(mcpSessionId: string, ifTouches: number | undefined): Promise<boolean> {
    const agentSessionId = await this.#mcp.markClosed(mcpSessionId, ifTouches);
    if (agentSessionId === undefined) return false;
    // Its agent session's history is read again if it is continued; most are not, and the cache is bounded by rows, not sessions.
    this.#histories.forget(agentSessionId);
    return true;
  }

  protected async insertConversationItems(sessionId: string, items: readonly string[]): Promise<void> {
    await this.#db.transaction(undefined, async (client) => {
      // The session's row lock orders concurrent appends, so positions never collide.
      const locked = await client.query(`SELECT 1 FROM ${this.#t.sessions} WHERE id = $1 FOR UPDATE`, [sessionId]);
      if (locked.rowCount === 0) throw this.sessionNotFound('Session', sessionId);
      if (items.length === 0) return;
      await client.query(
        `INSERT INTO ${this.#t.items} (session_id, position, item) ` +
          `SELECT $1, last.position + e.ordinality, e.value ` +
          `FROM (SELECT coalesce(max(position), 0) AS position FROM ${this.#t.items} WHERE session_id = $1) last, ` +
          `json_array_elements($2::json) WITH ORDINALITY AS e(value, ordinality)`,
        [sessionId, `[${items.join(',')}]`],
      );
    });
  }

  protected async readConversationItems(sessionId: string): Promise<unknown[]> {
    const { rows } = await this.#db.query<{ item: unknown }>(
      `SELECT item FROM ${this.#t.items} WHERE session_id = $1 ORDER BY position`,
      [sessionId],
    );
    return rows.map((row) => row.item);
  }

  protected async probe(signal: AbortSignal | undefined): Promise<void> {
    await this.#db.query('SELECT 1', [], signal);
  }

  protected async release(): Promise<void> {
    if (this.#onPoolError) this.#pool.off('error', this.#onPoolError);
    if (this.#ownsPool) await this.#pool.end();
  }
}

/**
 * Connects to PostgreSQL, creates the schema when missing and applies pending schema migrations.
 * @example
 * const store = await openPostgresSessionStore({ connectionString: process.env.DATABASE_URL, modes: catalog });
 * const result = await store.setSessionMode(sessionId, 'ddr_authoring', 'The user asked for a DDR.', org, user, { branch: false });
 * await store.close();
 */
export function openPostgresSessionStore(options: PostgresSessionStoreOptions): Promise<PostgresSessionStore> {
  return PostgresSessionStore.open(options);
}

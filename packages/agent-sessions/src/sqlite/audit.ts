import type Database from 'better-sqlite3';
import {
  AUDIT_PRUNE_BATCH,
  type AuditFilter,
  type AuditPage,
  type AuditRecord,
  type AuditRetention,
  type AuditStore,
  type NewAuditRecord,
} from '../audit.js';
import {
  AUDIT_COLUMNS,
  auditPage,
  auditSeqOf,
  auditWhere,
  checkAuditRecord,
  checkRetention,
  resolveAuditFilter,
  rowToAuditRecord,
  type AuditRowOf,
} from '../internal/audit-checks.js';

type AuditRow = AuditRowOf<string>;
const same = (time: string) => time;
const INSERT_COLUMNS =
  'at, kind, principal, session_id, tool_name, arguments_hash, outcome, duration_ms, trace_id, approval_id, decision, from_mode, to_mode';
const ROW_PLACEHOLDERS = `(${INSERT_COLUMNS.split(', ')
  .map(() => '?')
  .join(', ')})`;
/**
 * Records per INSERT statement: a batch is written as chunks of this many rows (one statement each,
 * 1300 parameters) and the rest one row at a time. One statement for many rows costs SQLite one
 * statement's setup and one bind call instead of a hundred.
 */
const ROWS_PER_INSERT = 100;
/** Lets calls waiting for the thread run between two batches of a long prune. */
const yieldToCalls = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The audit trail in the SQLite session database. A batch is one IMMEDIATE transaction of prepared
 * inserts; a prune deletes at most {@link AUDIT_PRUNE_BATCH} rows per transaction and yields the
 * thread in between, so a call never waits behind a long delete.
 */
export class SqliteAuditStore implements AuditStore {
  readonly #db: Database.Database;
  readonly #run: <T>(operation: () => T) => Promise<T>;
  readonly #insert: Database.Statement<unknown[]>;
  readonly #insertMany: Database.Statement<unknown[]>;
  readonly #get: Database.Statement<[number], AuditRow>;

  constructor(db: Database.Database, run: <T>(operation: () => T) => Promise<T> = async (operation) => operation()) {
    this.#db = db;
    this.#run = run;
    this.#insert = db.prepare(`INSERT INTO agent_audit_records (${INSERT_COLUMNS}) VALUES ${ROW_PLACEHOLDERS}`);
    this.#insertMany = db.prepare(
      `INSERT INTO agent_audit_records (${INSERT_COLUMNS}) VALUES ${Array<string>(ROWS_PER_INSERT).fill(ROW_PLACEHOLDERS).join(', ')}`,
    );
    this.#get = db.prepare<[number], AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM agent_audit_records WHERE seq = ?`);
  }

  async append(records: readonly NewAuditRecord[]): Promise<void> {
    const checked = records.map(checkAuditRecord);
    if (checked.length === 0) return;
    const now = new Date().toISOString();
    const values = (r: (typeof checked)[number]) => [
      r.at ?? now,
      r.kind,
      r.principal,
      r.sessionId,
      r.tool,
      r.argumentsHash,
      r.outcome,
      r.durationMs,
      r.traceId,
      r.approvalId,
      r.decision,
      r.fromMode,
      r.toMode,
    ];
    const insertAll = this.#db.transaction(() => {
      let next = 0;
      for (; next + ROWS_PER_INSERT <= checked.length; next += ROWS_PER_INSERT)
        this.#insertMany.run(checked.slice(next, next + ROWS_PER_INSERT).flatMap(values));
      for (; next < checked.length; next++) this.#insert.run(values(checked[next]!));
    });
    await this.#run(() => insertAll.immediate());
  }

  async get(id: string): Promise<AuditRecord | undefined> {
    const seq = auditSeqOf(id);
    if (seq === undefined) return undefined;
    const row = await this.#run(() => this.#get.get(seq));
    return row === undefined ? undefined : rowToAuditRecord(row, same);
  }

  async list(filter: AuditFilter = {}): Promise<AuditPage> {
    const resolved = resolveAuditFilter(filter);
    if (resolved.matchesNothing) return { records: [], nextCursor: null };
    const { where, params } = auditWhere(resolved, () => '?');
    const sql = `SELECT ${AUDIT_COLUMNS} FROM agent_audit_records ${where} ORDER BY seq DESC LIMIT ?`;
    const rows = await this.#run(() => this.#db.prepare<unknown[], AuditRow>(sql).all(...params, resolved.limit + 1));
    return auditPage(rows, resolved.limit, same);
  }

  async prune(retention: AuditRetention): Promise<number> {
    const { maxAgeMs, maxRecords } = checkRetention(retention);
    const byAge = this.#db.prepare<[string, number]>(
      'DELETE FROM agent_audit_records WHERE seq IN (SELECT seq FROM agent_audit_records WHERE at < ? ORDER BY seq LIMIT ?)',
    );
    // The seq below which records are over the count: the (maxRecords)th newest's.
    const boundary = this.#db.prepare<[number], { seq: number }>(
      'SELECT seq FROM agent_audit_records ORDER BY seq DESC LIMIT 1 OFFSET ?',
    );
    const byCount = this.#db.prepare<[number, number]>(
      'DELETE FROM agent_audit_records WHERE seq IN (SELECT seq FROM agent_audit_records WHERE seq <= ? ORDER BY seq LIMIT ?)',
    );
    let removed = 0;
    for (;;) {
      let changes = 0;
      if (maxAgeMs !== undefined) {
        const cutoff = new Date(Date.now() - maxAgeMs).toISOString();
        changes += (await this.#run(() => byAge.run(cutoff, AUDIT_PRUNE_BATCH))).changes;
      }
      if (maxRecords !== undefined) {
        const over = await this.#run(() => boundary.get(maxRecords));
        if (over !== undefined) changes += (await this.#run(() => byCount.run(over.seq, AUDIT_PRUNE_BATCH))).changes;
      }
      removed += changes;
      if (changes === 0) return removed;
      await yieldToCalls();
    }
  }
}

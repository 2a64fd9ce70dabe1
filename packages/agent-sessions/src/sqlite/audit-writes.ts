/**
 * The audit trail's writes on a SQLite connection: the batch insert and one step of a prune. Shared by
 * the store's own connection (in-memory databases, `auditWriter: 'inline'`) and the writer thread's
 * (audit-writer-worker.ts), so both write exactly the same rows.
 */
import type Database from 'better-sqlite3';
import { AUDIT_PRUNE_BATCH, type AuditRetention } from '../audit.js';
import type { CheckedAuditRecord } from '../internal/audit-checks.js';

const INSERT_COLUMNS =
  'at, kind, principal, session_id, tool_name, arguments_hash, outcome, duration_ms, trace_id, approval_id, decision, from_mode, to_mode';
/** The values one record binds, in the order of {@link INSERT_COLUMNS}. */
export const AUDIT_VALUES_PER_ROW = 13;
const ROW_PLACEHOLDERS = `(${Array<string>(AUDIT_VALUES_PER_ROW).fill('?').join(', ')})`;
/**
 * Records per INSERT statement: a batch is written as chunks of this many rows (one statement each,
 * 1300 parameters) and the rest one row at a time. One statement for many rows costs SQLite one
 * statement's setup and one bind call instead of a hundred.
 */
const ROWS_PER_INSERT = 100;

/**
 * The checked records' values, one flat array ({@link AUDIT_VALUES_PER_ROW} per record): what the insert
 * binds, and what the writer thread is sent (an array of strings, numbers and nulls clones cheaply).
 */
export function auditRowValues(records: readonly CheckedAuditRecord[], now: string): unknown[] {
  const values: unknown[] = [];
  for (const r of records)
    values.push(
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
    );
  return values;
}

export interface AuditWrites {
  /** Inserts the records whose values {@link auditRowValues} made, in one IMMEDIATE transaction. */
  insert(values: readonly unknown[]): void;
  /** Removes at most a batch past each bound of the retention (checked); answers how many rows went. */
  pruneStep(retention: AuditRetention): number;
}

export function prepareAuditWrites(db: Database.Database): AuditWrites {
  const insertOne = db.prepare<unknown[]>(
    `INSERT INTO agent_audit_records (${INSERT_COLUMNS}) VALUES ${ROW_PLACEHOLDERS}`,
  );
  const insertMany = db.prepare<unknown[]>(
    `INSERT INTO agent_audit_records (${INSERT_COLUMNS}) VALUES ${Array<string>(ROWS_PER_INSERT).fill(ROW_PLACEHOLDERS).join(', ')}`,
  );
  const byAge = db.prepare<[string, number]>(
    'DELETE FROM agent_audit_records WHERE seq IN (SELECT seq FROM agent_audit_records WHERE at < ? ORDER BY seq LIMIT ?)',
  );
  // The seq below which records are over the count: the (maxRecords)th newest's.
  const boundary = db.prepare<[number], { seq: number }>(
    'SELECT seq FROM agent_audit_records ORDER BY seq DESC LIMIT 1 OFFSET ?',
  );
  const byCount = db.prepare<[number, number]>(
    'DELETE FROM agent_audit_records WHERE seq IN (SELECT seq FROM agent_audit_records WHERE seq <= ? ORDER BY seq LIMIT ?)',
  );
  const many = ROWS_PER_INSERT * AUDIT_VALUES_PER_ROW;
  const insertAll = db.transaction((values: readonly unknown[]) => {
    let next = 0;
    for (; next + many <= values.length; next += many) insertMany.run(values.slice(next, next + many));
    for (; next < values.length; next += AUDIT_VALUES_PER_ROW)
      insertOne.run(values.slice(next, next + AUDIT_VALUES_PER_ROW));
  });
  return {
    insert: (values) => insertAll.immediate(values),
    pruneStep({ maxAgeMs, maxRecords }) {
      let changes = 0;
      if (maxAgeMs !== undefined)
        changes += byAge.run(new Date(Date.now() - maxAgeMs).toISOString(), AUDIT_PRUNE_BATCH).changes;
      if (maxRecords !== undefined) {
        const over = boundary.get(maxRecords);
        if (over !== undefined) changes += byCount.run(over.seq, AUDIT_PRUNE_BATCH).changes;
      }
      return changes;
    },
  };
}

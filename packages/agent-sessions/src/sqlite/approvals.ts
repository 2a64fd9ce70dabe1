import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import {
  clampLimit,
  type ApprovalCompletion,
  type ApprovalDecisionOutcome,
  type ApprovalFilter,
  type ApprovalStore,
  type NewToolApproval,
  type ToolApproval,
} from '../approvals.js';
import {
  abandonedResult,
  checkNewApproval,
  checkNote,
  rowToApproval,
  storableId,
  type ApprovalRowOf,
} from '../internal/approval-checks.js';
import { observeWrite } from '../internal/store-telemetry.js';

type ApprovalRow = ApprovalRowOf<string> & { result: string | null };

const toApproval = (row: ApprovalRow): ToolApproval =>
  rowToApproval(
    row,
    (time) => time,
    (text) => JSON.parse(text as string) as unknown,
  );

const iso = (ms: number = Date.now()) => new Date(ms).toISOString();

/**
 * Approvals in the SQLite session database. Each transition is one conditional UPDATE inside an
 * IMMEDIATE transaction, so processes sharing the file (WAL) take each transition at most once.
 */
export class SqliteApprovalStore implements ApprovalStore {
  readonly #db: Database.Database;
  readonly #get: Database.Statement<[string], ApprovalRow>;
  /** Runs one statement or transaction, waiting (without blocking the thread) while another process holds the lock. */
  readonly #run: <T>(operation: () => T) => Promise<T>;

  constructor(db: Database.Database, run: <T>(operation: () => T) => Promise<T> = async (operation) => operation()) {
    this.#db = db;
    this.#run = run;
    this.#get = db.prepare<[string], ApprovalRow>('SELECT * FROM agent_tool_approvals WHERE id = ?');
  }

  /** Runs one write (a statement or a transaction), observed as `operation` when telemetry is on. */
  #write<T>(operation: string, write: () => T): Promise<T> {
    return observeWrite('sqlite', operation, () => this.#run(write));
  }

  /** A write of the sweep: spanned only inside a running span (see `WriteSpans`). */
  #housekeeping<T>(operation: string, write: () => T): Promise<T> {
    return observeWrite('sqlite', operation, () => this.#run(write), 'nested');
  }

  async create(input: NewToolApproval): Promise<ToolApproval> {
    const checked = checkNewApproval(input);
    const now = Date.now();
    const row: ApprovalRow = {
      id: randomUUID(),
      session_id: checked.sessionId,
      tool_name: checked.toolName,
      arguments: checked.arguments,
      reason: checked.reason,
      requested_by: checked.requestedBy,
      requested_at: iso(now),
      expires_at: iso(now + checked.ttlMs),
      status: 'pending',
      decided_by: null,
      decided_at: null,
      note: null,
      result: null,
      completed_at: null,
      traceparent: checked.traceparent,
    };
    const insert = this.#db.prepare(
      'INSERT INTO agent_tool_approvals (id, session_id, tool_name, arguments, reason, requested_by, requested_at, expires_at, status, traceparent) ' +
        'VALUES (@id, @session_id, @tool_name, @arguments, @reason, @requested_by, @requested_at, @expires_at, @status, @traceparent)',
    );
    await this.#write('create_approval', () => insert.run(row));
    return toApproval(row);
  }

  async get(id: string): Promise<ToolApproval | undefined> {
    if (!storableId(id)) return undefined;
    const row = await this.#run(() => this.#get.get(id));
    return row === undefined ? undefined : toApproval(row);
  }

  async list(filter: ApprovalFilter = {}): Promise<ToolApproval[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.sessionId !== undefined) {
      where.push('session_id = ?');
      params.push(filter.sessionId);
    }
    if (filter.status !== undefined) {
      where.push('status = ?');
      params.push(filter.status);
    }
    params.push(clampLimit(filter.limit));
    const sql = `SELECT * FROM agent_tool_approvals ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY requested_at DESC, id LIMIT ?`;
    return (await this.#run(() => this.#db.prepare(sql).all(...params) as ApprovalRow[])).map(toApproval);
  }

  async decide(
    id: string,
    decision: 'approve' | 'deny',
    decidedBy: string | null,
    note: string | null,
  ): Promise<ApprovalDecisionOutcome> {
    const cleanNote = checkNote(note);
    if (!storableId(id)) return { kind: 'not_found' };
    return this.#write('decide_approval', () =>
      this.#db
        .transaction((): ApprovalDecisionOutcome => {
          const now = iso();
          const expired = this.#db
            .prepare(
              "UPDATE agent_tool_approvals SET status = 'expired' WHERE id = ? AND status = 'pending' AND expires_at <= ?",
            )
            .run(id, now);
          if (expired.changes === 1)
            return {
              kind: 'expired',
              approval: toApproval(this.#get.get(id)!),
            };
          const decided = this.#db
            .prepare(
              "UPDATE agent_tool_approvals SET status = ?, decided_by = ?, decided_at = ?, note = ? WHERE id = ? AND status = 'pending'",
            )
            .run(decision === 'approve' ? 'approved' : 'denied', decidedBy, now, cleanNote, id);
          const row = this.#get.get(id);
          if (row === undefined) return { kind: 'not_found' };
          if (decided.changes === 1) return { kind: 'decided', approval: toApproval(row) };
          return row.status === 'expired'
            ? { kind: 'expired', approval: toApproval(row) }
            : { kind: 'already_decided', approval: toApproval(row) };
        })
        .immediate(),
    );
  }

  async claim(id: string, claimant: string): Promise<ToolApproval | undefined> {
    const claim = this.#db.prepare(
      "UPDATE agent_tool_approvals SET status = 'executing', claimed_by = ?, claimed_at = ? WHERE id = ? AND status = 'approved'",
    );
    const claimed = await this.#write('claim_approval', () => claim.run(claimant, iso(), id));
    return claimed.changes === 1 ? toApproval((await this.#run(() => this.#get.get(id)))!) : undefined;
  }

  async claimOrphaned(olderThanMs: number, claimant: string, limit: number): Promise<ToolApproval[]> {
    return this.#housekeeping('claim_orphaned_approvals', () =>
      this.#db
        .transaction(() => {
          const now = iso();
          const rows = this.#db
            .prepare(
              "SELECT id FROM agent_tool_approvals WHERE status = 'approved' AND decided_at <= ? ORDER BY decided_at LIMIT ?",
            )
            .all(iso(Date.now() - olderThanMs), limit) as Array<{ id: string }>;
          const claim = this.#db.prepare(
            "UPDATE agent_tool_approvals SET status = 'executing', claimed_by = ?, claimed_at = ? WHERE id = ? AND status = 'approved'",
          );
          return rows
            .filter((row) => claim.run(claimant, now, row.id).changes === 1)
            .map((row) => toApproval(this.#get.get(row.id)!));
        })
        .immediate(),
    );
  }

  async complete(id: string, status: ApprovalCompletion, result: unknown): Promise<ToolApproval | undefined> {
    const finish = this.#db.prepare(
      "UPDATE agent_tool_approvals SET status = ?, result = ?, completed_at = ? WHERE id = ? AND status = 'executing'",
    );
    const done = await this.#write('complete_approval', () =>
      finish.run(status, JSON.stringify(result ?? null), iso(), id),
    );
    return done.changes === 1 ? toApproval((await this.#run(() => this.#get.get(id)))!) : undefined;
  }

  async abandonStale(olderThanMs: number): Promise<ToolApproval[]> {
    return this.#housekeeping('abandon_stale_approvals', () =>
      this.#db
        .transaction(() => {
          const rows = this.#db
            .prepare("SELECT id FROM agent_tool_approvals WHERE status = 'executing' AND claimed_at <= ?")
            .all(iso(Date.now() - olderThanMs)) as Array<{ id: string }>;
          const mark = this.#db.prepare(
            "UPDATE agent_tool_approvals SET status = 'outcome_unknown', result = ?, completed_at = ? WHERE id = ? AND status = 'executing'",
          );
          const result = JSON.stringify(abandonedResult());
          const now = iso();
          return rows
            .filter((row) => mark.run(result, now, row.id).changes === 1)
            .map((row) => toApproval(this.#get.get(row.id)!));
        })
        .immediate(),
    );
  }

  async expireDue(): Promise<number> {
    const expire = this.#db.prepare(
      "UPDATE agent_tool_approvals SET status = 'expired' WHERE status = 'pending' AND expires_at <= ?",
    );
    return (await this.#housekeeping('expire_approvals', () => expire.run(iso()))).changes;
  }
}

import { randomUUID } from 'node:crypto';
import type { QueryResult, QueryResultRow } from 'pg';
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
import { observeWrite, type WriteSpans } from '../internal/store-telemetry.js';

type ApprovalRow = ApprovalRowOf<Date> & QueryResultRow;

const COLUMNS =
  'id, session_id, tool_name, arguments, reason, requested_by, requested_at, expires_at, status, decided_by, decided_at, note, result, completed_at, traceparent';

const toApproval = (row: ApprovalRow): ToolApproval =>
  rowToApproval(
    row,
    (time) => time.toISOString(),
    (value) => value,
  );

/** A session id PostgreSQL cannot hold (NUL) names no approval. */

/** Where the statements run: a `pg` Pool, or the store's gateway, which bounds each one with the store's time-outs. */
export interface Queries {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: readonly unknown[]): Promise<QueryResult<R>>;
}

/**
 * Approvals in the PostgreSQL session schema. Each transition is one conditional UPDATE: under READ
 * COMMITTED a concurrent UPDATE of the same row waits, then re-checks its WHERE against the committed
 * row, so of two hosts taking a transition at once exactly one gets the row back. Times come from the
 * database's clock, so hosts with skewed clocks agree on expiry.
 */
export class PostgresApprovalStore implements ApprovalStore {
  readonly #pool: Queries;
  readonly #t: string;

  constructor(pool: Queries, quotedSchema: string) {
    this.#pool = pool;
    this.#t = `${quotedSchema}.agent_tool_approvals`;
  }

  /** One statement that writes, observed as `operation` when telemetry is on (a sweep's: `nested`). */
  #write(operation: string, sql: string, params: unknown[], spans?: WriteSpans): Promise<QueryResult<ApprovalRow>> {
    return observeWrite('postgresql', operation, () => this.#pool.query<ApprovalRow>(sql, params), spans);
  }

  async #one(sql: string, params: unknown[], write?: string): Promise<ToolApproval | undefined> {
    const { rows } = await (write === undefined
      ? this.#pool.query<ApprovalRow>(sql, params)
      : this.#write(write, sql, params));
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- an index or key that is not there reads undefined, which the type (no noUncheckedIndexedAccess) leaves out
    return rows[0] === undefined ? undefined : toApproval(rows[0]);
  }

  async create(input: NewToolApproval): Promise<ToolApproval> {
    const c = checkNewApproval(input);
    return (await this.#one(
      `INSERT INTO ${this.#t} (id, session_id, tool_name, arguments, reason, requested_by, expires_at, status, traceparent) ` +
        `VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp() + make_interval(secs => $7::double precision / 1000), 'pending', $8) RETURNING ${COLUMNS}`,
      [randomUUID(), c.sessionId, c.toolName, c.arguments, c.reason, c.requestedBy, c.ttlMs, c.traceparent],
      'create_approval',
    ))!;
  }

  async get(id: string): Promise<ToolApproval | undefined> {
    if (!storableId(id)) return undefined;
    return this.#one(`SELECT ${COLUMNS} FROM ${this.#t} WHERE id = $1`, [id]);
  }

  async list(filter: ApprovalFilter = {}): Promise<ToolApproval[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.sessionId !== undefined) {
      if (!storableId(filter.sessionId)) return [];
      params.push(filter.sessionId);
      where.push(`session_id = $${params.length}`);
    }
    if (filter.status !== undefined) {
      params.push(filter.status);
      where.push(`status = $${params.length}`);
    }
    params.push(clampLimit(filter.limit));
    const { rows } = await this.#pool.query<ApprovalRow>(
      `SELECT ${COLUMNS} FROM ${this.#t} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY requested_at DESC, id LIMIT $${params.length}`,
      params,
    );
    return rows.map(toApproval);
  }

  async decide(
    id: string,
    decision: 'approve' | 'deny',
    decidedBy: string | null,
    note: string | null,
  ): Promise<ApprovalDecisionOutcome> {
    const cleanNote = checkNote(note);
    if (!storableId(id)) return { kind: 'not_found' };
    return observeWrite('postgresql', 'decide_approval', () => this.#decide(id, decision, decidedBy, cleanNote));
  }

  async #decide(
    id: string,
    decision: 'approve' | 'deny',
    decidedBy: string | null,
    cleanNote: string | null,
  ): Promise<ApprovalDecisionOutcome> {
    const expired = await this.#one(
      `UPDATE ${this.#t} SET status = 'expired' WHERE id = $1 AND status = 'pending' AND expires_at <= clock_timestamp() RETURNING ${COLUMNS}`,
      [id],
    );
    if (expired) return { kind: 'expired', approval: expired };
    const decided = await this.#one(
      `UPDATE ${this.#t} SET status = $2, decided_by = $3, decided_at = clock_timestamp(), note = $4 ` +
        `WHERE id = $1 AND status = 'pending' AND expires_at > clock_timestamp() RETURNING ${COLUMNS}`,
      [id, decision === 'approve' ? 'approved' : 'denied', decidedBy, cleanNote],
    );
    if (decided) return { kind: 'decided', approval: decided };
    const current = await this.get(id);
    if (current === undefined) return { kind: 'not_found' };
    if (current.status === 'pending') return this.#decide(id, decision, decidedBy, cleanNote); // expired between the two statements
    return current.status === 'expired'
      ? { kind: 'expired', approval: current }
      : { kind: 'already_decided', approval: current };
  }

  async claim(id: string, claimant: string): Promise<ToolApproval | undefined> {
    if (!storableId(id)) return undefined;
    return this.#one(
      `UPDATE ${this.#t} SET status = 'executing', claimed_by = $2, claimed_at = clock_timestamp() WHERE id = $1 AND status = 'approved' RETURNING ${COLUMNS}`,
      [id, claimant],
      'claim_approval',
    );
  }

  async claimOrphaned(olderThanMs: number, claimant: string, limit: number): Promise<ToolApproval[]> {
    // SKIP LOCKED: hosts sweeping at once share the orphans instead of queueing behind each other.
    const { rows } = await this.#write(
      'claim_orphaned_approvals',
      `UPDATE ${this.#t} SET status = 'executing', claimed_by = $2, claimed_at = clock_timestamp() WHERE id IN (` +
        `SELECT id FROM ${this.#t} WHERE status = 'approved' AND decided_at <= clock_timestamp() - make_interval(secs => $1::double precision / 1000) ` +
        `ORDER BY decided_at LIMIT $3 FOR UPDATE SKIP LOCKED) AND status = 'approved' RETURNING ${COLUMNS}`,
      [olderThanMs, claimant, limit],
      'nested',
    );
    return rows.map(toApproval);
  }

  async complete(id: string, status: ApprovalCompletion, result: unknown): Promise<ToolApproval | undefined> {
    return this.#one(
      `UPDATE ${this.#t} SET status = $2, result = $3::jsonb, completed_at = clock_timestamp() WHERE id = $1 AND status = 'executing' RETURNING ${COLUMNS}`,
      [id, status, JSON.stringify(result ?? null)],
      'complete_approval',
    );
  }

  async abandonStale(olderThanMs: number): Promise<ToolApproval[]> {
    const { rows } = await this.#write(
      'abandon_stale_approvals',
      `UPDATE ${this.#t} SET status = 'outcome_unknown', result = $2::jsonb, completed_at = clock_timestamp() ` +
        `WHERE status = 'executing' AND claimed_at <= clock_timestamp() - make_interval(secs => $1::double precision / 1000) RETURNING ${COLUMNS}`,
      [olderThanMs, JSON.stringify(abandonedResult())],
      'nested',
    );
    return rows.map(toApproval);
  }

  async expireDue(): Promise<number> {
    const { rowCount } = await this.#write(
      'expire_approvals',
      `UPDATE ${this.#t} SET status = 'expired' WHERE status = 'pending' AND expires_at <= clock_timestamp()`,
      [],
      'nested',
    );
    return rowCount ?? 0;
  }
}

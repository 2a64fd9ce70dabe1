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
import type { Queries } from './approvals.js';

type AuditRow = AuditRowOf<Date>;
const iso = (time: Date) => time.toISOString();

/**
 * The audit trail in the PostgreSQL session schema. A batch is one INSERT over arrays (`unnest`): one
 * round trip, all or none. A prune deletes at most {@link AUDIT_PRUNE_BATCH} rows per statement; a
 * DELETE takes no lock that an INSERT waits for, so calls recording meanwhile are never held up.
 */
export class PostgresAuditStore implements AuditStore {
  readonly #pool: Queries;
  readonly #t: string;

  constructor(pool: Queries, quotedSchema: string) {
    this.#pool = pool;
    this.#t = `${quotedSchema}.agent_audit_records`;
  }

  async append(records: readonly NewAuditRecord[]): Promise<void> {
    const checked = records.map(checkAuditRecord);
    if (checked.length === 0) return;
    const column = <K extends keyof (typeof checked)[number]>(key: K) => checked.map((r) => r[key]);
    await this.#pool.query(
      `INSERT INTO ${this.#t} (at, kind, principal, session_id, tool_name, arguments_hash, outcome, duration_ms, trace_id, approval_id, decision, from_mode, to_mode) ` +
        `SELECT coalesce(at, clock_timestamp()), kind, principal, session_id, tool_name, arguments_hash, outcome, duration_ms, trace_id, approval_id, decision, from_mode, to_mode ` +
        `FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[]) ` +
        `AS r(at, kind, principal, session_id, tool_name, arguments_hash, outcome, duration_ms, trace_id, approval_id, decision, from_mode, to_mode)`,
      [
        column('at'),
        column('kind'),
        column('principal'),
        column('sessionId'),
        column('tool'),
        column('argumentsHash'),
        column('outcome'),
        column('durationMs'),
        column('traceId'),
        column('approvalId'),
        column('decision'),
        column('fromMode'),
        column('toMode'),
      ],
    );
  }

  async get(id: string): Promise<AuditRecord | undefined> {
    const seq = auditSeqOf(id);
    if (seq === undefined) return undefined;
    const { rows } = await this.#pool.query<AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM ${this.#t} WHERE seq = $1`, [seq]);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- an index or key that is not there reads undefined, which the type (no noUncheckedIndexedAccess) leaves out
    return rows[0] === undefined ? undefined : rowToAuditRecord(rows[0], iso);
  }

  async list(filter: AuditFilter = {}): Promise<AuditPage> {
    const resolved = resolveAuditFilter(filter);
    if (resolved.matchesNothing) return { records: [], nextCursor: null };
    const { where, params } = auditWhere(
      resolved,
      (index) => `$${index}`,
      (param) => `${param}::timestamptz`,
    );
    params.push(resolved.limit + 1);
    const { rows } = await this.#pool.query<AuditRow>(
      `SELECT ${AUDIT_COLUMNS} FROM ${this.#t} ${where} ORDER BY seq DESC LIMIT $${params.length}`,
      params,
    );
    return auditPage(rows, resolved.limit, iso);
  }

  async prune(retention: AuditRetention): Promise<number> {
    const { maxAgeMs, maxRecords } = checkRetention(retention);
    let removed = 0;
    for (;;) {
      let changes = 0;
      if (maxAgeMs !== undefined) {
        const { rowCount } = await this.#pool.query(
          `DELETE FROM ${this.#t} WHERE seq IN (SELECT seq FROM ${this.#t} WHERE at < clock_timestamp() - make_interval(secs => $1::double precision / 1000) ORDER BY seq LIMIT $2)`,
          [maxAgeMs, AUDIT_PRUNE_BATCH],
        );
        changes += rowCount ?? 0;
      }
      if (maxRecords !== undefined) {
        const { rowCount } = await this.#pool.query(
          `DELETE FROM ${this.#t} WHERE seq IN (SELECT seq FROM ${this.#t} WHERE seq <= ` +
            `(SELECT seq FROM ${this.#t} ORDER BY seq DESC LIMIT 1 OFFSET $1) ORDER BY seq LIMIT $2)`,
          [maxRecords, AUDIT_PRUNE_BATCH],
        );
        changes += rowCount ?? 0;
      }
      removed += changes;
      if (changes === 0) return removed;
    }
  }
}

import type Database from 'better-sqlite3';
import type {
  AUDIT_PRUNE_BATCH,
  AuditFilter,
  AuditPage,
  AuditRecord,
  AuditRetention,
  AuditStore,
  NewAuditRecord,
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
import type { AuditWriterThread } from './audit-writer.js';
import { auditRowValues, prepareAuditWrites, type AuditWrites } from './audit-writes.js';

type AuditRow = AuditRowOf<string>;
const same = (time: string) => time;
/** Lets calls waiting for the thread run between two batches of a long prune. */
const yieldToCalls = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The audit trail in the SQLite session database. A batch is one IMMEDIATE transaction of prepared
 * inserts; a prune deletes at most {@link AUDIT_PRUNE_BATCH} rows per transaction. With a writer thread
 * (a file database in WAL mode, the default), both run there, on a connection of its own, and the
 * event loop only checks the records and posts their values; without one (`:memory:`,
 * `auditWriter: 'inline'`), they run on the store's connection, and a prune yields the thread between
 * two batches, so a call never waits behind a long delete. Reads run on the store's connection.
 */
export class SqliteAuditStore implements AuditStore {
  readonly #db: Database.Database;
  readonly #run: <T>(operation: () => T) => Promise<T>;
  readonly #writer: AuditWriterThread | undefined;
  #writes: AuditWrites | undefined;
  readonly #get: Database.Statement<[number], AuditRow>;

  constructor(
    db: Database.Database,
    run: <T>(operation: () => T) => Promise<T> = async (operation) => operation(),
    writer?: AuditWriterThread,
  ) {
    this.#db = db;
    this.#run = run;
    this.#writer = writer;
    this.#get = db.prepare<[number], AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM agent_audit_records WHERE seq = ?`);
  }

  /** @internal The writer thread, when the store writes on one (tests end its thread to see a crash handled). */
  get writer(): AuditWriterThread | undefined {
    return this.#writer;
  }

  /** The statements that write on the store's own connection, prepared when first needed. */
  get #inline(): AuditWrites {
    return (this.#writes ??= prepareAuditWrites(this.#db));
  }

  async append(records: readonly NewAuditRecord[]): Promise<void> {
    const checked = records.map(checkAuditRecord);
    if (checked.length === 0) return;
    const values = auditRowValues(checked, new Date().toISOString());
    if (this.#writer !== undefined) return this.#writer.append(values);
    await this.#run(() => this.#inline.insert(values));
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
    const checked = checkRetention(retention);
    if (this.#writer !== undefined) return this.#writer.prune(checked);
    let removed = 0;
    for (;;) {
      const changes = await this.#run(() => this.#inline.pruneStep(checked));
      removed += changes;
      if (changes === 0) return removed;
      await yieldToCalls();
    }
  }
}

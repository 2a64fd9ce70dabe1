/**
 * The audit trail: what a host did that changed something. One record per call of a tool that is not
 * read-only (and of read-only ones when the host is asked to), per approval decision and per mode change:
 * when, who (the principal: an API key's name or an OAuth subject), in which session, which tool, a hash
 * of the arguments (never the arguments), the outcome code, the duration and the trace id.
 *
 * Records are appended in batches and never changed; retention prunes the oldest. Pages are read newest
 * first by keyset (`seq < cursor`), so a page never repeats or skips a record because others were
 * appended or pruned in between.
 */

/** What a record is about. */
export type AuditKind = 'tool_call' | 'approval_decision' | 'mode_change';
export const AUDIT_KINDS: readonly AuditKind[] = ['tool_call', 'approval_decision', 'mode_change'];

/** The outcome code of a call that succeeded. Failures carry their error code (`TIMEOUT`, `FORBIDDEN`, …). */
export const AUDIT_OUTCOME_OK = 'OK';

/** A record to append. Times are ISO-8601 strings; `at` defaults to the store's clock. */
export interface NewAuditRecord {
  /** When the call started (or the decision was made). */
  readonly at?: string;
  readonly kind: AuditKind;
  /** Who acted: an API key's name or an OAuth subject; null on a host without keys. */
  readonly principal: string | null;
  readonly sessionId: string | null;
  readonly tool: string;
  /** SHA-256 (hex) of the arguments' canonical JSON; null when there were none to hash. */
  readonly argumentsHash: string | null;
  /** `OK`, or the error code of the outcome (`TIMEOUT`, `PENDING_APPROVAL`, `APPROVED`, …). */
  readonly outcome: string;
  /** Whole milliseconds the call took; null for a decision. */
  readonly durationMs: number | null;
  /** The W3C trace id (32 hex digits) of the span the call ran in, when tracing is on. */
  readonly traceId: string | null;
  /** The approval a call ran for, or a decision decided. */
  readonly approvalId?: string | null;
  /** An approval decision's choice. */
  readonly decision?: 'approve' | 'deny' | null;
  /** A mode change: the mode left and the mode entered. */
  readonly fromMode?: string | null;
  readonly toMode?: string | null;
}

/** A stored record. `id` is its place in the trail: later records have greater ids. */
export interface AuditRecord {
  readonly id: string;
  readonly at: string;
  readonly kind: AuditKind;
  readonly principal: string | null;
  readonly sessionId: string | null;
  readonly tool: string;
  readonly argumentsHash: string | null;
  readonly outcome: string;
  readonly durationMs: number | null;
  readonly traceId: string | null;
  readonly approvalId: string | null;
  readonly decision: 'approve' | 'deny' | null;
  readonly fromMode: string | null;
  readonly toMode: string | null;
}

/** Which records to read: every filter given must match. */
export interface AuditFilter {
  readonly tool?: string;
  readonly principal?: string;
  readonly sessionId?: string;
  readonly outcome?: string;
  readonly kind?: AuditKind;
  /** Records at or after this time (ISO-8601). */
  readonly since?: string;
  /** Records before this time (ISO-8601). */
  readonly until?: string;
  /** Records in the page, 1 to {@link AUDIT_PAGE_MAX}; default 100. */
  readonly limit?: number;
  /** The `nextCursor` of the previous page; omit for the newest records. Opaque. */
  readonly cursor?: string | null;
}

export interface AuditPage {
  /** Newest first. */
  readonly records: readonly AuditRecord[];
  /** Pass it as `cursor` for the next (older) page; null on the last. */
  readonly nextCursor: string | null;
}

/** How much of the trail to keep; either bound, both, or neither (keep everything). */
export interface AuditRetention {
  /** Records older than this are removed. */
  readonly maxAgeMs?: number;
  /** At most this many records are kept, the newest. */
  readonly maxRecords?: number;
}

/** The persistence of the audit trail, on the same database as the sessions. */
export interface AuditStore {
  /** Appends records in one transaction: all or none. Throws `INVALID_ARGUMENT`/`VALUE_TOO_LONG` naming the bad field. */
  append(records: readonly NewAuditRecord[]): Promise<void>;
  /** One record by id; undefined for an id the store never gave out. */
  get(id: string): Promise<AuditRecord | undefined>;
  /** One page of records, newest first. Throws `INVALID_ARGUMENT` for a bad filter, limit or cursor. */
  list(filter?: AuditFilter): Promise<AuditPage>;
  /**
   * Removes what the retention no longer keeps, a bounded batch per statement (so writers wait at most
   * for one batch), until nothing is left to remove. Answers how many records it removed.
   */
  prune(retention: AuditRetention): Promise<number>;
}

export const AUDIT_PAGE_DEFAULT = 100;
export const AUDIT_PAGE_MAX = 1000;
/** The longest principal, session id, tool name, mode or approval id a record holds. */
export const AUDIT_KEY_MAX = 256;
/** The longest outcome code. */
export const AUDIT_OUTCOME_MAX = 64;
/** Records removed per statement when pruning. */
export const AUDIT_PRUNE_BATCH = 2000;

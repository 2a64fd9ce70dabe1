/** Checks of what an audit store persists and reads, shared by both stores. */
import { SessionStoreError } from '../errors.js';
import {
  AUDIT_KEY_MAX,
  AUDIT_KINDS,
  AUDIT_OUTCOME_MAX,
  AUDIT_PAGE_DEFAULT,
  AUDIT_PAGE_MAX,
  type AuditFilter,
  type AuditKind,
  type AuditPage,
  type AuditRecord,
  type AuditRetention,
  type NewAuditRecord,
} from '../audit.js';

const HASH = /^[0-9a-f]{64}$/;
const TRACE_ID = /^[0-9a-f]{32}$/;
/** The ISO-8601 form the stores write and compare as text: four-digit years only. */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MAX_DURATION_MS = 366 * 24 * 3600 * 1000;

function refuse(message: string): never {
  throw new SessionStoreError('INVALID_ARGUMENT', message);
}

function key(field: string, value: unknown, max: number, nullable: boolean): string | null {
  if (value === null || value === undefined) {
    if (nullable) return null;
    refuse(`${field} is required in an audit record.`);
  }
  if (typeof value !== 'string') refuse(`${field} must be a string; got ${typeof value}.`);
  if (value.length === 0 && !nullable) refuse(`${field} must not be empty.`);
  if (value.length > max)
    throw new SessionStoreError(
      'VALUE_TOO_LONG',
      `${field} is ${value.length} characters long; an audit record holds at most ${max}. Nothing was saved.`,
    );
  if (value.includes('\u0000')) refuse(`${field} contains a NUL character (\\u0000), which cannot be stored.`);
  return value;
}

/** The last time {@link auditTime} let through as it was: records of one batch often share it. */
let lastTime = '';

/** A time as the stores keep it, or a refusal naming the field. */
export function auditTime(field: string, value: string): string {
  if (value === lastTime) return value;
  // The form the stores write (a host's own clock, `toISOString()`) needs no round trip.
  if (typeof value === 'string' && value.length === 24 && ISO.test(value) && !Number.isNaN(Date.parse(value))) {
    lastTime = value;
    return value;
  }
  const ms = typeof value === 'string' && value.length <= 40 ? Date.parse(value) : Number.NaN;
  const iso = Number.isNaN(ms) ? '' : new Date(ms).toISOString();
  if (!ISO.test(iso))
    refuse(
      `${field} ${JSON.stringify(String(value).slice(0, 40))} is not a time: give an ISO-8601 time such as 2026-11-27T10:42:00Z.`,
    );
  return iso;
}

/** The row a record becomes, every field checked: nothing unbounded or malformed is stored. */
export type CheckedAuditRecord = Omit<AuditRecord, 'id' | 'at'> & { readonly at: string | null };

export function checkAuditRecord(record: NewAuditRecord): CheckedAuditRecord {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (typeof record !== 'object' || record === null) refuse('An audit record must be an object.');
  if (!AUDIT_KINDS.includes(record.kind))
    refuse(`kind must be one of ${AUDIT_KINDS.join(', ')}; got ${JSON.stringify(String(record.kind).slice(0, 40))}.`);
  const argumentsHash = record.argumentsHash ?? null;
  if (argumentsHash !== null && (typeof argumentsHash !== 'string' || !HASH.test(argumentsHash)))
    refuse('argumentsHash must be a SHA-256 digest in lowercase hex (64 digits).');
  const traceId = record.traceId ?? null;
  if (traceId !== null && (typeof traceId !== 'string' || !TRACE_ID.test(traceId)))
    refuse('traceId must be a W3C trace id: 32 lowercase hex digits.');
  const durationMs = record.durationMs ?? null;
  if (durationMs !== null && (!Number.isSafeInteger(durationMs) || durationMs < 0 || durationMs > MAX_DURATION_MS))
    refuse(
      `durationMs must be a whole number of milliseconds from 0 to ${MAX_DURATION_MS}; got ${String(durationMs)}.`,
    );
  const decision = record.decision ?? null;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (decision !== null && decision !== 'approve' && decision !== 'deny')
    refuse('decision must be "approve", "deny" or null.');
  return {
    at: record.at === undefined ? null : auditTime('at', record.at),
    kind: record.kind,
    principal: key('principal', record.principal, AUDIT_KEY_MAX, true),
    sessionId: key('sessionId', record.sessionId, AUDIT_KEY_MAX, true),
    tool: key('tool', record.tool, AUDIT_KEY_MAX, false)!,
    argumentsHash,
    outcome: key('outcome', record.outcome, AUDIT_OUTCOME_MAX, false)!,
    durationMs,
    traceId,
    approvalId: key('approvalId', record.approvalId, AUDIT_KEY_MAX, true),
    decision,
    fromMode: key('fromMode', record.fromMode, AUDIT_KEY_MAX, true),
    toMode: key('toMode', record.toMode, AUDIT_KEY_MAX, true),
  };
}

/** A filter the stores can run: equality filters, a time range, the page size and the seq to start below. */
export interface ResolvedAuditFilter {
  readonly equals: ReadonlyArray<readonly [column: string, value: string]>;
  readonly since: string | null;
  readonly until: string | null;
  readonly limit: number;
  /** Read records with `seq` below this; null for the newest. */
  readonly beforeSeq: number | null;
  /** A filter value no record can hold (NUL): the page is empty. */
  readonly matchesNothing: boolean;
}

const FILTER_COLUMNS = [
  ['tool', 'tool_name', AUDIT_KEY_MAX],
  ['principal', 'principal', AUDIT_KEY_MAX],
  ['sessionId', 'session_id', AUDIT_KEY_MAX],
  ['outcome', 'outcome', AUDIT_OUTCOME_MAX],
  ['kind', 'kind', 32],
] as const;

/** Checks a filter; every refusal names the filter and says what is accepted. */
export function resolveAuditFilter(filter: AuditFilter = {}): ResolvedAuditFilter {
  const equals: Array<readonly [string, string]> = [];
  let matchesNothing = false;
  for (const [field, column, max] of FILTER_COLUMNS) {
    const value = filter[field];
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') refuse(`The ${field} filter must be a string.`);
    if (value.length > max)
      throw new SessionStoreError(
        'VALUE_TOO_LONG',
        `The ${field} filter is ${value.length} characters long; no record holds more than ${max}. Send a shorter ${field}.`,
      );
    if (field === 'kind' && !AUDIT_KINDS.includes(value as AuditKind))
      refuse(`The kind filter must be one of ${AUDIT_KINDS.join(', ')}.`);
    if (value.includes('\u0000')) matchesNothing = true;
    equals.push([column, value]);
  }
  const limit = filter.limit ?? AUDIT_PAGE_DEFAULT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > AUDIT_PAGE_MAX)
    refuse(`limit must be a whole number from 1 to ${AUDIT_PAGE_MAX}; got ${JSON.stringify(limit)}.`);
  let beforeSeq: number | null = null;
  const cursor = filter.cursor;
  if (cursor !== undefined && cursor !== null && cursor !== '') {
    if (typeof cursor !== 'string' || !/^[1-9][0-9]{0,14}$/.test(cursor))
      refuse(
        `cursor ${JSON.stringify(String(cursor).slice(0, 40))} is not a cursor this store gave out. Pass the nextCursor of the previous page, or no cursor for the newest records.`,
      );
    beforeSeq = Number(cursor);
  }
  const since = filter.since === undefined || filter.since === '' ? null : auditTime('since', filter.since);
  const until = filter.until === undefined || filter.until === '' ? null : auditTime('until', filter.until);
  return { equals, since, until, limit, beforeSeq, matchesNothing };
}

/** The WHERE clause of a resolved filter, with the placeholders `placeholder(n)` gives (`?` or `$n`). */
export function auditWhere(
  filter: ResolvedAuditFilter,
  placeholder: (index: number) => string,
  time: (param: string) => string = (param) => param,
): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value);
    clauses.push(clause(placeholder(params.length)));
  };
  for (const [column, value] of filter.equals) add((p) => `${column} = ${p}`, value);
  if (filter.since !== null) add((p) => `at >= ${time(p)}`, filter.since);
  if (filter.until !== null) add((p) => `at < ${time(p)}`, filter.until);
  if (filter.beforeSeq !== null) add((p) => `seq < ${p}`, filter.beforeSeq);
  return { where: clauses.length === 0 ? '' : `WHERE ${clauses.join(' AND ')}`, params };
}

/** Checks a retention; a bound that is not a positive whole number is refused. */
export function checkRetention(retention: AuditRetention): AuditRetention {
  for (const field of ['maxAgeMs', 'maxRecords'] as const) {
    const value = retention[field];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1))
      refuse(`retention.${field} must be a whole number, 1 or more; got ${JSON.stringify(value)}.`);
  }
  return retention;
}

/** The record a stored row gives back. */
export interface AuditRowOf<Time> {
  seq: number | string;
  at: Time;
  kind: string;
  principal: string | null;
  session_id: string | null;
  tool_name: string;
  arguments_hash: string | null;
  outcome: string;
  duration_ms: number | string | null;
  trace_id: string | null;
  approval_id: string | null;
  decision: string | null;
  from_mode: string | null;
  to_mode: string | null;
}

export const AUDIT_COLUMNS =
  'seq, at, kind, principal, session_id, tool_name, arguments_hash, outcome, duration_ms, trace_id, approval_id, decision, from_mode, to_mode';

export function rowToAuditRecord<Time>(row: AuditRowOf<Time>, time: (value: Time) => string): AuditRecord {
  return {
    id: String(row.seq),
    at: time(row.at),
    kind: row.kind as AuditKind,
    principal: row.principal,
    sessionId: row.session_id,
    tool: row.tool_name,
    argumentsHash: row.arguments_hash,
    outcome: row.outcome,
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
    traceId: row.trace_id,
    approvalId: row.approval_id,
    decision: row.decision as 'approve' | 'deny' | null,
    fromMode: row.from_mode,
    toMode: row.to_mode,
  };
}

/** A page from the rows read with one more than the limit: the extra one says another page follows. */
export function auditPage<Time>(
  rows: readonly AuditRowOf<Time>[],
  limit: number,
  time: (value: Time) => string,
): AuditPage {
  const more = rows.length > limit;
  const records = (more ? rows.slice(0, limit) : rows).map((row) => rowToAuditRecord(row, time));
  return { records, nextCursor: more ? records.at(-1)!.id : null };
}

/** An id a record can have: a whole number the store gave out. */
export function auditSeqOf(id: string): number | undefined {
  return typeof id === 'string' && /^[1-9][0-9]{0,14}$/.test(id) ? Number(id) : undefined;
}

import {
  APPROVAL_NOTE_MAX_LENGTH,
  type ApprovalStatus,
  type NewToolApproval,
  type ToolApproval,
} from '../approvals.js';
import { SessionStoreError } from '../errors.js';

const MAX_TTL_MS = 366 * 24 * 3600 * 1000;
/** A W3C traceparent of version 00: trace id, parent (span) id and flags, in lowercase hex. */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const MAX_TEXT = 10_000;
const MAX_ARGUMENTS = 256 * 1024;

function text(field: string, value: unknown, max: number, required: boolean): string | null {
  if (value === null || value === undefined) {
    if (required) throw new SessionStoreError('INVALID_ARGUMENT', `${field} is required.`);
    return null;
  }
  if (typeof value !== 'string')
    throw new SessionStoreError('INVALID_ARGUMENT', `${field} must be a string; got ${typeof value}.`);
  if (value.length > max)
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `${field} is ${value.length} characters long; the limit is ${max}.`,
    );
  return value;
}

/** Checks what a new approval would store, so nothing unbounded or malformed is persisted. */
export function checkNewApproval(input: NewToolApproval): {
  sessionId: string | null;
  toolName: string;
  arguments: string;
  reason: string;
  requestedBy: string | null;
  ttlMs: number;
  traceparent: string | null;
} {
  const toolName = text('toolName', input.toolName, 64, true)!;
  const args = text('arguments', input.arguments, MAX_ARGUMENTS, true)!;
  try {
    JSON.parse(args);
  } catch {
    throw new SessionStoreError('INVALID_ARGUMENT', 'arguments must be JSON text.');
  }
  if (!Number.isInteger(input.ttlMs) || input.ttlMs <= 0 || input.ttlMs > MAX_TTL_MS) {
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `ttlMs must be a whole number of milliseconds from 1 to ${MAX_TTL_MS}; got ${String(input.ttlMs)}.`,
    );
  }
  return {
    sessionId: text('sessionId', input.sessionId, 256, false),
    toolName,
    arguments: args,
    reason: text('reason', input.reason, MAX_TEXT, true)!,
    requestedBy: text('requestedBy', input.requestedBy, 256, false),
    ttlMs: input.ttlMs,
    traceparent: checkTraceparent(input.traceparent),
  };
}

/** A traceparent as the store keeps it: version 00 in lowercase hex, ids not all zero (W3C trace context), or null. */
function checkTraceparent(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || !TRACEPARENT.test(value) || /^00-0{32}-|-0{16}-/.test(value))
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `traceparent ${JSON.stringify(String(value).slice(0, 64))} is not a W3C traceparent: give ` +
        '00-<32 hex digits of trace id>-<16 hex digits of span id>-<2 hex digits of flags>, in lowercase, ' +
        'the ids not all zeros, or null.',
    );
  return value;
}

export function checkNote(note: string | null | undefined): string | null {
  return text('note', note, APPROVAL_NOTE_MAX_LENGTH, false);
}

/** The result recorded for an execution whose host stopped while the tool ran. */
export function abandonedResult(): unknown {
  return {
    successful: false,
    result: null,
    errors: [
      {
        message:
          'The host running this approved call stopped before it finished, so whether the tool took ' +
          'effect is unknown. It was not run again. Check the effect the tool would have had before ' +
          'asking for the call again.',
        code: 'OUTCOME_UNKNOWN',
      },
    ],
  };
}

/** An approval row as either database returns it: times as text (SQLite) or Date (PostgreSQL). */
export interface ApprovalRowOf<Time> {
  id: string;
  session_id: string | null;
  tool_name: string;
  arguments: string;
  reason: string;
  requested_by: string | null;
  requested_at: Time;
  expires_at: Time;
  status: ApprovalStatus;
  decided_by: string | null;
  decided_at: Time | null;
  note: string | null;
  result: unknown;
  completed_at: Time | null;
  traceparent: string | null;
}

export function rowToApproval<Time>(
  row: ApprovalRowOf<Time>,
  time: (value: Time) => string,
  json: (value: unknown) => unknown,
): ToolApproval {
  return {
    id: row.id,
    sessionId: row.session_id,
    toolName: row.tool_name,
    arguments: row.arguments,
    reason: row.reason,
    requestedBy: row.requested_by,
    requestedAt: time(row.requested_at),
    expiresAt: time(row.expires_at),
    status: row.status,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at === null ? null : time(row.decided_at),
    note: row.note,
    result: row.result === null || row.result === undefined ? null : json(row.result),
    completedAt: row.completed_at === null ? null : time(row.completed_at),
    traceparent: row.traceparent ?? null,
  };
}

/** An id either store can hold and look up: not empty, no NUL (PostgreSQL text cannot hold one), bounded. */
export function storableId(id: unknown): id is string {
  return typeof id === 'string' && id !== '' && id.length <= 256 && !id.includes('\u0000');
}

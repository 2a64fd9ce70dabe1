import { SessionStoreError } from '../errors.js';
import type { HistoryPageRequest, SessionStoreLimits } from '../types.js';

/** The bounds a store applies when it is given none. */
export const DEFAULT_SESSION_STORE_LIMITS: Required<SessionStoreLimits> = Object.freeze({
  maxReasonLength: 1000,
  maxKeyLength: 256,
  defaultHistoryPageSize: 100,
  maxHistoryPageSize: 1000,
});

/** The limits with defaults filled in; refuses a bound that is not a positive whole number. */
export function resolveLimits(given: SessionStoreLimits = {}): Required<SessionStoreLimits> {
  const resolved = { ...DEFAULT_SESSION_STORE_LIMITS };
  for (const key of Object.keys(DEFAULT_SESSION_STORE_LIMITS) as (keyof SessionStoreLimits)[]) {
    const value = given[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new SessionStoreError(
        'INVALID_ARGUMENT',
        `limits.${key} must be a whole number, 1 or more; got ${JSON.stringify(value)}.`,
      );
    resolved[key] = value;
  }
  // A smaller maximum alone lowers the default with it.
  if (given.defaultHistoryPageSize === undefined)
    resolved.defaultHistoryPageSize = Math.min(resolved.defaultHistoryPageSize, resolved.maxHistoryPageSize);
  if (resolved.defaultHistoryPageSize > resolved.maxHistoryPageSize) {
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `limits.defaultHistoryPageSize (${resolved.defaultHistoryPageSize}) is larger than limits.maxHistoryPageSize (${resolved.maxHistoryPageSize}); lower the one or raise the other.`,
    );
  }
  return resolved;
}

/** The fields a store persists, with the limit that bounds each. */
export type BoundedField =
  'reason' | 'org' | 'user' | 'owner' | 'mode' | 'sessionId' | 'parentId' | 'mcpSessionId' | 'agentSessionId';

/**
 * Refuses a value longer than its bound (`VALUE_TOO_LONG`, naming the field and the limit) or holding a
 * NUL character, which PostgreSQL cannot store (`INVALID_ARGUMENT`). Both stores refuse the same values.
 */
export function checkStoredString(limits: Required<SessionStoreLimits>, field: BoundedField, value: string): void {
  const [limit, option] =
    field === 'reason' ? [limits.maxReasonLength, 'maxReasonLength'] : [limits.maxKeyLength, 'maxKeyLength'];
  if (value.length > limit) {
    throw new SessionStoreError(
      'VALUE_TOO_LONG',
      `${field} is ${value.length} characters long; the limit is ${limit} (the session store's limits.${option}). Send a shorter ${field}; nothing was saved.`,
    );
  }
  if (value.includes('\u0000')) {
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `${field} contains a NUL character (\\u0000), which cannot be stored. Remove it; nothing was saved.`,
    );
  }
}

/** An id no stored session can have: too long to have been stored, or holding NUL. Reads answer "not found". */
export function isUnstorableKey(limits: Required<SessionStoreLimits>, id: string): boolean {
  return id.length > limits.maxKeyLength || id.includes('\u0000');
}

/** The page a request names: how many rows, and the history `seq` to start after. */
export function resolvePage(
  limits: Required<SessionStoreLimits>,
  request: HistoryPageRequest = {},
): { limit: number; afterSeq: number } {
  const { limit = limits.defaultHistoryPageSize, cursor } = request;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > limits.maxHistoryPageSize) {
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `limit must be a whole number from 1 to ${limits.maxHistoryPageSize}; got ${JSON.stringify(limit)}.`,
    );
  }
  if (cursor === undefined || cursor === null || cursor === '') return { limit, afterSeq: 0 };
  if (typeof cursor !== 'string' || !/^[0-9]{1,15}$/.test(cursor)) {
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `cursor ${JSON.stringify(String(cursor).slice(0, 40))} is not a cursor this store gave out. Pass the nextCursor of the previous page, or no cursor for the first page.`,
    );
  }
  return { limit, afterSeq: Number(cursor) };
}

import { setTimeout as sleep } from 'node:timers/promises';
import { SessionStoreError } from '../errors.js';
import { SqliteError } from './driver.js';

/**
 * How long one attempt may block the thread waiting for another process's lock (SQLite's
 * `busy_timeout`). better-sqlite3 is synchronous: a long busy timeout freezes the whole event loop
 * (every request, `/healthz` too) while another process holds the write lock. So each attempt waits
 * only this long, and {@link retryWhileBusy} waits between attempts without blocking.
 */
export const BUSY_SLICE_MS = 10;

/** The longest pause between two attempts. */
const MAX_BACKOFF_MS = 100;

/** SQLite answered "busy" or "locked": another connection holds the lock. */
export function isBusy(error: unknown): boolean {
  return (
    error instanceof SqliteError && (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED'))
  );
}

export interface BusyRetry {
  /** The whole wait for the lock, in milliseconds, across attempts. */
  readonly waitMs: number;
  /** Names the database in messages. */
  readonly location: string;
  /** Checked before each attempt; an aborted call has written nothing. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `operation` (one statement or one transaction, all or nothing), and while SQLite answers
 * "busy" (another process holds the lock), runs it again after a pause that doubles up to 100 ms, until
 * `waitMs` has passed: then throws `DATABASE_LOCKED`. An aborted signal ends the wait with `CANCELLED`.
 *
 * The first attempt runs at once and, when it is not refused as busy, settles the promise without an
 * async function around it: the common read (a session's row on every call in a session) then costs
 * one promise, not one per layer.
 */
export function retryWhileBusy<T>(operation: () => T, retry: BusyRetry): Promise<T> {
  if (retry.signal?.aborted) return Promise.reject(cancelled(retry));
  const deadline = performance.now() + retry.waitMs;
  try {
    return Promise.resolve(operation());
  } catch (error) {
    if (!isBusy(error)) return Promise.reject(error as Error);
    return retryAfterBusy(operation, retry, deadline, error);
  }
}

/** The attempts after a busy one, each after a pause, until `deadline` (see {@link retryWhileBusy}). */
async function retryAfterBusy<T>(operation: () => T, retry: BusyRetry, deadline: number, busy: unknown): Promise<T> {
  let pause = 2;
  let lastBusy = busy;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) {
      throw databaseLocked(retry.location, retry.waitMs, lastBusy);
    }
    await sleep(Math.min(pause, left), undefined, { signal: retry.signal }).catch(() => undefined);
    pause = Math.min(pause * 2, MAX_BACKOFF_MS);
    if (retry.signal?.aborted) throw cancelled(retry);
    try {
      return operation();
    } catch (error) {
      if (!isBusy(error)) throw error;
      lastBusy = error;
    }
  }
}

/** The refusal of a write that waited `waitMs` for another connection's lock. */
export function databaseLocked(location: string, waitMs: number, cause: unknown): SessionStoreError {
  return new SessionStoreError(
    'DATABASE_LOCKED',
    `The ${location} is locked: another process held its lock for longer than busyTimeoutMs (${waitMs} ms). Nothing was written; ` +
      'try again, and check for another program (a backup, an sqlite3 shell) keeping a transaction open on the file.',
    { cause },
  );
}

function cancelled(retry: BusyRetry): SessionStoreError {
  return new SessionStoreError(
    'CANCELLED',
    `The call was cancelled before anything was written to the ${retry.location}; nothing was changed.`,
  );
}

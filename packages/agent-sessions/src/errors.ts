/**
 * Every stable code a session store puts on an error or a refusal, kept in one place. Codes are API:
 * hosts branch on them, so a code is never renamed or reused. `UNKNOWN_MODE` and `SESSION_NOT_FOUND`
 * are also the codes of a refused `setSessionMode` (a result, not an exception).
 */
export const SessionStoreErrorCode = {
  UNKNOWN_MODE: 'UNKNOWN_MODE',
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  CATALOG_INCONSISTENT: 'CATALOG_INCONSISTENT',
  SCHEMA_TOO_NEW: 'SCHEMA_TOO_NEW',
  UNSUPPORTED_URL: 'UNSUPPORTED_URL',
  DRIVER_MISSING: 'DRIVER_MISSING',
  STORE_CLOSED: 'STORE_CLOSED',
  /** A persisted string (reason, org, user, a mode key, an id) is longer than the store's bound. Nothing was written. */
  VALUE_TOO_LONG: 'VALUE_TOO_LONG',
  /** The call's signal was aborted before anything was committed. Nothing was written. */
  CANCELLED: 'CANCELLED',
  /** The database did not answer within a configured time-out (connection, lock, statement, query). Nothing was committed. */
  TIMEOUT: 'TIMEOUT',
  /** The database cannot be reached, or the connection broke before anything was committed. */
  UNAVAILABLE: 'UNAVAILABLE',
  /** SQLite: another process held the database's write lock for longer than the store waits. Nothing was written. */
  DATABASE_LOCKED: 'DATABASE_LOCKED',
  /** SQLite: the database file or its folder cannot be written by this process; refused when the store opens. */
  NOT_WRITABLE: 'NOT_WRITABLE',
  /**
   * The connection broke while the database was committing: the change may or may not have been saved.
   * Read the session again (GET /v1/sessions/:id, `aptix sessions show <id>`) to learn which.
   */
  OUTCOME_UNKNOWN: 'OUTCOME_UNKNOWN',
} as const;
export type SessionStoreErrorCode = (typeof SessionStoreErrorCode)[keyof typeof SessionStoreErrorCode];

/**
 * Thrown by the stores for programmer and configuration errors: an unknown mode or parent at
 * `createSession` (a host call, not a tool call), a database written by a newer version, a bad URL.
 * A tool's refused mode change is never thrown: `setSessionMode` returns it.
 */
export class SessionStoreError extends Error {
  override readonly name = 'SessionStoreError';
  readonly code: SessionStoreErrorCode;

  constructor(code: SessionStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

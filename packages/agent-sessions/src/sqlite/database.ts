/** Opening a SQLite session database: pragmas, the writability check, migrations, and the statements the store runs. */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { SessionStoreError } from '../errors.js';
import { MIGRATIONS_TABLE, pendingMigrations } from '../internal/migrations.js';
import type { ModeChange, SessionStoreLogger } from '../types.js';
import { BUSY_SLICE_MS, retryWhileBusy } from './busy.js';
import { Database, SqliteError } from './driver.js';
import { SQLITE_MIGRATIONS } from './migrations.js';

export interface SessionRow {
  id: string;
  mode: string;
  org_id: string | null;
  user_id: string | null;
  parent_id: string | null;
  owner_id: string | null;
  created_at: string;
  /** The session's highest history `seq` (0 without history), read in the same statement. */
  last_seq: number;
}

export interface ChangeRow {
  from_mode: string;
  to_mode: string;
  reason: string;
  branch: 0 | 1;
  org_id: string | null;
  user_id: string | null;
  changed_at: string;
}

export const MEMORY = ':memory:';

export function toChange(row: ChangeRow): ModeChange {
  return {
    fromMode: row.from_mode,
    toMode: row.to_mode,
    reason: row.reason,
    branch: row.branch === 1,
    org: row.org_id,
    user: row.user_id,
    at: row.changed_at,
  };
}

export function isForeignKeyViolation(error: unknown): boolean {
  return error instanceof SqliteError && error.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** What {@link openDatabase} needs. */
export interface OpenDatabaseOptions {
  readonly filename: string;
  /** The whole wait for another process's lock, across attempts. */
  readonly busyTimeoutMs: number;
}

export interface OpenedDatabase {
  readonly db: BetterSqlite3.Database;
  readonly filename: string;
  readonly schemaVersion: number;
  /** `wal` unless SQLite refused WAL mode (a network file system) or the database is in memory. */
  readonly journalMode: string;
}

/** The refusal of a database this process cannot write, with what to do about it. */
function notWritable(filename: string, cause: unknown): SessionStoreError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  const uid = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
  return new SessionStoreError(
    'NOT_WRITABLE',
    `The session database ${filename} cannot be written by this process${uid}: ${detail}. SQLite needs write access to the file and to its folder ` +
      '(for the -wal and -shm files beside it). Fix the permissions or the mount, or point the host at a writable path (APTIX_DB=sqlite:<path>).',
    { cause },
  );
}

function isNotWritable(error: unknown): boolean {
  if (error instanceof SqliteError) return /^SQLITE_(READONLY|CANTOPEN|PERM|AUTH)/.test(error.code);
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
}

/**
 * Opens the database with its pragmas, proves it can be written, and applies pending migrations;
 * closes it again if any of that fails. A file or folder this process cannot write is refused here
 * (`NOT_WRITABLE`), so a host does not start and then fail every write.
 */
export async function openDatabase(options: OpenDatabaseOptions, logger: SessionStoreLogger): Promise<OpenedDatabase> {
  const filename = options.filename === MEMORY ? MEMORY : resolve(options.filename);
  let db: BetterSqlite3.Database;
  try {
    if (filename !== MEMORY) mkdirSync(dirname(filename), { recursive: true });
    db = new Database(filename, { timeout: BUSY_SLICE_MS });
  } catch (error) {
    throw isNotWritable(error) ? notWritable(filename, error) : error;
  }
  const location = `SQLite database ${filename}`;
  const retry = { waitMs: options.busyTimeoutMs, location };
  try {
    db.pragma(`busy_timeout = ${BUSY_SLICE_MS}`);
    const journalMode = await retryWhileBusy(() => db.pragma('journal_mode = WAL', { simple: true }), retry);
    if (filename !== MEMORY && journalMode !== 'wal') {
      logger.warn(
        { store: 'sqlite', filename, journalMode },
        'SQLite refused WAL mode for the session database (is it on a network file system?); writers will block readers.',
      );
    }
    // WAL with synchronous=NORMAL: a commit is written to the WAL but fsync'd only at checkpoints. The
    // database never corrupts, and a crash of this process loses nothing committed (the OS still holds
    // the write); only an OS crash or power loss may roll back the last few commits. For sessions and
    // their modes that is the right trade against an fsync per mode change (synchronous=FULL).
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    const schemaVersion = await retryWhileBusy(() => migrate(db, filename, logger), retry);
    return { db, filename, schemaVersion, journalMode: String(journalMode) };
  } catch (error) {
    db.close();
    throw isNotWritable(error) ? notWritable(filename, error) : error;
  }
}

/**
 * Applies pending migrations in one IMMEDIATE transaction: two processes starting at once serialize on
 * SQLite's write lock, and the second finds the versions the first recorded. The transaction always
 * writes (a no-op UPDATE of the bookkeeping), so a database that cannot be written fails here, at start-up.
 */
function migrate(db: BetterSqlite3.Database, filename: string, logger: SessionStoreLogger): number {
  return db
    .transaction(() => {
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`,
      );
      const applied = db
        .prepare<[], { version: number }>(`SELECT version FROM ${MIGRATIONS_TABLE} ORDER BY version`)
        .all()
        .map((row) => row.version);
      const pending = pendingMigrations(`SQLite database ${filename}`, applied, SQLITE_MIGRATIONS);
      const record = db.prepare<[number, string, string]>(
        `INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_at) VALUES (?, ?, ?)`,
      );
      for (const migration of pending) {
        db.exec(migration.sql);
        record.run(migration.version, migration.name, new Date().toISOString());
      }
      if (pending.length > 0) {
        logger.info(
          { store: 'sqlite', filename, applied: pending.map((m) => m.version) },
          `Migrated the session database to schema version ${pending.at(-1)?.version}.`,
        );
      }
      db.prepare(
        `UPDATE ${MIGRATIONS_TABLE} SET name = name WHERE version = (SELECT max(version) FROM ${MIGRATIONS_TABLE})`,
      ).run();
      return Math.max(0, ...applied, ...pending.map((m) => m.version));
    })
    .immediate();
}

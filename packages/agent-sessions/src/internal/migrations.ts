import { SessionStoreError } from '../errors.js';

/** One step of a store's schema. Released steps are frozen: a change to the schema is a new step. */
export interface Migration {
  /** 1, 2, 3, …: the steps of one store, without gaps. */
  readonly version: number;
  readonly name: string;
}

/**
 * The bookkeeping table, named after this package rather than `schema_migrations` or SQLite's
 * `user_version`, because the database (`.aptix/aptix.db`, or a PostgreSQL schema) may hold other
 * packages' tables with migrations of their own.
 */
export const MIGRATIONS_TABLE = 'agent_sessions_schema_migrations';

/** Throws when a store's migration list is not 1..n in order: a programmer error in this package. */
export function assertMigrationSequence(store: string, migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(
        `${store} migration "${migration.name}" has version ${migration.version} at position ${index + 1}; versions must run 1, 2, 3, … without gaps.`,
      );
    }
  });
}

/**
 * The migrations still to apply, in order, given the versions the database records. Refuses a database
 * that a newer version of this package has already migrated, instead of running against a schema it does
 * not know.
 */
export function pendingMigrations<M extends Migration>(
  location: string,
  applied: readonly number[],
  known: readonly M[],
): M[] {
  const newestKnown = known.at(-1)?.version ?? 0;
  const newestApplied = Math.max(0, ...applied);
  if (newestApplied > newestKnown) {
    throw new SessionStoreError(
      'SCHEMA_TOO_NEW',
      `The ${location} is at schema version ${newestApplied}, but this @aptix/agent-sessions knows versions up to ${newestKnown}. ` +
        'A newer version of the package has migrated it: upgrade @aptix/agent-sessions on this host, or point it at another database.',
    );
  }
  const done = new Set(applied);
  return known.filter((migration) => !done.has(migration.version));
}

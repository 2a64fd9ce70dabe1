/** Start-up migrations of the PostgreSQL store: one transaction under an advisory lock per schema. */
import { createHash } from 'node:crypto';
import { escapeIdentifier } from 'pg';
import { MIGRATIONS_TABLE, pendingMigrations } from '../internal/migrations.js';
import type { SessionStoreLogger } from '../types.js';
import type { PgGateway } from './connection.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';

/** A 64-bit advisory-lock key of its own per schema, so stores in other schemas never wait on it. */
function migrationLockKey(schema: string): string {
  return createHash('sha256')
    .update(`@aptix/agent-sessions:migrations:${schema}`)
    .digest()
    .readBigInt64BE(0)
    .toString();
}

/**
 * Applies pending migrations in one transaction that first takes a transaction-scoped advisory lock
 * for the schema, so hosts starting at once run them one after another: the first migrates, the others
 * then find the versions it recorded. DDL is transactional in PostgreSQL: a failed step leaves nothing.
 */
export async function migrate(db: PgGateway, schema: string, logger: SessionStoreLogger): Promise<number> {
  const s = escapeIdentifier(schema);
  return db.transaction(undefined, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [migrationLockKey(schema)]);
    // Checked first: CREATE SCHEMA IF NOT EXISTS still demands the CREATE privilege on the database.
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.${MIGRATIONS_TABLE} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    );
    const applied = (
      await client.query<{ version: number }>(`SELECT version FROM ${s}.${MIGRATIONS_TABLE} ORDER BY version`)
    ).rows.map((row) => row.version);
    const pending = pendingMigrations(`PostgreSQL schema "${schema}"`, applied, POSTGRES_MIGRATIONS);
    for (const migration of pending) {
      await client.query(migration.sql(s));
      await client.query(`INSERT INTO ${s}.${MIGRATIONS_TABLE} (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
    }
    if (pending.length > 0) {
      logger.info(
        { store: 'postgres', schema, applied: pending.map((m) => m.version) },
        `Migrated the session database to schema version ${pending.at(-1)?.version}.`,
      );
    }
    return Math.max(0, ...applied, ...pending.map((m) => m.version));
  });
}

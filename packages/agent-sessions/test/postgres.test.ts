import { Pool, escapeIdentifier } from 'pg';
import { describe, expect, it } from 'vitest';
import { openSessionStore } from '../src/open.js';
import { openPostgresSessionStore, PostgresSessionStore } from '../src/postgres/index.js';
import { POSTGRES_MIGRATIONS } from '../src/postgres/migrations.js';
import { fixedModes } from './fixtures/modes.js';
import { describeWithPostgres, PG_URL, RUN_ID } from './fixtures/postgres.js';
import { writePostgresVersion1 } from './fixtures/postgres-version1.js';
import { describeApprovalStore } from './approvals.suite.js';
import { describeTaskStore } from './tasks.suite.js';
import { describeAuditStore } from './audit.suite.js';
import { describeSessionStoreLifecycle } from './session-store-lifecycle.suite.js';
import { describeSessionStoreLimits } from './session-store-limits.suite.js';
import { describeSessionStore, type SessionStoreHarness, type TestDatabase } from './session-store.suite.js';

const url = PG_URL;
const runId = RUN_ID;

/** Each database is a fresh schema in the test database, dropped when the suite ends. */
function createHarness(): SessionStoreHarness {
  const admin = new Pool({ connectionString: url, max: 2 });
  const schemas: string[] = [];
  return {
    async createDatabase(): Promise<TestDatabase> {
      const schema = `${runId}_${schemas.length + 1}`;
      schemas.push(schema);
      const s = escapeIdentifier(schema);
      const database: TestDatabase = {
        url,
        options: { postgres: { schema } },
        async writeVersion1(fixture) {
          const client = await admin.connect();
          try {
            await writePostgresVersion1(client, s, fixture);
          } finally {
            client.release();
          }
        },
        async writeVersion6(fixture) {
          await database.writeVersion1(fixture);
          // The released steps after version 1, as those releases ran them (released steps are frozen).
          const client = await admin.connect();
          try {
            await client.query('BEGIN');
            for (const step of POSTGRES_MIGRATIONS.filter((m) => m.version > 1 && m.version <= 6)) {
              await client.query(step.sql(s));
              await client.query(`INSERT INTO ${s}.agent_sessions_schema_migrations (version, name) VALUES ($1, $2)`, [
                step.version,
                step.name,
              ]);
            }
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          } finally {
            client.release();
          }
        },
        async appliedMigrations() {
          const { rows } = await admin.query<{ version: number }>(
            `SELECT version FROM ${s}.agent_sessions_schema_migrations ORDER BY version`,
          );
          return rows.map((row) => row.version);
        },
        async recordMigration(version, name) {
          await admin.query(`INSERT INTO ${s}.agent_sessions_schema_migrations (version, name) VALUES ($1, $2)`, [
            version,
            name,
          ]);
        },
      };
      return database;
    },
    async dispose() {
      for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${escapeIdentifier(schema)} CASCADE`);
      await admin.end();
    },
  };
}

describeWithPostgres('PostgreSQL session store', () => {
  describeSessionStore('PostgreSQL session store', createHarness());
  describeApprovalStore('PostgreSQL session store', createHarness());
  describeTaskStore('PostgreSQL session store', createHarness());
  describeAuditStore('PostgreSQL session store', createHarness());
  describeSessionStoreLimits('PostgreSQL session store', createHarness());
  describeSessionStoreLifecycle('PostgreSQL session store', createHarness());

  describe('PostgreSQL specifics', () => {
    it('runs on a pool the caller owns and leaves it open on close', async () => {
      const pool = new Pool({ connectionString: url, max: 2 });
      const schema = `${runId}_own_pool`;
      try {
        const store = await openPostgresSessionStore({ pool, schema, modes: fixedModes() });
        expect(store.schema).toBe(schema);
        expect(store.schemaVersion).toBe(9);
        const session = await store.createSession({});
        await store.close();
        expect(pool.ended).toBe(false);
        const { rows } = await pool.query<{ mode: string }>(
          `SELECT mode FROM ${escapeIdentifier(schema)}.agent_sessions WHERE id = $1`,
          [session.id],
        );
        expect(rows).toEqual([{ mode: 'general_chat' }]);
      } finally {
        await pool.query(`DROP SCHEMA IF EXISTS ${escapeIdentifier(schema)} CASCADE`);
        await pool.end();
      }
    });

    it('reads session heads through prepared statements that stay apart for two schemas on one pool', async () => {
      const pool = new Pool({ connectionString: url, max: 1 });
      const schemas = [`${runId}_head_a`, `${runId}_head_b`];
      try {
        const [a, b] = await Promise.all(
          schemas.map((schema) => openPostgresSessionStore({ pool, schema, modes: fixedModes() })),
        );
        const inA = await a!.createSession({ mode: 'code_review' });
        const inB = await b!.createSession({ mode: 'ddr_authoring' });
        // One connection: both statements are prepared on it, each under its own name.
        for (let round = 0; round < 3; round++) {
          expect((await a!.getSessionHead(inA.id))?.mode).toBe('code_review');
          expect((await b!.getSessionHead(inB.id))?.mode).toBe('ddr_authoring');
          expect(await a!.getSessionHead(inB.id)).toBeUndefined();
          expect(await b!.getSessionHead(inA.id)).toBeUndefined();
        }
        const { rows } = await pool.query<{ count: string }>(
          `SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'aptix_session_head_%'`,
        );
        // pg_prepared_statements shows this query's own connection: the pool has one, so it is the one the stores used.
        expect(Number(rows[0]!.count)).toBe(2);
        await Promise.all([a!.close(), b!.close()]);
      } finally {
        for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${escapeIdentifier(schema)} CASCADE`);
        await pool.end();
      }
    });

    it('is what openSessionStore returns for postgres:// and postgresql:// URLs', async () => {
      const schema = `${runId}_by_url`;
      const stores = [
        await openSessionStore(url, { modes: fixedModes(), postgres: { schema } }),
        await openSessionStore(url.replace(/^postgres:\/\//, 'postgresql://'), {
          modes: fixedModes(),
          postgres: { schema, poolSize: 2 },
        }),
      ];
      try {
        for (const store of stores) expect(store).toBeInstanceOf(PostgresSessionStore);
        const session = await stores[0]!.createSession({});
        expect(await stores[1]!.getSession(session.id)).toEqual(session);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        const pool = new Pool({ connectionString: url, max: 1 });
        await pool.query(`DROP SCHEMA IF EXISTS ${escapeIdentifier(schema)} CASCADE`);
        await pool.end();
      }
    });

    it('refuses a schema name it would have to guess how to quote, and a missing or doubled connection', async () => {
      await expect(
        openPostgresSessionStore({ connectionString: url, schema: 'bad-name; DROP', modes: fixedModes() }),
      ).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('"bad-name; DROP"'),
      });
      await expect(openPostgresSessionStore({ modes: fixedModes() })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('exactly one of connectionString'),
      });
      const pool = new Pool({ connectionString: url, max: 1 });
      try {
        await expect(
          openPostgresSessionStore({ pool, connectionString: url, modes: fixedModes() }),
        ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      } finally {
        await pool.end();
      }
    });
  });
});

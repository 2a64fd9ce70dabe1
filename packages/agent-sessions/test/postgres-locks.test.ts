/**
 * PostgreSQL: a mode change that waits for a session's row lock, held by a real second connection, and
 * COMMITs held open by a deferred trigger. A cancelled or timed-out change is rolled back and never
 * applied later; a change whose COMMIT was under way reports what the database did, or that it cannot know.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, escapeIdentifier, Pool } from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openPostgresSessionStore, type PostgresSessionStore, type PostgresTimeouts } from '../src/postgres/index.js';
import type { AgentSession } from '../src/types.js';
import { fixedModes } from './fixtures/modes.js';
import { describeWithPostgres, PG_URL, RUN_ID } from './fixtures/postgres.js';
import { expectStoreError } from './session-store.suite.js';

describeWithPostgres('PostgreSQL session store: locks, cancellation and COMMIT', () => {
  // The store's connections carry a name of their own, so the test finds them among other users of the server.
  const applicationName = `aptix_locks_${randomBytes(4).toString('hex')}`;
  const admin = new Pool({ connectionString: PG_URL, max: 3 });
  const schemas: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });
  afterAll(async () => {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${escapeIdentifier(schema)} CASCADE`);
    await admin.end();
  });

  async function freshStore(
    timeouts: PostgresTimeouts = {},
  ): Promise<{ store: PostgresSessionStore; schema: string; session: AgentSession }> {
    const schema = `${RUN_ID}_locks_${schemas.length + 1}`;
    schemas.push(schema);
    const pool = new Pool({ connectionString: PG_URL, max: 4, application_name: applicationName });
    const store = await openPostgresSessionStore({ pool, schema, modes: fixedModes(), timeouts });
    cleanups.push(async () => {
      await store.close();
      await pool.end();
    });
    return { store, schema, session: await store.createSession({ org: 'acme', user: 'kevin' }) };
  }

  /** A second connection that locks the session's row (SELECT … FOR UPDATE) in an open transaction. */
  async function holdRowLock(schema: string, sessionId: string): Promise<{ release(): Promise<void> }> {
    const holder = new Client({ connectionString: PG_URL });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM ${escapeIdentifier(schema)}.agent_sessions WHERE id = $1 FOR UPDATE`, [
      sessionId,
    ]);
    const release = async () => {
      await holder.query('COMMIT').catch(() => undefined);
      await holder.end();
    };
    cleanups.push(release);
    return {
      release: () =>
        release().then(
          () => undefined,
          () => undefined,
        ),
    };
  }

  /** The store's statements that wait for a lock, with the text they run. */
  async function lockWaits(): Promise<string[]> {
    const { rows } = await admin.query<{ query: string }>(
      "SELECT query FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND state = 'active'",
      [applicationName],
    );
    return rows.map((row) => row.query);
  }

  /** Polls until `check` holds; the test's own time-out ends a wait that never does. */
  async function until(check: () => Promise<boolean>): Promise<void> {
    while (!(await check())) await sleep(25);
  }

  /** The store's connections that still run something. */
  async function busyConnections(): Promise<number> {
    const { rows } = await admin.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle'",
      [applicationName],
    );
    return Number(rows[0]!.n);
  }

  async function modeOf(schema: string, sessionId: string): Promise<string> {
    const { rows } = await admin.query<{ mode: string }>(
      `SELECT mode FROM ${escapeIdentifier(schema)}.agent_sessions WHERE id = $1`,
      [sessionId],
    );
    return rows[0]!.mode;
  }

  /** A deferred trigger that makes every COMMIT touching a session wait for an advisory lock the test holds. */
  async function holdCommits(schema: string): Promise<{ release(): Promise<void> }> {
    const key = randomInt(1, 2 ** 47);
    const s = escapeIdentifier(schema);
    await admin.query(
      `CREATE FUNCTION ${s}.hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock(${key}); RETURN NULL; END $$; ` +
        `CREATE CONSTRAINT TRIGGER hold_commit AFTER UPDATE ON ${s}.agent_sessions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${s}.hold_commit()`,
    );
    const holder = new Client({ connectionString: PG_URL });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [key]);
    const release = async () => {
      await holder.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
      await holder.end();
    };
    cleanups.push(release);
    return {
      release: () =>
        release().then(
          () => undefined,
          () => undefined,
        ),
    };
  }

  describe('a session row locked by another connection', () => {
    it('an abort cancels the lock wait on the server and rolls back: the change is never applied, not even after the lock is released', async () => {
      const { store, schema, session } = await freshStore({
        lockTimeoutMs: 60_000,
        statementTimeoutMs: 60_000,
        queryTimeoutMs: 90_000,
      });
      const lock = await holdRowLock(schema, session.id);
      const controller = new AbortController();
      const change = store.setSessionMode(
        session.id,
        'code_review',
        'cancelled while the row is locked',
        'acme',
        'kevin',
        { signal: controller.signal },
      );
      await until(async () => (await lockWaits()).some((query) => query.includes('FOR UPDATE')));

      controller.abort();
      expect(await change).toMatchObject({
        applied: false,
        code: 'CANCELLED',
        message: expect.stringContaining('unchanged'),
      });
      // The server stopped waiting: the cancel reached it, the connection is gone.
      await until(async () => (await lockWaits()).length === 0);
      await lock.release();
      await until(async () => (await busyConnections()) === 0);
      expect(await modeOf(schema, session.id)).toBe(session.mode);
      expect(await store.getSession(session.id)).toEqual(session);
      // The store carries on.
      expect(await store.setSessionMode(session.id, 'ddr_authoring', 'after the lock', 'acme', 'kevin')).toMatchObject({
        applied: true,
      });
    });

    it('lockTimeoutMs bounds the wait: TIMEOUT naming the setting, nothing changed, then or later', async () => {
      const { store, schema, session } = await freshStore({ lockTimeoutMs: 300 });
      const lock = await holdRowLock(schema, session.id);
      await expectStoreError(
        store.setSessionMode(session.id, 'code_review', 'locked out', 'acme', 'kevin'),
        'TIMEOUT',
        'lockTimeoutMs (300 ms)',
        'Nothing was changed',
      );
      await lock.release();
      await until(async () => (await busyConnections()) === 0);
      expect(await store.getSession(session.id)).toEqual(session);
    });
  });

  describe('COMMIT under way', () => {
    it('an abort that arrives while COMMIT runs gets the committed result, not "cancelled"', async () => {
      const { store, schema, session } = await freshStore({
        lockTimeoutMs: 60_000,
        statementTimeoutMs: 60_000,
        queryTimeoutMs: 90_000,
      });
      const commits = await holdCommits(schema);
      const controller = new AbortController();
      const change = store.setSessionMode(session.id, 'code_review', 'committed as the abort came', 'acme', 'kevin', {
        signal: controller.signal,
      });
      await until(async () => (await lockWaits()).includes('COMMIT'));
      controller.abort();
      await sleep(50);
      await commits.release();
      const result = await change;
      expect(result).toMatchObject({ applied: true, change: { fromMode: session.mode, toMode: 'code_review' } });
      expect(await modeOf(schema, session.id)).toBe('code_review');
    });

    it('a COMMIT that goes unanswered is OUTCOME_UNKNOWN, and the answer says how to check the session', async () => {
      const { store, schema, session } = await freshStore({
        lockTimeoutMs: 60_000,
        statementTimeoutMs: 60_000,
        queryTimeoutMs: 1_500,
      });
      const commits = await holdCommits(schema);
      const result = await store.setSessionMode(session.id, 'code_review', 'commit left unanswered', 'acme', 'kevin');
      expect(result).toEqual({
        applied: 'unknown',
        code: 'OUTCOME_UNKNOWN',
        message: expect.stringContaining('may or may not have been saved'),
      });
      if (result.applied !== 'unknown') throw new Error('unreachable');
      expect(result.message).toContain(`GET /v1/sessions/${session.id}`);
      expect(result.message).toContain(`aptix sessions show ${session.id}`);
      await commits.release();
    });
  });
});

/**
 * A PostgreSQL server that stops answering (every process SIGSTOPped), then comes back, then stops:
 * every call of the store ends within its time-outs with a clear error instead of hanging for as long
 * as the server is frozen, nothing half-done is committed later, and the store recovers.
 */
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresSessionStore, type PostgresSessionStore } from '../src/postgres/index.js';
import { fixedModes } from './fixtures/modes.js';
import { postgresBinaries, startPrivatePostgres, type PrivatePostgres } from './fixtures/private-postgres.js';
import { applied } from './session-store.suite.js';

const bin = postgresBinaries();
const inCi = process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI.toLowerCase());

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => String((error as { code?: unknown }).code),
  );
}

describe.skipIf(bin === undefined && !inCi)(
  'PostgreSQL session store against a server that freezes and stops (a private server)',
  () => {
    let server: PrivatePostgres;
    let store: PostgresSessionStore;
    const errors: string[] = [];

    beforeAll(async () => {
      if (bin === undefined)
        throw new Error(
          'No PostgreSQL binaries under /usr/lib/postgresql/*/bin: install PostgreSQL to run this suite.',
        );
      server = await startPrivatePostgres(bin);
      const logger = {
        info() {},
        warn() {},
        error: (_fields: Record<string, unknown>, message: string) => errors.push(message),
      };
      store = await openPostgresSessionStore({
        connectionString: server.url,
        modes: fixedModes(),
        logger,
        poolSize: 3,
        timeouts: {
          connectionTimeoutMs: 1_000,
          statementTimeoutMs: 1_000,
          lockTimeoutMs: 1_000,
          queryTimeoutMs: 2_000,
        },
      });
    }, 120_000);
    afterAll(async () => {
      await store?.close().catch(() => undefined);
      await server?.stop();
    }, 60_000);

    /** Server backends still running a statement, besides the one asking. */
    async function activeBackends(): Promise<number> {
      const admin = new Client({ connectionString: server.url });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND state <> 'idle' AND pid <> pg_backend_pid()",
        );
        return Number(rows[0]!.n);
      } finally {
        await admin.end();
      }
    }

    it(
      'fails every kind of call with TIMEOUT while the server is frozen, commits nothing, and recovers when it thaws',
      { timeout: 60_000 },
      async () => {
        const session = await store.createSession({});
        applied(await store.setSessionMode(session.id, 'ddr_authoring', 'before the freeze', null, null));
        await store.ping();

        await server.freeze();
        try {
          // In flight at once: more calls than pooled connections, so some wait for a connection that a
          // frozen server never completes.
          const codes = await Promise.all([
            codeOf(store.ping()),
            codeOf(store.getSession(session.id)),
            codeOf(store.setSessionMode(session.id, 'code_review', 'during the freeze', null, null)),
            codeOf(store.createSession({})),
            codeOf(store.appendConversationItems(session.id, [{ during: 'the freeze' }])),
            codeOf(store.approvals.list({ sessionId: session.id })),
          ]);
          expect(codes).toEqual(['TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'TIMEOUT']);
          const messages = await store.ping().catch((error: Error) => error.message);
          expect(messages).toMatch(/queryTimeoutMs \(2000 ms\)|connectionTimeoutMs \(1000 ms\)/);
        } finally {
          await server.thaw();
        }

        // What was sent before the freeze is processed now; nothing of it may commit.
        while ((await activeBackends()) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        await store.ping();
        const after = await store.getSession(session.id);
        expect(after?.mode).toBe('ddr_authoring');
        expect(after?.history.map((change) => change.reason)).toEqual(['before the freeze']);
        expect(await store.listConversationItems(session.id)).toEqual([]);
        applied(await store.setSessionMode(session.id, 'code_review', 'after the thaw', null, null));
      },
    );

    it('fails with UNAVAILABLE, not a hang, once the server is stopped', { timeout: 60_000 }, async () => {
      await store.ping();
      await server.stop();
      expect(await codeOf(store.ping())).toBe('UNAVAILABLE');
      await expect(store.getSession('any')).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: expect.stringContaining('PostgreSQL'),
      });
    });
  },
);

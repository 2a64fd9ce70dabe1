/**
 * The history a store keeps so a read or a mode change fetches only the rows committed since: bounded,
 * handing out snapshots nobody can change, and never stale, whoever else writes to the database.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Pool, escapeIdentifier } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { HistoryCache } from '../src/internal/history-cache.js';
import { openSessionStore } from '../src/open.js';
import type { AgentSessionStore, ModeChange } from '../src/types.js';
import { fixedModes, MODE_KEYS } from './fixtures/modes.js';

function change(n: number): ModeChange {
  return {
    fromMode: 'a',
    toMode: 'b',
    reason: `r${n}`,
    branch: false,
    org: null,
    user: null,
    at: new Date(n).toISOString(),
  };
}

describe('HistoryCache', () => {
  it('hands out the rows held plus the newer ones, as a fresh array each time', () => {
    const cache = new HistoryCache();
    const first = cache.extend('s', cache.base('s'), [change(1), change(2)], 2);
    expect(first.map((c) => c.reason)).toEqual(['r1', 'r2']);
    expect(cache.base('s')).toMatchObject({ lastSeq: 2, length: 2 });
    const second = cache.extend('s', cache.base('s'), [change(3)], 3);
    expect(second.map((c) => c.reason)).toEqual(['r1', 'r2', 'r3']);
    // A caller changing its snapshot changes nothing held, and the rows themselves are frozen.
    first.length = 0;
    second.push(change(99));
    expect(cache.base('s').rows.map((c) => c.reason)).toEqual(['r1', 'r2', 'r3']);
    expect(Object.isFrozen(second[0])).toBe(true);
  });

  it('keeps the furthest read when reads that began together finish out of order', () => {
    const cache = new HistoryCache();
    cache.extend('s', cache.base('s'), [change(1)], 1);
    const base = cache.base('s');
    const later = cache.extend('s', base, [change(2), change(3)], 3);
    const earlier = cache.extend('s', base, [change(2)], 2);
    expect(later.map((c) => c.reason)).toEqual(['r1', 'r2', 'r3']);
    expect(earlier.map((c) => c.reason)).toEqual(['r1', 'r2']);
    expect(cache.base('s')).toMatchObject({ lastSeq: 3, length: 3 });
  });

  it('forgets the sessions used least recently once it holds more rows than its bound', () => {
    const cache = new HistoryCache(5);
    cache.extend('a', cache.base('a'), [change(1), change(2)], 2);
    cache.extend('b', cache.base('b'), [change(3), change(4)], 4);
    cache.base('a'); // reading the base does not count as a use; extending does
    cache.extend('a', cache.base('a'), [change(5)], 5);
    cache.extend('c', cache.base('c'), [change(6), change(7)], 7);
    expect(cache.base('b')).toMatchObject({ lastSeq: 0, length: 0 });
    expect(cache.base('a')).toMatchObject({ lastSeq: 5, length: 3 });
    expect(cache.base('c')).toMatchObject({ lastSeq: 7, length: 2 });
  });

  it('still holds a single session longer than the bound, and forgets one on request', () => {
    const cache = new HistoryCache(2);
    cache.extend('big', cache.base('big'), [change(1), change(2), change(3)], 3);
    expect(cache.base('big').length).toBe(3);
    cache.forget('big');
    expect(cache.base('big')).toMatchObject({ lastSeq: 0, length: 0 });
  });
});

/** Two stores on one database: each must see what the other wrote, though each keeps what it read. */
function describeTwoStores(
  name: string,
  open: () => Promise<{ stores: [AgentSessionStore, AgentSessionStore]; dispose(): Promise<void> }>,
) {
  describe(`${name}: two stores on one database`, () => {
    it('each sees every change the other made, on read and on its own next change', async () => {
      const { stores, dispose } = await open();
      const [a, b] = stores;
      try {
        const session = await a.createSession({});
        for (let i = 0; i < 5; i++)
          expect((await a.setSessionMode(session.id, MODE_KEYS[(i + 1) % 3]!, `a${i}`, null, null)).applied).toBe(true);
        expect((await a.getSession(session.id))!.history).toHaveLength(5); // a now holds five rows
        for (let i = 0; i < 4; i++)
          expect((await b.setSessionMode(session.id, MODE_KEYS[i % 3]!, `b${i}`, null, null)).applied).toBe(true);

        const seen = await a.getSession(session.id);
        expect(seen!.history.map((c) => c.reason)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'b0', 'b1', 'b2', 'b3']);
        expect(seen).toEqual(await b.getSession(session.id));

        await b.setSessionMode(session.id, 'code_review', 'b4', null, null);
        const result = await a.setSessionMode(session.id, 'ddr_authoring', 'a5', null, null);
        if (result.applied !== true) throw new Error(result.message);
        expect(result.session.history.map((c) => c.reason)).toEqual([
          'a0',
          'a1',
          'a2',
          'a3',
          'a4',
          'b0',
          'b1',
          'b2',
          'b3',
          'b4',
          'a5',
        ]);
        expect(result.change.fromMode).toBe('code_review');
        expect(result.session).toEqual(await b.getSession(session.id));
      } finally {
        await dispose();
      }
    });

    it('answers a session whose history it held with a snapshot a caller cannot change', async () => {
      const { stores, dispose } = await open();
      const [a] = stores;
      try {
        const session = await a.createSession({});
        await a.setSessionMode(session.id, 'ddr_authoring', 'first', null, null);
        const snapshot = await a.getSession(session.id);
        (snapshot!.history as ModeChange[]).length = 0;
        expect((await a.getSession(session.id))!.history.map((c) => c.reason)).toEqual(['first']);
      } finally {
        await dispose();
      }
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'aptix-history-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;

describeTwoStores('SQLite', async () => {
  const url = `sqlite:${join(root, `two-${++files}.db`)}`;
  const a = await openSessionStore(url, { modes: fixedModes() });
  const b = await openSessionStore(url, { modes: fixedModes() });
  return { stores: [a, b], dispose: async () => void (await Promise.all([a.close(), b.close()])) };
});

const pgUrl = process.env.APTIX_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const inCi = process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI.toLowerCase());

async function pgReachable(): Promise<boolean> {
  const client = new Client({ connectionString: pgUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

if (await pgReachable()) {
  describeTwoStores('PostgreSQL', async () => {
    const schema = `aptix_history_${process.pid}_${randomBytes(3).toString('hex')}`;
    const a = await openSessionStore(pgUrl, { modes: fixedModes(), postgres: { schema, poolSize: 2 } });
    const b = await openSessionStore(pgUrl, { modes: fixedModes(), postgres: { schema, poolSize: 2 } });
    return {
      stores: [a, b],
      async dispose() {
        await Promise.all([a.close(), b.close()]);
        const pool = new Pool({ connectionString: pgUrl, max: 1 });
        await pool.query(`DROP SCHEMA IF EXISTS ${escapeIdentifier(schema)} CASCADE`);
        await pool.end();
      },
    };
  });
} else if (inCi) {
  describe('PostgreSQL: two stores on one database', () => {
    it(`needs PostgreSQL at ${pgUrl}`, () => {
      throw new Error(`PostgreSQL at ${pgUrl} is unreachable, and CI is set, so these tests cannot be skipped.`);
    });
  });
} else {
  console.warn(
    `\n!!! PostgreSQL at ${pgUrl} is unreachable: the PostgreSQL two-store tests of history-cache.test.ts are SKIPPED. !!!\n`,
  );
}

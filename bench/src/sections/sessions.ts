/**
 * 4. Sessions: mode changes per second through the host's session store, on SQLite and PostgreSQL,
 * one at a time and many in flight, against a raw transaction doing the same update and insert on the
 * same schema with the same settings.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { HostCradle } from '@aptix/host';
import { composeBenchHost } from '../fixtures.js';
import { pg } from '../host-deps.js';
import { median } from '../harness.js';
import type { Row } from '../report.js';

const SECTION = '4. Sessions: mode changes';
const MODES = ['general', 'ddr_authoring', 'tool_diagnostics'] as const;
export const PG_URL = process.env.APTIX_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface SessionOptions {
  /** Changes per measured round. */
  readonly changes: number;
  readonly rounds: number;
}

const now = () => performance.now();

type AgentSessionStore = HostCradle['sessionManager'];

/** Sequential changes on one session through the store: changes per second. */
async function storeSequential(
  store: AgentSessionStore,
  sessionId: string,
  count: number,
  offset: number,
): Promise<number> {
  const started = now();
  for (let i = 0; i < count; i++) {
    const result = await store.setSessionMode(
      sessionId,
      MODES[(offset + i) % MODES.length]!,
      `bench ${offset + i}`,
      'acme',
      'bench',
    );
    if (!result.applied) throw new Error(result.message);
  }
  return (count * 1000) / (now() - started);
}

/** `inFlight` changes at a time, spread over `sessions` (one session: all on the same row). */
async function storeConcurrent(
  store: AgentSessionStore,
  sessionIds: readonly string[],
  count: number,
  inFlight: number,
): Promise<number> {
  let next = 0;
  const started = now();
  const worker = async (w: number) => {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      const result = await store.setSessionMode(
        sessionIds[(w + i) % sessionIds.length]!,
        MODES[i % MODES.length]!,
        `bench ${i}`,
        'acme',
        'bench',
      );
      if (!result.applied) throw new Error(result.message);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, w) => worker(w)));
  return (count * 1000) / (now() - started);
}

/** The raw better-sqlite3 transaction: the same UPDATE and INSERT, IMMEDIATE, as fast as the driver goes. */
function rawSqlite(db: Database.Database, sessionId: string) {
  const update = db.prepare('UPDATE agent_sessions SET mode = ?, updated_at = ? WHERE id = ?');
  const insert = db.prepare(
    'INSERT INTO agent_session_mode_changes (session_id, from_mode, to_mode, reason, branch, org_id, user_id, changed_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?)',
  );
  let mode: string = MODES[0];
  const change = db.transaction((to: string, reason: string) => {
    const at = new Date().toISOString();
    update.run(to, at, sessionId);
    insert.run(sessionId, mode, to, reason, 'acme', 'bench', at);
    mode = to;
  });
  return (count: number, offset: number): number => {
    const started = now();
    for (let i = 0; i < count; i++) change.immediate(MODES[(offset + i) % MODES.length]!, `raw ${offset + i}`);
    return (count * 1000) / (now() - started);
  };
}

function openRaw(filename: string, synchronous: 'NORMAL' | 'FULL'): Database.Database {
  const db = new Database(filename);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('foreign_keys = ON');
  return db;
}

async function sqliteRows(options: SessionOptions, log: (line: string) => void): Promise<Row[]> {
  const bench = await composeBenchHost();
  const store = bench.host.cradle.sessionManager;
  try {
    // The raw baseline opens connections of its own on the store's very file (same schema, indexes, WAL),
    // and changes a session of its own.
    const storeFile = join(bench.dir, 'aptix.db');
    const session = await store.createSession({});
    const rawSession = await store.createSession({});
    const raw = openRaw(storeFile, 'NORMAL');
    const rawFull = openRaw(storeFile, 'FULL');
    const rawChange = rawSqlite(raw, rawSession.id);

    log('  sessions: SQLite');
    const storeRates: number[] = [];
    const rawRates: number[] = [];
    let offset = 0;
    rawChange(200, 0);
    await storeSequential(store, session.id, 200, 0);
    for (let round = 0; round < options.rounds; round++) {
      rawRates.push(rawChange(options.changes, offset));
      storeRates.push(await storeSequential(store, session.id, options.changes, offset));
      offset += options.changes;
    }
    const history = (await store.getSession(session.id))!.history.length;
    const lastStore = storeRates.at(-1)!;
    const fullRate = rawSqlite(rawFull, rawSession.id)(Math.max(50, options.changes / 10), 0);

    const others = await Promise.all(Array.from({ length: 16 }, () => store.createSession({})));
    const oneSession = await storeConcurrent(store, [session.id], options.changes, 64);
    const spread = await storeConcurrent(
      store,
      others.map((s) => s.id),
      options.changes,
      64,
    );
    const rawMedian = median(rawRates);
    raw.close();
    rawFull.close();
    return [
      {
        section: SECTION,
        measure: 'SQLite: raw better-sqlite3 transaction (UPDATE + INSERT)',
        figure: rawMedian,
        unit: 'changes/s',
        note: 'WAL, synchronous=NORMAL, IMMEDIATE transaction, prepared statements: the driver alone.',
      },
      {
        section: SECTION,
        measure: 'SQLite: setSessionMode, one at a time',
        figure: median(storeRates),
        unit: 'changes/s',
        baseline: { name: 'raw', figure: rawMedian },
        goal: { kind: 'ratio-at-least', value: 0.5 },
        note: `Median of ${options.rounds} rounds of ${options.changes} changes on one session; each change returns the session with its whole history.`,
      },
      {
        section: SECTION,
        measure: `SQLite: … the last round, history already ${history - options.changes} changes long`,
        figure: lastStore,
        unit: 'changes/s',
        baseline: { name: 'raw', figure: rawMedian },
        goal: { kind: 'ratio-at-least', value: 0.5 },
        note: 'A change costs the same however long the history is (it used to re-read the whole history).',
      },
      {
        section: SECTION,
        measure: 'SQLite: 64 in flight on one session',
        figure: oneSession,
        unit: 'changes/s',
        baseline: { name: 'raw', figure: rawMedian },
        note: 'better-sqlite3 is synchronous: calls in flight run one after another; this is the cost of the promises.',
      },
      {
        section: SECTION,
        measure: 'SQLite: 64 in flight over 16 sessions',
        figure: spread,
        unit: 'changes/s',
        baseline: { name: 'raw', figure: rawMedian },
      },
      {
        section: SECTION,
        measure: 'SQLite: raw transaction with synchronous=FULL (not used)',
        figure: fullRate,
        unit: 'changes/s',
        baseline: { name: 'raw NORMAL', figure: rawMedian },
        note: 'An fsync per commit: what durability against power loss would cost. The store uses WAL + NORMAL (see the notes below the table).',
      },
    ];
  } finally {
    await bench.close();
  }
}

export async function reachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function postgresRows(options: SessionOptions, log: (line: string) => void): Promise<Row[]> {
  const why = await reachable(PG_URL);
  if (why !== undefined) {
    log(`  sessions: PostgreSQL at ${PG_URL.replace(/:[^:@/]*@/, ':***@')} is unreachable (${why}); skipped`);
    return [];
  }
  const schema = `aptix_bench_${process.pid}`;
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  const bench = await composeBenchHost({ db: url.href });
  const store = bench.host.cradle.sessionManager;
  const pool = new pg.Pool({ connectionString: PG_URL, max: 10 });
  const s = pg.escapeIdentifier(schema);
  try {
    log('  sessions: PostgreSQL');
    const session = await store.createSession({});
    const rawSession = await store.createSession({});
    const others = await Promise.all(Array.from({ length: 32 }, () => store.createSession({})));
    const rawOthers = await Promise.all(Array.from({ length: 32 }, () => store.createSession({})));
    const modes = new Map<string, string>();
    const rawChange = async (sessionId: string, to: string, reason: string) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`UPDATE ${s}.agent_sessions SET mode = $1, updated_at = clock_timestamp() WHERE id = $2`, [
          to,
          sessionId,
        ]);
        await client.query(
          `INSERT INTO ${s}.agent_session_mode_changes (session_id, from_mode, to_mode, reason, branch, org_id, user_id) VALUES ($1, $2, $3, $4, false, 'acme', 'bench')`,
          [sessionId, modes.get(sessionId) ?? 'general', to, reason],
        );
        await client.query('COMMIT');
        modes.set(sessionId, to);
      } finally {
        client.release();
      }
    };
    const rawRate = async (ids: readonly string[], count: number, inFlight: number) => {
      let next = 0;
      const started = now();
      await Promise.all(
        Array.from({ length: inFlight }, async (_, w) => {
          for (;;) {
            const i = next++;
            if (i >= count) return;
            await rawChange(ids[(w + i) % ids.length]!, MODES[i % MODES.length]!, `raw ${i}`);
          }
        }),
      );
      return (count * 1000) / (now() - started);
    };
    const count = Math.max(100, Math.round(options.changes / 4));
    await rawRate([rawSession.id], 50, 1);
    await storeSequential(store, session.id, 50, 0);
    const rawSingle: number[] = [];
    const storeSingle: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      rawSingle.push(await rawRate([rawSession.id], count, 1));
      storeSingle.push(await storeSequential(store, session.id, count, round * count));
    }
    const rawSpread = await rawRate(
      rawOthers.map((o) => o.id),
      count * 4,
      32,
    );
    const storeSpread = await storeConcurrent(
      store,
      others.map((o) => o.id),
      count * 4,
      32,
    );
    const storeOne = await storeConcurrent(store, [session.id], count * 2, 32);
    const rawMedian = median(rawSingle);
    return [
      {
        section: SECTION,
        measure: 'PostgreSQL: raw transaction (BEGIN, UPDATE, INSERT, COMMIT)',
        figure: rawMedian,
        unit: 'changes/s',
        note: 'node-postgres, one pooled connection per change, 4 round trips.',
      },
      {
        section: SECTION,
        measure: 'PostgreSQL: setSessionMode, one at a time',
        figure: median(storeSingle),
        unit: 'changes/s',
        baseline: { name: 'raw', figure: rawMedian },
        note:
          'One transaction: a statement that locks the session, inserts the history row and updates ' +
          'the mode, then a read of the rows others added since the last read. 4 round trips with ' +
          'BEGIN and COMMIT (it was 6, one of them reading the whole history).',
      },
      {
        section: SECTION,
        measure: 'PostgreSQL: raw, 32 in flight over 32 sessions',
        figure: rawSpread,
        unit: 'changes/s',
      },
      {
        section: SECTION,
        measure: 'PostgreSQL: setSessionMode, 32 in flight over 32 sessions',
        figure: storeSpread,
        unit: 'changes/s',
        baseline: { name: 'raw 32 in flight', figure: rawSpread },
      },
      {
        section: SECTION,
        measure: 'PostgreSQL: setSessionMode, 32 in flight on one session',
        figure: storeOne,
        unit: 'changes/s',
        baseline: { name: 'raw', figure: rawMedian },
        note: "The session's row lock puts them in line: each reads the mode the previous one committed.",
      },
    ];
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`).catch(() => undefined);
    await pool.end();
    await bench.close();
  }
}

export async function sessionsSection(options: SessionOptions, log: (line: string) => void): Promise<Row[]> {
  return [...(await sqliteRows(options, log)), ...(await postgresRows(options, log))];
}

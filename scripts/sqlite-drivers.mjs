#!/usr/bin/env node
// Session write and read rates of the SQLite drivers the session store could run on, on the Node.js that
// runs this script: better-sqlite3 12 (the store's driver on Node 20), better-sqlite3 13 (the npm alias
// better-sqlite3-13, the store's driver where Node has Node-API 10) and node:sqlite (Node 22 and later).
// It runs the store's own schema (packages/agent-sessions' SQLite migrations, from its dist), statements
// and pragmas. It measured the choice for Node 22 and 24 (issue 36, the comment in .ci/run).
//
//   <node> scripts/sqlite-drivers.mjs [--only=better-sqlite3-12,better-sqlite3-13,node:sqlite] [--rounds=5]
//                                     [path/to/better_sqlite3.node: 12 built for that node]
//
// Each driver runs the same work on files of its own, in alternating rounds; the figure is the median.
// A driver this Node cannot run is left out (13 needs Node-API 10, node:sqlite Node 22; 12 needs a build
// for this Node's ABI: npm ci builds it for the Node that installed, pass another build's path).
// On Node 24.19+ with better-sqlite3 12 this script may abort ("Assertion failed: (env) != nullptr" in
// Statement::~Statement): 12's known crash there when a statement is garbage-collected (#1515).
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const { SQLITE_MIGRATIONS } = await import('../packages/agent-sessions/dist/sqlite/migrations.js');
const args = process.argv.slice(2);
const nativeBinding = args.find((arg) => arg.endsWith('.node'));
const only = args
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');

const SESSIONS = 1_000;
const WRITES = 5_000;
const READS = 50_000;
const ROUNDS = Number(args.find((arg) => arg.startsWith('--rounds='))?.slice('--rounds='.length) ?? 5);

/** better-sqlite3 12 or 13 behind the face below: the API is the same. */
const betterSqlite = (BetterSqlite, options) => (file) => {
  const db = new BetterSqlite(file, { timeout: 10, ...options });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  return { db, immediate: (fn) => db.transaction(fn).immediate(), close: () => db.close() };
};

/** node:sqlite where this Node has it (22 and later), else undefined. */
const DatabaseSync = process.getBuiltinModule?.('node:sqlite')?.DatabaseSync;

/** The drivers behind one small face: exec, prepare(run/get/all), and an IMMEDIATE transaction. */
const available = {
  'better-sqlite3-12': betterSqlite(require('better-sqlite3'), nativeBinding ? { nativeBinding } : {}),
  ...(Number(process.versions.napi) >= 10
    ? { 'better-sqlite3-13': betterSqlite(require('better-sqlite3-13'), {}) }
    : {}),
  ...(DatabaseSync ? { 'node:sqlite': nodeSqlite } : {}),
};
const drivers = Object.fromEntries(Object.entries(available).filter(([name]) => !only || only.includes(name)));

function nodeSqlite(file) {
  const db = new DatabaseSync(file, { timeout: 10 });
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON');
  const immediate = (fn) => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  };
  return { db, immediate, close: () => db.close() };
}

function run(name, dir) {
  const file = join(dir, `${name.replace(/\W/g, '-')}.db`);
  const { db, immediate, close } = drivers[name](file);
  for (const migration of SQLITE_MIGRATIONS) db.exec(migration.sql);
  const at = new Date().toISOString();
  const insertSession = db.prepare(
    'INSERT INTO agent_sessions (id, mode, org_id, user_id, parent_id, owner_id, created_at, updated_at) VALUES (?, ?, NULL, NULL, NULL, ?, ?, ?)',
  );
  // The store reads a session's head as an array (better-sqlite3's raw()); node:sqlite's counterpart is setReturnArrays.
  const head = db.prepare('SELECT mode, org_id, user_id, owner_id FROM agent_sessions WHERE id = ?');
  if (typeof head.raw === 'function') head.raw(true);
  else head.setReturnArrays(true);
  const currentMode = db.prepare('SELECT mode FROM agent_sessions WHERE id = ?');
  const updateMode = db.prepare('UPDATE agent_sessions SET mode = ?, updated_at = ? WHERE id = ?');
  const insertChange = db.prepare(
    'INSERT INTO agent_session_mode_changes (session_id, from_mode, to_mode, reason, branch, org_id, user_id, changed_at) VALUES (?, ?, ?, ?, 0, NULL, NULL, ?)',
  );

  let start = performance.now();
  for (let i = 0; i < SESSIONS; i += 1) immediate(() => insertSession.run(`s${i}`, 'general', 'key', at, at));
  const creates = SESSIONS / ((performance.now() - start) / 1000);

  // A mode change as the store writes it: read the mode, update it, append the history row, in one IMMEDIATE transaction.
  start = performance.now();
  for (let i = 0; i < WRITES; i += 1) {
    const id = `s${i % SESSIONS}`;
    immediate(() => {
      const from = currentMode.get(id).mode;
      const to = from === 'general' ? 'billing' : 'general';
      updateMode.run(to, at, id);
      insertChange.run(id, from, to, 'bench', at);
    });
  }
  const writes = WRITES / ((performance.now() - start) / 1000);

  // What a tool call in a session reads: the session's head by primary key.
  start = performance.now();
  let seen = 0;
  for (let i = 0; i < READS; i += 1) seen += head.get(`s${i % SESSIONS}`)[0].length;
  const reads = READS / ((performance.now() - start) / 1000);
  if (seen === 0) throw new Error('no session was read');
  close();
  return { creates, writes, reads };
}

const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = Object.fromEntries(Object.keys(drivers).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (const name of Object.keys(drivers)) {
    const dir = mkdtempSync(join(tmpdir(), 'aptix-sqlite-drivers-'));
    try {
      results[name].push(run(name, dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

console.log(`Node.js ${process.version}, median of ${ROUNDS} rounds (operations per second)`);
console.log('| driver | session created | mode change (read, update, insert; IMMEDIATE) | session head read |');
console.log('| --- | ---: | ---: | ---: |');
for (const [name, rounds] of Object.entries(results)) {
  const cell = (key) => Math.round(median(rounds.map((r) => r[key]))).toLocaleString('en');
  console.log(`| ${name} | ${cell('creates')} | ${cell('writes')} | ${cell('reads')} |`);
}

#!/usr/bin/env node
// Session write and read rates of better-sqlite3 and node:sqlite on the Node.js that runs this script,
// on the session store's own schema (packages/agent-sessions' SQLite migrations, from its dist) and its
// own statements and pragmas. It measured the choice `.ci/run` made for Node 22 and 24 (issue 36):
// keep better-sqlite3 and build it per runtime, or move the store to node:sqlite where it exists.
//
//   <node> scripts/sqlite-drivers.mjs [path/to/better_sqlite3.node built for that node]
//
// Both drivers run the same work on files of their own, in alternating rounds; the figure is the median.
// On Node 24.19+ with better-sqlite3 12 this script may abort ("Assertion failed: (env) != nullptr" in
// Statement::~Statement): the driver's known crash there when a statement is garbage-collected.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const { SQLITE_MIGRATIONS } = await import('../packages/agent-sessions/dist/sqlite/migrations.js');
const BetterSqlite = require('better-sqlite3');
const { DatabaseSync } = await import('node:sqlite');
const nativeBinding = process.argv[2];

const SESSIONS = 1_000;
const WRITES = 5_000;
const READS = 50_000;
const ROUNDS = 5;

/** The two drivers behind one small face: exec, prepare(run/get/all), and an IMMEDIATE transaction. */
const drivers = {
  'better-sqlite3': (file) => {
    const db = new BetterSqlite(file, { timeout: 10, ...(nativeBinding ? { nativeBinding } : {}) });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    return { db, immediate: (fn) => db.transaction(fn).immediate(), close: () => db.close() };
  },
  'node:sqlite': (file) => {
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
  },
};

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

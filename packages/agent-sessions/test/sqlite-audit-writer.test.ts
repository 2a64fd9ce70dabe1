/**
 * The SQLite store's audit writer thread (audit-writer.ts): batches written by a worker thread on a
 * connection of its own, read back by the store; order kept across batches posted at once; a thread
 * that ends under writes rejects them and the next write starts another; a lock held elsewhere is a
 * rejection, not a hang; close() drains; the thread never keeps a process alive.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { NewAuditRecord } from '../src/audit.js';
import { SessionStoreError } from '../src/errors.js';
import { openSessionStore } from '../src/open.js';
import { Database } from '../src/sqlite/driver.js';
import { openSqliteSessionStore, type SqliteSessionStore } from '../src/sqlite/index.js';
import { startFixture, type Child } from './fixtures/child.js';
import { fixedModes } from './fixtures/modes.js';

const root = mkdtempSync(join(tmpdir(), 'aptix-audit-writer-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let files = 0;
const stores: SqliteSessionStore[] = [];
const children: Child[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.process.kill();
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function open(
  options: { busyTimeoutMs?: number; auditWriter?: 'worker' | 'inline'; filename?: string } = {},
): Promise<{ store: SqliteSessionStore; filename: string }> {
  const filename = options.filename ?? join(root, `db-${++files}`, 'aptix.db');
  const store = await openSqliteSessionStore({ ...options, filename, modes: fixedModes() });
  stores.push(store);
  return { store, filename };
}

function records(tool: string, count: number, from = 0): NewAuditRecord[] {
  return Array.from({ length: count }, (_, index) => ({
    kind: 'tool_call',
    principal: 'ops',
    sessionId: null,
    tool,
    argumentsHash: null,
    outcome: `N${from + index}`,
    durationMs: from + index,
    traceId: null,
  }));
}

/** Every record of the tool, oldest first, as another connection to the file reads them. */
function readBack(filename: string, tool: string): Array<{ seq: number; outcome: string }> {
  const db = new Database(filename, { readonly: true });
  try {
    return db
      .prepare<[string], { seq: number; outcome: string }>(
        'SELECT seq, outcome FROM agent_audit_records WHERE tool_name = ? ORDER BY seq',
      )
      .all(tool);
  } finally {
    db.close();
  }
}

describe('SQLite audit writer thread', () => {
  it('writes on a worker thread, and the store reads back every row, in the order the batches were posted', async () => {
    const { store, filename } = await open();
    // Three batches posted at once, of 250, 1 and 120 records: the thread takes them in order.
    await Promise.all([
      store.audit.append(records('ordered', 250, 0)),
      store.audit.append(records('ordered', 1, 250)),
      store.audit.append(records('ordered', 120, 251)),
    ]);
    const worker = store.audit.writer?.worker;
    expect(worker?.threadId).toBeGreaterThan(0);
    const rows = readBack(filename, 'ordered');
    expect(rows.map((row) => row.outcome)).toEqual(Array.from({ length: 371 }, (_, index) => `N${index}`));
    expect(rows.map((row) => row.seq)).toEqual([...rows.map((row) => row.seq)].sort((a, b) => a - b));
    // The store's own connection sees the thread's commits.
    const page = await store.audit.list({ tool: 'ordered', limit: 2 });
    expect(page.records.map((record) => record.outcome)).toEqual(['N370', 'N369']);
    expect((await store.audit.get(page.records[0]!.id))?.durationMs).toBe(370);
    // A prune runs on the thread too.
    expect(await store.audit.prune({ maxRecords: 100 })).toBe(271);
    expect(readBack(filename, 'ordered').map((row) => row.outcome)[0]).toBe('N271');
  });

  it('refuses a bad record on the calling side, with the same codes, and writes nothing of its batch', async () => {
    const { store, filename } = await open();
    await expect(
      store.audit.append([...records('refused', 2), { ...records('refused', 1)[0]!, tool: '' }]),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(
      store.audit.append([{ ...records('refused', 1)[0]!, principal: 'p'.repeat(257) }]),
    ).rejects.toMatchObject({
      code: 'VALUE_TOO_LONG',
    });
    expect(store.audit.writer?.worker).toBeUndefined();
    expect(readBack(filename, 'refused')).toEqual([]);
  });

  it('keeps writing inline for a database in memory, and on request', async () => {
    const memory = await open({ filename: ':memory:' });
    expect(memory.store.audit.writer).toBeUndefined();
    await memory.store.audit.append(records('inline', 3));
    expect((await memory.store.audit.list({ tool: 'inline' })).records).toHaveLength(3);
    const inline = await open({ auditWriter: 'inline' });
    expect(inline.store.audit.writer).toBeUndefined();
    await inline.store.audit.append(records('inline', 3));
    expect(readBack(inline.filename, 'inline')).toHaveLength(3);
  });

  it("takes the choice through openSessionStore's sqlite options (the host's sessions.sqliteAuditWriter)", async () => {
    for (const auditWriter of ['inline', 'worker', undefined] as const) {
      const filename = join(root, `db-${++files}`, 'aptix.db');
      const store = (await openSessionStore(`sqlite:${filename}`, {
        modes: fixedModes(),
        sqlite: { auditWriter },
      })) as SqliteSessionStore;
      stores.push(store);
      expect(store.audit.writer === undefined).toBe(auditWriter === 'inline');
    }
  });

  it('rejects the writes a thread held when it crashes, without harm to this process, and starts a new thread for the next write', async () => {
    const { store, filename } = await open();
    await store.audit.append(records('crash', 1, 0));
    const first = store.audit.writer!.worker!;
    const exited = new Promise<number>((resolve) => first.once('exit', resolve));
    // A message the thread cannot read throws in its handler: an uncaught exception ends the thread, with
    // the write posted after it still waiting in its queue.
    first.postMessage(null);
    const held = store.audit.append(records('crash', 5, 1));
    const error: unknown = await held.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(SessionStoreError);
    expect(error).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      message: expect.stringMatching(/audit writer thread .* ended \(.*null.*\) while 1 writes waited/),
    });
    expect(await exited).toBe(1);
    // The caller keeps what was rejected and sends it again (the host's AuditTrail does): a new thread writes it.
    await store.audit.append(records('crash', 5, 1));
    expect(store.audit.writer!.worker!.threadId).not.toBe(first.threadId);
    expect(readBack(filename, 'crash').map((row) => row.outcome)).toEqual(['N0', 'N1', 'N2', 'N3', 'N4', 'N5']);
  });

  it('starts a new thread for the next write when its thread was ended while idle', async () => {
    const { store, filename } = await open();
    await store.audit.append(records('ended', 1, 0));
    const worker = store.audit.writer!.worker!;
    // Only an idle thread is ended so: better-sqlite3 aborts the whole process when a thread is terminated
    // while SQLite raises an error in it, which is why close() lets the thread end by itself.
    await worker.terminate();
    await store.audit.append(records('ended', 1, 1));
    expect(store.audit.writer!.worker!.threadId).not.toBe(worker.threadId);
    expect(readBack(filename, 'ended').map((row) => row.outcome)).toEqual(['N0', 'N1']);
  });

  it('rejects a write while another process holds the lock past busyTimeoutMs, and writes once it is released', async () => {
    const { store, filename } = await open({ busyTimeoutMs: 300 });
    await store.audit.append(records('locked', 1, 0));
    const locker = startFixture('sqlite-locker.ts', [filename]);
    children.push(locker);
    await locker.line('locked');
    await expect(store.audit.append(records('locked', 2, 1))).rejects.toMatchObject({
      code: 'DATABASE_LOCKED',
      message: expect.stringContaining('busyTimeoutMs (300 ms)'),
    });
    // The store's reads still answer while the lock is held (WAL: readers never wait for a writer).
    expect((await store.audit.list({ tool: 'locked' })).records).toHaveLength(1);
    locker.process.stdin.write('release\n');
    await locker.line('released');
    await store.audit.append(records('locked', 2, 1));
    expect(readBack(filename, 'locked').map((row) => row.outcome)).toEqual(['N0', 'N1', 'N2']);
  });

  it('drains on close: every write posted before close() is committed, then the thread ends', async () => {
    const { store, filename } = await open();
    const writes = [0, 1, 2, 3, 4].map((batch) => store.audit.append(records('drained', 100, batch * 100)));
    const worker = store.audit.writer!.worker!;
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    await store.close();
    await Promise.all(writes);
    await exited;
    expect(store.audit.writer!.worker).toBeUndefined();
    expect(readBack(filename, 'drained')).toHaveLength(500);
    await expect(store.audit.append(records('drained', 1))).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });

  it('never keeps a process alive: it exits by itself once its writes are committed, closed or not', async () => {
    for (const ending of ['close', 'open']) {
      const filename = join(root, `exit-${ending}`, 'aptix.db');
      const child = startFixture('audit-writer-exit.ts', [filename, ending]);
      children.push(child);
      await child.line('written thread');
      expect(await child.exited).toMatchObject({ code: 0 });
      expect(readBack(filename, 'exit_probe')).toHaveLength(150);
    }
  });
});

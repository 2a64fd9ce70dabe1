/**
 * SQLite with a second process: a write lock held elsewhere must not freeze this process's event loop,
 * must end in a clear DATABASE_LOCKED past the bound, and an aborted call must save nothing; a file this
 * process cannot write is refused when the store opens.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openSqliteSessionStore, type SqliteSessionStore } from '../src/sqlite/index.js';
import { startFixture, type Child } from './fixtures/child.js';
import { fixedModes } from './fixtures/modes.js';
import { applied, expectStoreError } from './session-store.suite.js';

const root = mkdtempSync(join(tmpdir(), 'aptix-sqlite-locking-'));
chmodSync(root, 0o755); // the unprivileged child below must reach its files
afterAll(() => rmSync(root, { recursive: true, force: true }));

let files = 0;
const stores: SqliteSessionStore[] = [];
const lockers: Child[] = [];
afterEach(async () => {
  for (const locker of lockers.splice(0)) locker.process.kill();
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function store(busyTimeoutMs: number): Promise<{ store: SqliteSessionStore; filename: string }> {
  const filename = join(root, `db-${++files}`, 'aptix.db');
  const opened = await openSqliteSessionStore({ filename, modes: fixedModes(), busyTimeoutMs });
  stores.push(opened);
  return { store: opened, filename };
}

/** Another process takes the database's write lock (BEGIN EXCLUSIVE) and holds it until released. */
async function lockElsewhere(filename: string): Promise<{ release(): Promise<void> }> {
  const locker = startFixture('sqlite-locker.ts', [filename]);
  lockers.push(locker);
  await locker.line('locked');
  return {
    async release() {
      locker.process.stdin.write('release\n');
      await locker.line('released');
    },
  };
}

/** Settles with the promise's outcome; `settled` tells whether it already has. */
function track<T>(promise: Promise<T>): { settled: () => boolean; promise: Promise<T> } {
  let done = false;
  const tracked = promise.finally(() => (done = true));
  tracked.catch(() => undefined);
  return { settled: () => done, promise: tracked };
}

describe('SQLite locked by another process', () => {
  it('keeps the event loop running while a write waits for the lock, answers pings, then writes once the lock is released', async () => {
    const { store: sessions, filename } = await store(120_000);
    const session = await sessions.createSession({});
    const lock = await lockElsewhere(filename);

    const change = track(sessions.setSessionMode(session.id, 'code_review', 'after the lock', null, null));
    const created = track(sessions.createSession({ org: 'acme' }));
    // Timers fire and reads answer while both writes wait: with a blocking busy timeout, neither could
    // happen until the writes had given up.
    await sleep(200);
    await expect(sessions.ping()).resolves.toBeUndefined();
    expect(await sessions.getSession(session.id)).toEqual(session);
    expect(change.settled()).toBe(false);
    expect(created.settled()).toBe(false);

    await lock.release();
    expect(applied(await change.promise).session.mode).toBe('code_review');
    expect((await created.promise).org).toBe('acme');
    expect((await sessions.getSession(session.id))?.mode).toBe('code_review');
  });

  it('fails with DATABASE_LOCKED once the lock is held past busyTimeoutMs, having written nothing', async () => {
    const { store: sessions, filename } = await store(300);
    const session = await sessions.createSession({});
    const lock = await lockElsewhere(filename);
    await expectStoreError(
      sessions.setSessionMode(session.id, 'code_review', 'blocked', null, null),
      'DATABASE_LOCKED',
      'is locked',
      'busyTimeoutMs (300 ms)',
      'Nothing was written',
    );
    await expectStoreError(sessions.createSession({}), 'DATABASE_LOCKED');
    await lock.release();
    expect(await sessions.getSession(session.id)).toEqual(session);
  });

  it('answers CANCELLED to a mode change aborted while it waits, and never applies it after the lock is released', async () => {
    const { store: sessions, filename } = await store(120_000);
    const session = await sessions.createSession({});
    const lock = await lockElsewhere(filename);
    const controller = new AbortController();
    const change = sessions.setSessionMode(session.id, 'code_review', 'cancelled while waiting', null, null, {
      signal: controller.signal,
    });
    await sleep(100);
    controller.abort();
    expect(await change).toMatchObject({ applied: false, code: 'CANCELLED' });
    await lock.release();
    await sleep(100);
    expect(await sessions.getSession(session.id)).toEqual(session);
  });
});

describe('SQLite database this process cannot write', () => {
  // Root may write any file, so the check runs as an unprivileged user when the tests run as root.
  const asUser = process.getuid?.() === 0 ? 65534 : undefined;

  async function openElsewhere(filename: string): Promise<{ opened?: boolean; code?: string; message?: string }> {
    const child = startFixture('open-store.ts', [`sqlite:${filename}`], { asUser });
    const { code, stderr } = await child.exited;
    if (code !== 0 || child.lines.length === 0) throw new Error(`open-store exited with ${code}: ${stderr}`);
    return JSON.parse(child.lines.at(-1)!) as { opened?: boolean; code?: string; message?: string };
  }

  function ownedByTheChild(path: string): void {
    if (asUser !== undefined) chownSync(path, asUser, asUser);
  }

  it('refuses a read-only file at open, saying what to fix', async () => {
    const folder = join(root, 'read-only-file');
    mkdirSync(folder);
    ownedByTheChild(folder);
    const filename = join(folder, 'aptix.db');
    expect(await openElsewhere(filename)).toEqual({ opened: true }); // a database the child made and could write
    chmodSync(filename, 0o444);
    const result = await openElsewhere(filename);
    expect(result.code).toBe('NOT_WRITABLE');
    expect(result.message).toContain(filename);
    expect(result.message).toContain('cannot be written');
    expect(result.message).toContain('APTIX_DB');
  });

  it('refuses a file in a read-only folder at open, new or existing', async () => {
    const folder = join(root, 'read-only-folder');
    mkdirSync(folder);
    ownedByTheChild(folder);
    const existing = join(folder, 'aptix.db');
    expect(await openElsewhere(existing)).toEqual({ opened: true });
    chmodSync(folder, 0o555);
    expect(await openElsewhere(existing)).toMatchObject({
      code: 'NOT_WRITABLE',
      message: expect.stringContaining('its folder'),
    });
    expect(await openElsewhere(join(folder, 'new.db'))).toMatchObject({
      code: 'NOT_WRITABLE',
      message: expect.stringContaining('new.db'),
    });
  });
});

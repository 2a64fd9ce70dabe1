/**
 * The lifecycle half of the shared suite, run by each store's test file: restarts, migrations, and
 * concurrent changes from one process and from two.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openSessionStore } from '../src/open.js';
import type { AgentSession, AgentSessionStore } from '../src/types.js';
import type { WorkerConfig, WorkerReport } from './fixtures/mode-change-worker.js';
import { fixedModes, MODE_KEYS } from './fixtures/modes.js';
import {
  applied,
  expectStoreError,
  expectUnbrokenHistory,
  storeOpener,
  type SessionStoreHarness,
  type Version1Fixture,
} from './session-store.suite.js';

const WORKER = fileURLToPath(new URL('./fixtures/mode-change-worker.ts', import.meta.url));
const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Worker {
  readonly ready: Promise<void>;
  readonly done: Promise<WorkerReport>;
  go(): void;
}

function startWorker(config: WorkerConfig): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], {
    cwd: PACKAGE_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let signalReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (signalReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.startsWith('ready\n')) signalReady();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<WorkerReport>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stdout.trim().split('\n');
      if (code !== 0 || lines[0] !== 'ready' || lines.length < 2) {
        reject(new Error(`worker ${config.tag} exited with ${code}.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        return;
      }
      resolve(JSON.parse(lines.at(-1)!) as WorkerReport);
    });
  });
  // A worker that dies before it is ready must fail the test rather than leave it waiting.
  const readyOrFailed = Promise.race([ready, done.then(() => undefined)]);
  return { ready: readyOrFailed, done, go: () => child.stdin.end('go\n') };
}

/** Every schema version this package knows, in order. */
const SCHEMA_VERSIONS = [1, 2, 3, 4, 5, 6, 7, 8, 9];

export function describeSessionStoreLifecycle(name: string, harness: SessionStoreHarness): void {
  describe(`${name}: lifecycle`, () => {
    const { open, freshStore } = storeOpener(harness);

    /** Writes a database as a release at `version` left it, holding the fixture, and opens a store on it, which migrates it. */
    async function upgradedFrom(version: 1 | 6, fixture: Version1Fixture): Promise<AgentSessionStore> {
      const database = await harness.createDatabase();
      await (version === 1 ? database.writeVersion1(fixture) : database.writeVersion6(fixture));
      expect(await database.appliedMigrations()).toEqual(SCHEMA_VERSIONS.slice(0, version));
      const store = await open(database);
      expect(await database.appliedMigrations()).toEqual(SCHEMA_VERSIONS);
      return store;
    }

    describe('restart', () => {
      it('keeps sessions, mode, history, bindings and conversation across a reopen', async () => {
        const { store, database } = await freshStore();
        const session = await store.createSession({ org: 'acme', user: 'kevin' });
        const child = await store.createSession({ parentId: session.id });
        applied(
          await store.setSessionMode(session.id, 'ddr_authoring', 'write a DDR', 'acme', 'kevin', { branch: false }),
        );
        applied(await store.setSessionMode(session.id, 'code_review', 'review it', 'acme', 'kevin', { branch: true }));
        await store.bindMcpSession('mcp-7', session.id);
        await store.bindMcpSession('mcp-8', session.id);
        expect(await store.closeMcpSession('mcp-8')).toBe(true);
        await store.appendConversationItems(session.id, [{ role: 'user', content: 'hello' }]);
        const before = await store.getSession(session.id);
        await store.close();

        const reopened = await open(database);
        expect(await reopened.getSession(session.id)).toEqual(before);
        expect((await reopened.getSession(child.id))?.parentId).toBe(session.id);
        expect(await reopened.getMcpBinding('mcp-7')).toBe(session.id);
        expect(await reopened.getMcpSession('mcp-7')).toMatchObject({ agentSessionId: session.id, closed: false });
        expect(await reopened.getMcpSession('mcp-8')).toMatchObject({ agentSessionId: session.id, closed: true });
        expect(await reopened.listConversationItems(session.id)).toEqual([{ role: 'user', content: 'hello' }]);
        const next = applied(
          await reopened.setSessionMode(session.id, 'general_chat', 'back to chat', 'acme', 'kevin'),
        );
        expectUnbrokenHistory(next.session, 'general_chat');
        expect(next.session.history).toHaveLength(3);
      });

      it('refuses every call once closed, and closing twice is harmless', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        await store.close();
        await store.close();
        await expectStoreError(store.getSession(session.id), 'STORE_CLOSED', 'closed');
        await expectStoreError(store.setSessionMode(session.id, 'code_review', 'r', null, null), 'STORE_CLOSED');
        await expectStoreError(store.createSession({}), 'STORE_CLOSED');
      });
    });

    describe('migrations', () => {
      it('migrates a new database to the latest version, once', async () => {
        const { store, database } = await freshStore();
        const latest = await database.appliedMigrations();
        expect(latest).toEqual(SCHEMA_VERSIONS);
        await store.close();
        await open(database);
        expect(await database.appliedMigrations()).toEqual(latest);
      });

      it('upgrades a database written at version 1, keeping its sessions', async () => {
        const fixture: Version1Fixture = {
          session: {
            id: 'v1-session',
            mode: 'general_chat',
            org: 'acme',
            user: 'kevin',
            createdAt: '2025-12-06T18:55:00.000Z',
          },
          change: {
            fromMode: 'general_chat',
            toMode: 'ddr_authoring',
            reason: 'written by version 1',
            branch: true,
            org: 'acme',
            user: 'kevin',
            at: '2025-12-06T19:00:00.000Z',
          },
        };
        const store = await upgradedFrom(1, fixture);
        const { change } = fixture;
        expect(await store.getSession('v1-session')).toEqual({
          id: 'v1-session',
          mode: 'ddr_authoring',
          org: 'acme',
          user: 'kevin',
          parentId: null,
          owner: null,
          createdAt: fixture.session.createdAt,
          history: [change],
        });
        // What version 2 added works on the old session.
        await store.bindMcpSession('mcp-1', 'v1-session');
        await store.appendConversationItems('v1-session', [{ role: 'user', content: 'after the upgrade' }]);
        expect(await store.getMcpBinding('mcp-1')).toBe('v1-session');
        expect(await store.listConversationItems('v1-session')).toEqual([
          { role: 'user', content: 'after the upgrade' },
        ]);
        const next = applied(
          await store.setSessionMode('v1-session', 'code_review', 'after the upgrade', 'acme', 'kevin'),
        );
        expectUnbrokenHistory(next.session, 'general_chat');
        expect(next.session.history.map((c) => c.reason)).toEqual(['written by version 1', 'after the upgrade']);
      });

      it('upgrades a database at version 6 to session owners: its sessions are intact and owned by no one', async () => {
        const fixture: Version1Fixture = {
          session: {
            id: 'v6-session',
            mode: 'general_chat',
            org: 'acme',
            user: 'kevin',
            createdAt: '2026-11-20T08:00:00.000Z',
          },
          change: {
            fromMode: 'general_chat',
            toMode: 'code_review',
            reason: 'written by version 6',
            branch: false,
            org: 'acme',
            user: 'kevin',
            at: '2026-11-20T08:05:00.000Z',
          },
        };
        const store = await upgradedFrom(6, fixture);
        const expected: AgentSession = {
          id: 'v6-session',
          mode: 'code_review',
          org: 'acme',
          user: 'kevin',
          parentId: null,
          owner: null,
          createdAt: fixture.session.createdAt,
          history: [fixture.change],
        };
        expect(await store.getSession('v6-session')).toEqual(expected);
        expect(await store.getSessionHead('v6-session')).toEqual({
          id: 'v6-session',
          mode: 'code_review',
          org: 'acme',
          user: 'kevin',
          owner: null,
        });
        expect((await store.getSessionPage('v6-session'))?.session).toEqual(expected);
        // A branch of an old session is owned by no one either; new sessions record their owner.
        expect((await store.createSession({ parentId: 'v6-session', owner: 'agent-key' })).owner).toBeNull();
        const owned = await store.createSession({ owner: 'agent-key' });
        expect((await store.getSessionHead(owned.id))?.owner).toBe('agent-key');
        const next = applied(
          await store.setSessionMode('v6-session', 'ddr_authoring', 'after the upgrade', 'acme', 'kevin'),
        );
        expect(next.session).toEqual({ ...expected, mode: 'ddr_authoring', history: [fixture.change, next.change] });
      });

      it('refuses a database that a newer version has migrated', async () => {
        const { store, database } = await freshStore();
        await store.close();
        await database.recordMigration(99, 'from the future');
        await expectStoreError(
          openSessionStore(database.url, { modes: fixedModes(), ...database.options }),
          'SCHEMA_TOO_NEW',
          'version 99',
          'up to 9',
          'upgrade @aptix/agent-sessions',
        );
      });

      it('migrates a fresh database once when several stores open it at the same time', async () => {
        const database = await harness.createDatabase();
        const stores = await Promise.all(Array.from({ length: 4 }, () => open(database)));
        expect(await database.appliedMigrations()).toEqual(SCHEMA_VERSIONS);
        const session = await stores[0]!.createSession({});
        expect(await stores[3]!.getSession(session.id)).toEqual(session);
      });
    });

    describe('concurrency', () => {
      it('loses no history row when hundreds of changes to one session run at once', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({ org: 'acme', user: 'kevin' });
        const calls = 300;
        const snapshots: Promise<AgentSession | undefined>[] = [];
        const changes = Array.from({ length: calls }, (_, i) => {
          if (i % 10 === 0) snapshots.push(store.getSession(session.id));
          return store.setSessionMode(
            session.id,
            MODE_KEYS[(i * 7) % MODE_KEYS.length]!,
            `call ${i}`,
            'acme',
            `user-${i % 5}`,
            { branch: i % 3 === 0 },
          );
        });
        const results = (await Promise.all(changes)).map(applied);

        const final = await store.getSession(session.id);
        expectUnbrokenHistory(final, 'general_chat');
        expect(final.history).toHaveLength(calls);
        expect(new Set(final.history.map((change) => change.reason))).toEqual(
          new Set(Array.from({ length: calls }, (_, i) => `call ${i}`)),
        );
        // Each change committed after a different number of others, and saw exactly the history before it.
        const byPosition = [...results].sort((a, b) => a.session.history.length - b.session.history.length);
        byPosition.forEach((result, index) => {
          expect(result.session.history).toHaveLength(index + 1);
          expect(result.change).toEqual(final.history[index]);
          expect(result.session.mode).toBe(result.change.toMode);
        });
        // A read while changes commit is one snapshot: its mode is its own last row's toMode.
        for (const snapshot of await Promise.all(snapshots)) expectUnbrokenHistory(snapshot, 'general_chat');
      });

      it('loses no history row when two processes change one session at once', { timeout: 120_000 }, async () => {
        const { store, database } = await freshStore();
        const session = await store.createSession({ org: 'acme', user: 'kevin' });
        const perWorker = 200;
        const workers = ['a', 'b'].map((tag) =>
          startWorker({
            url: database.url,
            options: database.options,
            sessionId: session.id,
            count: perWorker,
            tag,
            modes: MODE_KEYS,
          }),
        );
        await Promise.all(workers.map((worker) => worker.ready));
        for (const worker of workers) worker.go();
        const reports = await Promise.all(workers.map((worker) => worker.done));
        expect(reports).toEqual([
          { applied: perWorker, refused: [] },
          { applied: perWorker, refused: [] },
        ]);

        const final = await store.getSession(session.id);
        expectUnbrokenHistory(final, 'general_chat');
        expect(final.history).toHaveLength(2 * perWorker);
        const expected = ['a', 'b'].flatMap((tag) => Array.from({ length: perWorker }, (_, i) => `${tag}-${i}`));
        expect(new Set(final.history.map((change) => change.reason))).toEqual(new Set(expected));
        expect(final.history.every((change) => change.user === change.reason.split('-')[0])).toBe(true);
      });
    });
  });
}

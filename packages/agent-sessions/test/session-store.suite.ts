/**
 * The one behavioural suite every session store passes. A test file supplies a harness that creates
 * fresh databases; every store is opened through `openSessionStore`, as a host would.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SessionStoreError } from '../src/errors.js';
import { openSessionStore, type OpenSessionStoreOptions } from '../src/open.js';
import type { AgentSession, AgentSessionStore, ModeDirectory, SetSessionModeResult } from '../src/types.js';
import type { WorkerConfig, WorkerReport } from './fixtures/mode-change-worker.js';
import { fixedModes, MODE_KEYS } from './fixtures/modes.js';

/** A session and one mode change, as a release with only migration 1 would have stored them. */
export interface Version1Fixture {
  readonly session: { readonly id: string; readonly mode: string; readonly org: string; readonly user: string; readonly createdAt: string };
  readonly change: { readonly fromMode: string; readonly toMode: string; readonly reason: string; readonly branch: boolean; readonly org: string; readonly user: string; readonly at: string };
}

/** One fresh, empty database (a SQLite file, a PostgreSQL schema). */
export interface TestDatabase {
  readonly url: string;
  /** What `openSessionStore` needs besides the URL and the modes (the PostgreSQL schema). */
  readonly options: Pick<OpenSessionStoreOptions, 'postgres'>;
  /** Writes with raw SQL the tables and bookkeeping of schema version 1, then the fixture's rows. */
  writeVersion1(fixture: Version1Fixture): Promise<void>;
  /** The versions the bookkeeping table records, ascending. */
  appliedMigrations(): Promise<number[]>;
  /** Records a version as applied, as a newer release of the package would. */
  recordMigration(version: number, name: string): Promise<void>;
}

export interface SessionStoreHarness {
  createDatabase(): Promise<TestDatabase>;
  /** Removes every database it created. */
  dispose(): Promise<void>;
}

const WORKER = fileURLToPath(new URL('./fixtures/mode-change-worker.ts', import.meta.url));
const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Asserts the invariants of a session's history: an unbroken chain from `initialMode` to the session's mode. */
export function expectUnbrokenHistory(session: AgentSession | undefined, initialMode: string): asserts session is AgentSession {
  expect(session).toBeDefined();
  let previous = initialMode;
  session!.history.forEach((change, index) => {
    if (change.fromMode !== previous) {
      throw new Error(`history[${index}].fromMode is "${change.fromMode}" but history[${index - 1}].toMode is "${previous}": a change was lost or applied out of order.`);
    }
    previous = change.toMode;
  });
  expect(session!.mode, "the session's mode is the last history row's toMode").toBe(previous);
}

export function applied(result: SetSessionModeResult): Extract<SetSessionModeResult, { applied: true }> {
  if (result.applied !== true) throw new Error(`expected the mode change to be applied; it was refused: ${result.code}: ${result.message}`);
  return result;
}

export async function expectStoreError(promise: Promise<unknown>, code: string, ...fragments: string[]): Promise<SessionStoreError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected a SessionStoreError ${code}, but the call succeeded`);
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SessionStoreError);
  expect((error as SessionStoreError).code).toBe(code);
  for (const fragment of fragments) expect((error as SessionStoreError).message).toContain(fragment);
  return error as SessionStoreError;
}

interface Worker {
  readonly ready: Promise<void>;
  readonly done: Promise<WorkerReport>;
  go(): void;
}

function startWorker(config: WorkerConfig): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], { cwd: PACKAGE_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
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

export function describeSessionStore(name: string, harness: SessionStoreHarness): void {
  describe(name, () => {
    const opened: AgentSessionStore[] = [];

    async function open(database: TestDatabase, modes: ModeDirectory = fixedModes()): Promise<AgentSessionStore> {
      const store = await openSessionStore(database.url, { modes, ...database.options });
      opened.push(store);
      return store;
    }

    async function freshStore(modes?: ModeDirectory): Promise<{ store: AgentSessionStore; database: TestDatabase }> {
      const database = await harness.createDatabase();
      return { store: await open(database, modes), database };
    }

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });
    afterAll(() => harness.dispose());

    describe('createSession', () => {
      it("starts a session in the catalog's default mode when none is given", async () => {
        const { store } = await freshStore(fixedModes(MODE_KEYS, 'ddr_authoring'));
        const session = await store.createSession({ org: 'acme', user: 'kevin' });
        expect(session).toMatchObject({ mode: 'ddr_authoring', org: 'acme', user: 'kevin', parentId: null, history: [] });
        expect(session.id).not.toBe('');
        expect(new Date(session.createdAt).toISOString()).toBe(session.createdAt);
        expect(await store.getSession(session.id)).toEqual(session);
      });

      it('starts a session in the mode it is given, with org and user optional', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({ mode: 'code_review' });
        expect(session).toMatchObject({ mode: 'code_review', org: null, user: null });
        expect(await store.getSession(session.id)).toEqual(session);
      });

      it('gives every session its own id', async () => {
        const { store } = await freshStore();
        const sessions = await Promise.all(Array.from({ length: 20 }, () => store.createSession({})));
        expect(new Set(sessions.map((session) => session.id)).size).toBe(20);
      });

      it('refuses an unknown mode with an error listing the valid keys', async () => {
        const { store } = await freshStore();
        await expectStoreError(store.createSession({ mode: 'poetry' }), 'UNKNOWN_MODE', '"poetry"', ...MODE_KEYS);
      });

      it("refuses a catalog whose default mode is not one of its keys", async () => {
        const { store } = await freshStore(fixedModes(MODE_KEYS, 'retired_mode'));
        await expectStoreError(store.createSession({}), 'CATALOG_INCONSISTENT', '"retired_mode"');
      });

      it('records the session a branched session came from', async () => {
        const { store } = await freshStore();
        const parent = await store.createSession({ org: 'acme', user: 'kevin' });
        const child = await store.createSession({ org: 'acme', user: 'kevin', mode: 'ddr_authoring', parentId: parent.id });
        expect(child.parentId).toBe(parent.id);
        expect((await store.getSession(child.id))?.parentId).toBe(parent.id);
      });

      it('refuses a parent session that does not exist', async () => {
        const { store } = await freshStore();
        await expectStoreError(store.createSession({ parentId: 'no-such-session' }), 'SESSION_NOT_FOUND', '"no-such-session"');
      });
    });

    describe('getSession', () => {
      it('returns undefined for an id it does not know', async () => {
        const { store } = await freshStore();
        await store.createSession({});
        expect(await store.getSession('no-such-session')).toBeUndefined();
        expect(await store.getSession('')).toBeUndefined();
      });
    });

    describe('setSessionMode', () => {
      it('changes the mode and appends one history row with every field', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({ org: 'acme', user: 'kevin' });
        const result = applied(await store.setSessionMode(session.id, 'ddr_authoring', 'The user asked for a DDR.', 'acme', 'kevin', { branch: false }));

        expect(result.change).toEqual({ fromMode: 'general_chat', toMode: 'ddr_authoring', reason: 'The user asked for a DDR.', branch: false, org: 'acme', user: 'kevin', at: expect.any(String) });
        expect(new Date(result.change.at).toISOString()).toBe(result.change.at);
        expect(result.change.at >= session.createdAt).toBe(true);
        expect(result.session).toEqual({ ...session, mode: 'ddr_authoring', history: [result.change] });
        expect(await store.getSession(session.id)).toEqual(result.session);
      });

      it('keeps changes in the order they were made, each starting from the previous mode', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        const targets = ['ddr_authoring', 'code_review', 'code_review', 'general_chat', 'ddr_authoring'];
        for (const [i, mode] of targets.entries()) applied(await store.setSessionMode(session.id, mode, `step ${i}`, null, undefined));
        const stored = await store.getSession(session.id);
        expectUnbrokenHistory(stored, 'general_chat');
        expect(stored.history.map((change) => [change.toMode, change.reason])).toEqual(targets.map((mode, i) => [mode, `step ${i}`]));
        expect(stored.history.every((change) => change.org === null && change.user === null)).toBe(true);
      });

      it('records the branch flag, false when no options are given', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        applied(await store.setSessionMode(session.id, 'ddr_authoring', 'switch and start anew', 'acme', 'kevin', { branch: true }));
        applied(await store.setSessionMode(session.id, 'code_review', 'switch here', 'acme', 'kevin'));
        const stored = await store.getSession(session.id);
        expect(stored?.history.map((change) => change.branch)).toEqual([true, false]);
      });

      it('refuses an unknown mode as a result listing the valid keys, and persists nothing', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        const result = await store.setSessionMode(session.id, 'poetry', 'the user likes rhymes', 'acme', 'kevin', { branch: false });
        expect(result).toEqual({ applied: false, code: 'UNKNOWN_MODE', message: expect.stringContaining('"poetry"') });
        for (const key of MODE_KEYS) expect(result.applied === false && result.message).toContain(key);
        expect(await store.getSession(session.id)).toEqual(session);
      });

      it('refuses a session that does not exist, and persists nothing', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        const result = await store.setSessionMode('no-such-session', 'ddr_authoring', 'because', 'acme', 'kevin');
        expect(result).toEqual({ applied: false, code: 'SESSION_NOT_FOUND', message: expect.stringContaining('"no-such-session"') });
        expect(await store.setSessionMode('', 'ddr_authoring', 'because', 'acme', 'kevin')).toMatchObject({ applied: false, code: 'SESSION_NOT_FOUND' });
        expect(await store.getSession(session.id)).toEqual(session);
        expect(await store.getSession('no-such-session')).toBeUndefined();
      });

      it('changes only the session it is given', async () => {
        const { store } = await freshStore();
        const [a, b] = await Promise.all([store.createSession({}), store.createSession({})]);
        applied(await store.setSessionMode(a.id, 'code_review', 'review time', 'acme', 'kevin'));
        expect(await store.getSession(b.id)).toEqual(b);
      });
    });

    describe('ping', () => {
      it('answers while the database does, refuses once closed, and honours an aborted signal', async () => {
        const { store } = await freshStore();
        await expect(store.ping()).resolves.toBeUndefined();
        await expect(store.ping(new AbortController().signal)).resolves.toBeUndefined();
        await expectStoreError(store.ping(AbortSignal.abort()), 'CANCELLED');
        await store.close();
        await expectStoreError(store.ping(), 'STORE_CLOSED');
      });
    });

    describe('MCP bindings', () => {
      it('binds an MCP session to an agent session, and rebinding replaces the link', async () => {
        const { store } = await freshStore();
        const [first, second] = await Promise.all([store.createSession({}), store.createSession({})]);
        expect(await store.getMcpBinding('mcp-1')).toBeUndefined();
        await store.bindMcpSession('mcp-1', first.id);
        await store.bindMcpSession('mcp-2', first.id);
        expect(await store.getMcpBinding('mcp-1')).toBe(first.id);
        await store.bindMcpSession('mcp-1', second.id);
        expect(await store.getMcpBinding('mcp-1')).toBe(second.id);
        expect(await store.getMcpBinding('mcp-2')).toBe(first.id);
      });

      it('refuses to bind to an agent session that does not exist, or an empty MCP session id', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        await expectStoreError(store.bindMcpSession('mcp-1', 'no-such-session'), 'SESSION_NOT_FOUND', '"no-such-session"');
        await expectStoreError(store.bindMcpSession('', session.id), 'INVALID_ARGUMENT', 'mcpSessionId');
        expect(await store.getMcpBinding('mcp-1')).toBeUndefined();
      });
    });

    describe('conversation items', () => {
      it('returns the items in the order they were appended, as JSON', async () => {
        const { store } = await freshStore();
        const [session, other] = await Promise.all([store.createSession({}), store.createSession({})]);
        const first = [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Schreib mir ein DDR über “Modi” 🚀' }] },
          { type: 'function_call', call_id: 'call_1', name: 'agent_change_mode', arguments: '{"mode":"ddr_authoring","branch":false}' },
        ];
        const second = [{ type: 'function_call_output', call_id: 'call_1', output: '{"success":true}' }, 'a bare string', 42, null, [1, [2, { deep: true }]]];
        await store.appendConversationItems(session.id, first);
        await store.appendConversationItems(session.id, []);
        await store.appendConversationItems(other.id, [{ other: true }]);
        await store.appendConversationItems(session.id, second);
        expect(await store.listConversationItems(session.id)).toEqual([...first, ...second]);
        expect(await store.listConversationItems(other.id)).toEqual([{ other: true }]);
        expect(await store.listConversationItems('no-such-session')).toEqual([]);
      });

      it('keeps every item of concurrent appends, each batch together', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        await Promise.all(Array.from({ length: 40 }, (_, batch) => store.appendConversationItems(session.id, [{ batch, part: 0 }, { batch, part: 1 }])));
        const items = (await store.listConversationItems(session.id)) as { batch: number; part: number }[];
        expect(items).toHaveLength(80);
        for (let i = 0; i < items.length; i += 2) {
          expect(items[i + 1]).toEqual({ batch: items[i]!.batch, part: 1 });
          expect(items[i]!.part).toBe(0);
        }
        expect(new Set(items.map((item) => item.batch)).size).toBe(40);
      });

      it('refuses an unknown session', async () => {
        const { store } = await freshStore();
        await expectStoreError(store.appendConversationItems('no-such-session', [{ a: 1 }]), 'SESSION_NOT_FOUND', '"no-such-session"');
      });

      it('refuses items JSON cannot represent and appends none of the batch', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        await store.appendConversationItems(session.id, [{ kept: true }]);
        await expectStoreError(store.appendConversationItems(session.id, [{ fine: 1 }, { big: 10n }]), 'INVALID_ARGUMENT', 'item 1', 'nothing was appended');
        await expectStoreError(store.appendConversationItems(session.id, [undefined]), 'INVALID_ARGUMENT', 'item 0');
        expect(await store.listConversationItems(session.id)).toEqual([{ kept: true }]);
      });
    });

    describe('restart', () => {
      it('keeps sessions, mode, history, bindings and conversation across a reopen', async () => {
        const { store, database } = await freshStore();
        const session = await store.createSession({ org: 'acme', user: 'kevin' });
        const child = await store.createSession({ parentId: session.id });
        applied(await store.setSessionMode(session.id, 'ddr_authoring', 'write a DDR', 'acme', 'kevin', { branch: false }));
        applied(await store.setSessionMode(session.id, 'code_review', 'review it', 'acme', 'kevin', { branch: true }));
        await store.bindMcpSession('mcp-7', session.id);
        await store.appendConversationItems(session.id, [{ role: 'user', content: 'hello' }]);
        const before = await store.getSession(session.id);
        await store.close();

        const reopened = await open(database);
        expect(await reopened.getSession(session.id)).toEqual(before);
        expect((await reopened.getSession(child.id))?.parentId).toBe(session.id);
        expect(await reopened.getMcpBinding('mcp-7')).toBe(session.id);
        expect(await reopened.listConversationItems(session.id)).toEqual([{ role: 'user', content: 'hello' }]);
        const next = applied(await reopened.setSessionMode(session.id, 'general_chat', 'back to chat', 'acme', 'kevin'));
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
        expect(latest).toEqual([1, 2, 3]);
        await store.close();
        await open(database);
        expect(await database.appliedMigrations()).toEqual(latest);
      });

      it('upgrades a database written at version 1, keeping its sessions', async () => {
        const database = await harness.createDatabase();
        const fixture: Version1Fixture = {
          session: { id: 'v1-session', mode: 'general_chat', org: 'acme', user: 'kevin', createdAt: '2025-12-06T18:55:00.000Z' },
          change: { fromMode: 'general_chat', toMode: 'ddr_authoring', reason: 'written by version 1', branch: true, org: 'acme', user: 'kevin', at: '2025-12-06T19:00:00.000Z' },
        };
        await database.writeVersion1(fixture);
        expect(await database.appliedMigrations()).toEqual([1]);

        const store = await open(database);
        expect(await database.appliedMigrations()).toEqual([1, 2, 3]);
        const { change } = fixture;
        expect(await store.getSession('v1-session')).toEqual({
          id: 'v1-session',
          mode: 'ddr_authoring',
          org: 'acme',
          user: 'kevin',
          parentId: null,
          createdAt: fixture.session.createdAt,
          history: [change],
        });
        // What version 2 added works on the old session.
        await store.bindMcpSession('mcp-1', 'v1-session');
        await store.appendConversationItems('v1-session', [{ role: 'user', content: 'after the upgrade' }]);
        expect(await store.getMcpBinding('mcp-1')).toBe('v1-session');
        expect(await store.listConversationItems('v1-session')).toEqual([{ role: 'user', content: 'after the upgrade' }]);
        const next = applied(await store.setSessionMode('v1-session', 'code_review', 'after the upgrade', 'acme', 'kevin'));
        expectUnbrokenHistory(next.session, 'general_chat');
        expect(next.session.history.map((c) => c.reason)).toEqual(['written by version 1', 'after the upgrade']);
      });

      it('refuses a database that a newer version has migrated', async () => {
        const { store, database } = await freshStore();
        await store.close();
        await database.recordMigration(99, 'from the future');
        await expectStoreError(openSessionStore(database.url, { modes: fixedModes(), ...database.options }), 'SCHEMA_TOO_NEW', 'version 99', 'up to 3', 'upgrade @aptix/agent-sessions');
      });

      it('migrates a fresh database once when several stores open it at the same time', async () => {
        const database = await harness.createDatabase();
        const stores = await Promise.all(Array.from({ length: 4 }, () => open(database)));
        expect(await database.appliedMigrations()).toEqual([1, 2, 3]);
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
          return store.setSessionMode(session.id, MODE_KEYS[(i * 7) % MODE_KEYS.length]!, `call ${i}`, 'acme', `user-${i % 5}`, { branch: i % 3 === 0 });
        });
        const results = (await Promise.all(changes)).map(applied);

        const final = await store.getSession(session.id);
        expectUnbrokenHistory(final, 'general_chat');
        expect(final.history).toHaveLength(calls);
        expect(new Set(final.history.map((change) => change.reason))).toEqual(new Set(Array.from({ length: calls }, (_, i) => `call ${i}`)));
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
          startWorker({ url: database.url, options: database.options, sessionId: session.id, count: perWorker, tag, modes: MODE_KEYS }),
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

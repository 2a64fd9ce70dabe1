/**
 * The one behavioural suite every session store passes. A test file supplies a harness that creates
 * fresh databases; every store is opened through `openSessionStore`, as a host would. Its other halves:
 * `session-store-lifecycle.suite.ts` (restarts, migrations, concurrency) and
 * `session-store-limits.suite.ts` (bounds, pages, cancellation).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SessionStoreError } from '../src/errors.js';
import { openSessionStore, type OpenSessionStoreOptions } from '../src/open.js';
import type { AgentSession, AgentSessionStore, ModeDirectory, SetSessionModeResult } from '../src/types.js';
import { fixedModes, MODE_KEYS } from './fixtures/modes.js';

/** A session and one mode change, as a release with only migration 1 would have stored them. */
export interface Version1Fixture {
  readonly session: {
    readonly id: string;
    readonly mode: string;
    readonly org: string;
    readonly user: string;
    readonly createdAt: string;
  };
  readonly change: {
    readonly fromMode: string;
    readonly toMode: string;
    readonly reason: string;
    readonly branch: boolean;
    readonly org: string;
    readonly user: string;
    readonly at: string;
  };
}

/** One fresh, empty database (a SQLite file, a PostgreSQL schema). */
export interface TestDatabase {
  readonly url: string;
  /** What `openSessionStore` needs besides the URL and the modes (the PostgreSQL schema). */
  readonly options: Pick<OpenSessionStoreOptions, 'postgres'>;
  /** Writes with raw SQL the tables and bookkeeping of schema version 1, then the fixture's rows. */
  writeVersion1(fixture: Version1Fixture): Promise<void>;
  /** {@link writeVersion1}, then the released steps 2 to 6 as a release at version 6 left the database. */
  writeVersion6(fixture: Version1Fixture): Promise<void>;
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

/** Asserts the invariants of a session's history: an unbroken chain from `initialMode` to the session's mode. */
export function expectUnbrokenHistory(
  session: AgentSession | undefined,
  initialMode: string,
): asserts session is AgentSession {
  expect(session).toBeDefined();
  let previous = initialMode;
  session!.history.forEach((change, index) => {
    if (change.fromMode !== previous) {
      throw new Error(
        `history[${index}].fromMode is "${change.fromMode}" but history[${index - 1}].toMode is "${previous}": a change was lost or applied out of order.`,
      );
    }
    previous = change.toMode;
  });
  expect(session!.mode, "the session's mode is the last history row's toMode").toBe(previous);
}

export function applied(result: SetSessionModeResult): Extract<SetSessionModeResult, { applied: true }> {
  if (result.applied !== true)
    throw new Error(`expected the mode change to be applied; it was refused: ${result.code}: ${result.message}`);
  return result;
}

export async function expectStoreError(
  promise: Promise<unknown>,
  code: string,
  ...fragments: string[]
): Promise<SessionStoreError> {
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

/** Opens stores on a harness's databases, as a host would, and closes them after each test. */
export function storeOpener(harness: SessionStoreHarness, extra: Pick<OpenSessionStoreOptions, 'limits'> = {}) {
  const opened: AgentSessionStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  afterAll(() => harness.dispose());

  async function open(
    database: TestDatabase,
    modes: ModeDirectory = fixedModes(),
    limits = extra.limits,
  ): Promise<AgentSessionStore> {
    const store = await openSessionStore(database.url, { modes, limits, ...database.options });
    opened.push(store);
    return store;
  }

  async function freshStore(
    modes?: ModeDirectory,
    limits?: OpenSessionStoreOptions['limits'],
  ): Promise<{ store: AgentSessionStore; database: TestDatabase }> {
    const database = await harness.createDatabase();
    return { store: await open(database, modes, limits), database };
  }
  return { open, freshStore };
}

export function describeSessionStore(name: string, harness: SessionStoreHarness): void {
  describe(name, () => {
    const { freshStore, open } = storeOpener(harness);

    describe('createSession', () => {
      it("starts a session in the catalog's default mode when none is given", async () => {
        const { store } = await freshStore(fixedModes(MODE_KEYS, 'ddr_authoring'));
        const session = await store.createSession({ org: 'acme', user: 'kevin' });
        expect(session).toMatchObject({
          mode: 'ddr_authoring',
          org: 'acme',
          user: 'kevin',
          parentId: null,
          owner: null,
          history: [],
        });
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

      it('refuses a catalog whose default mode is not one of its keys', async () => {
        const { store } = await freshStore(fixedModes(MODE_KEYS, 'retired_mode'));
        await expectStoreError(store.createSession({}), 'CATALOG_INCONSISTENT', '"retired_mode"');
      });

      it('records the session a branched session came from', async () => {
        const { store } = await freshStore();
        const parent = await store.createSession({ org: 'acme', user: 'kevin' });
        const child = await store.createSession({
          org: 'acme',
          user: 'kevin',
          mode: 'ddr_authoring',
          parentId: parent.id,
        });
        expect(child.parentId).toBe(parent.id);
        expect((await store.getSession(child.id))?.parentId).toBe(parent.id);
      });

      it('refuses a parent session that does not exist', async () => {
        const { store } = await freshStore();
        await expectStoreError(
          store.createSession({ parentId: 'no-such-session' }),
          'SESSION_NOT_FOUND',
          '"no-such-session"',
        );
        await expectStoreError(
          store.createSession({ parentId: 'no-such-session', owner: 'ops' }),
          'SESSION_NOT_FOUND',
          '"no-such-session"',
        );
      });
    });

    describe('owner (the principal that created the session)', () => {
      it('keeps the owner it is given, on every read, through a reopen', async () => {
        const { store, database } = await freshStore();
        const session = await store.createSession({ org: 'acme', user: 'kevin', owner: 'agent-key' });
        expect(session.owner).toBe('agent-key');
        expect(await store.getSession(session.id)).toEqual(session);
        expect(await store.getSessionHead(session.id)).toEqual({
          id: session.id,
          mode: 'general_chat',
          org: 'acme',
          user: 'kevin',
          owner: 'agent-key',
        });
        expect((await store.getSessionPage(session.id))?.session).toEqual(session);
        const changed = applied(await store.setSessionMode(session.id, 'code_review', 'review', 'acme', 'kevin'));
        expect(changed.session.owner).toBe('agent-key');
        expect(await store.getSession(session.id)).toEqual(changed.session);
        const reopened = await open(database);
        expect(await reopened.getSession(session.id)).toEqual(changed.session);
        expect((await reopened.getSessionHead(session.id))?.owner).toBe('agent-key');
      });

      it('gives a session created without an owner (a host without keys) none', async () => {
        const { store } = await freshStore();
        for (const input of [{}, { owner: null }, { owner: undefined }]) {
          const session = await store.createSession(input);
          expect(session.owner).toBeNull();
          expect(await store.getSession(session.id)).toEqual(session);
          expect((await store.getSessionHead(session.id))?.owner).toBeNull();
        }
      });

      it("gives a branch its parent's owner, even when another owner or none is named", async () => {
        const { store } = await freshStore();
        const parent = await store.createSession({ org: 'acme', user: 'kevin', owner: 'agent-key' });
        applied(
          await store.setSessionMode(parent.id, 'ddr_authoring', 'start anew', 'acme', 'kevin', { branch: true }),
        );
        // What the agent loop does after a branching mode change: it names the parent, not the owner.
        const child = await store.createSession({
          org: 'acme',
          user: 'kevin',
          mode: 'ddr_authoring',
          parentId: parent.id,
        });
        expect(child).toMatchObject({ parentId: parent.id, owner: 'agent-key' });
        expect(await store.getSession(child.id)).toEqual(child);
        expect((await store.getSessionHead(child.id))?.owner).toBe('agent-key');
        // Branching never hands a session to someone else.
        expect((await store.createSession({ parentId: parent.id, owner: 'other-key' })).owner).toBe('agent-key');
        expect((await store.createSession({ parentId: parent.id, owner: null })).owner).toBe('agent-key');
        // A branch of a branch, and a branch of an unowned session.
        expect((await store.createSession({ parentId: child.id })).owner).toBe('agent-key');
        const unowned = await store.createSession({});
        const branch = await store.createSession({ parentId: unowned.id, owner: 'other-key' });
        expect(branch.owner).toBeNull();
        expect((await store.getSessionHead(branch.id))?.owner).toBeNull();
      });

      it('refuses an owner that is not a string', async () => {
        const { store } = await freshStore();
        await expectStoreError(store.createSession({ owner: 42 as unknown as string }), 'INVALID_ARGUMENT', 'owner');
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

    describe('getSessionHead (what a tool call in a session reads)', () => {
      it('gives the id, mode, org, user and owner, with no history', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({ org: 'acme', user: 'kevin', mode: 'code_review', owner: 'ops' });
        expect(await store.getSessionHead(session.id)).toEqual({
          id: session.id,
          mode: 'code_review',
          org: 'acme',
          user: 'kevin',
          owner: 'ops',
        });
        const anonymous = await store.createSession({});
        expect(await store.getSessionHead(anonymous.id)).toEqual({
          id: anonymous.id,
          mode: anonymous.mode,
          org: null,
          user: null,
          owner: null,
        });
      });

      it('sees a mode change made through another store on the same database at once', async () => {
        const { store, database } = await freshStore();
        const other = await open(database);
        const session = await store.createSession({ mode: 'general_chat' });
        expect((await store.getSessionHead(session.id))?.mode).toBe('general_chat');
        applied(await other.setSessionMode(session.id, 'ddr_authoring', 'another host moved it', null, null));
        expect((await store.getSessionHead(session.id))?.mode).toBe('ddr_authoring');
        applied(await other.setSessionMode(session.id, 'code_review', 'and again', null, null));
        expect((await store.getSessionHead(session.id))?.mode).toBe('code_review');
      });

      it('answers undefined, without an error, for an id no session has: unknown, empty, huge, with a NUL, a near miss of a real id or not a string', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        // Near misses of a real id too: the SQLite store answers with the id it was asked for, so only an exact match may find a row.
        const nearMisses = [session.id.toUpperCase(), ` ${session.id}`, `${session.id} `, session.id.slice(0, -1)];
        for (const id of ['no-such-session', '', 'x'.repeat(100_000), 'a\u0000b', "' OR '1'='1", ...nearMisses])
          expect(await store.getSessionHead(id)).toBeUndefined();
        expect(await store.getSessionHead(42 as unknown as string)).toBeUndefined();
      });

      it('refuses once the store is closed', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        await store.close();
        await expectStoreError(store.getSessionHead(session.id), 'STORE_CLOSED');
      });
    });

    describe('setSessionMode', () => {
      it('changes the mode and appends one history row with every field', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({ org: 'acme', user: 'kevin' });
        const result = applied(
          await store.setSessionMode(session.id, 'ddr_authoring', 'The user asked for a DDR.', 'acme', 'kevin', {
            branch: false,
          }),
        );

        expect(result.change).toEqual({
          fromMode: 'general_chat',
          toMode: 'ddr_authoring',
          reason: 'The user asked for a DDR.',
          branch: false,
          org: 'acme',
          user: 'kevin',
          at: expect.any(String),
        });
        expect(new Date(result.change.at).toISOString()).toBe(result.change.at);
        expect(result.change.at >= session.createdAt).toBe(true);
        expect(result.session).toEqual({ ...session, mode: 'ddr_authoring', history: [result.change] });
        expect(await store.getSession(session.id)).toEqual(result.session);
      });

      it('keeps changes in the order they were made, each starting from the previous mode', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        const targets = ['ddr_authoring', 'code_review', 'code_review', 'general_chat', 'ddr_authoring'];
        for (const [i, mode] of targets.entries())
          applied(await store.setSessionMode(session.id, mode, `step ${i}`, null, undefined));
        const stored = await store.getSession(session.id);
        expectUnbrokenHistory(stored, 'general_chat');
        expect(stored.history.map((change) => [change.toMode, change.reason])).toEqual(
          targets.map((mode, i) => [mode, `step ${i}`]),
        );
        expect(stored.history.every((change) => change.org === null && change.user === null)).toBe(true);
      });

      it('records the branch flag, false when no options are given', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        applied(
          await store.setSessionMode(session.id, 'ddr_authoring', 'switch and start anew', 'acme', 'kevin', {
            branch: true,
          }),
        );
        applied(await store.setSessionMode(session.id, 'code_review', 'switch here', 'acme', 'kevin'));
        const stored = await store.getSession(session.id);
        expect(stored?.history.map((change) => change.branch)).toEqual([true, false]);
      });

      it('refuses an unknown mode as a result listing the valid keys, and persists nothing', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        const result = await store.setSessionMode(session.id, 'poetry', 'the user likes rhymes', 'acme', 'kevin', {
          branch: false,
        });
        expect(result).toEqual({ applied: false, code: 'UNKNOWN_MODE', message: expect.stringContaining('"poetry"') });
        for (const key of MODE_KEYS) expect(result.applied === false && result.message).toContain(key);
        expect(await store.getSession(session.id)).toEqual(session);
      });

      it('refuses a session that does not exist, and persists nothing', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        const result = await store.setSessionMode('no-such-session', 'ddr_authoring', 'because', 'acme', 'kevin');
        expect(result).toEqual({
          applied: false,
          code: 'SESSION_NOT_FOUND',
          message: expect.stringContaining('"no-such-session"'),
        });
        expect(await store.setSessionMode('', 'ddr_authoring', 'because', 'acme', 'kevin')).toMatchObject({
          applied: false,
          code: 'SESSION_NOT_FOUND',
        });
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

      it('knows when an MCP session was last used and whether it was closed, and a closed one never opens again', async () => {
        const { store } = await freshStore();
        const [first, second] = await Promise.all([store.createSession({}), store.createSession({})]);
        expect(await store.getMcpSession('mcp-1')).toBeUndefined();
        expect(await store.touchMcpSession('mcp-1')).toBeUndefined();
        expect(await store.closeMcpSession('mcp-1')).toBe(false);
        await store.bindMcpSession('mcp-1', first.id);
        expect(await store.getMcpSession('mcp-1')).toEqual({
          agentSessionId: first.id,
          idleMs: expect.any(Number),
          closed: false,
          touches: 0,
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        const idle = (await store.getMcpSession('mcp-1'))!.idleMs;
        expect(idle).toBeGreaterThanOrEqual(250);
        expect(await store.touchMcpSession('mcp-1')).toBe(1);
        // A use resets the idle time.
        expect((await store.getMcpSession('mcp-1'))!.idleMs).toBeLessThan(idle);
        // A close that read the session before the last use loses: another host used it since.
        expect(await store.closeMcpSession('mcp-1', 0)).toBe(false);
        expect((await store.getMcpSession('mcp-1'))!.closed).toBe(false);
        expect(await store.closeMcpSession('mcp-1', 1)).toBe(true);
        expect(await store.closeMcpSession('mcp-1')).toBe(false);
        expect(await store.touchMcpSession('mcp-1')).toBeUndefined();
        await store.bindMcpSession('mcp-1', second.id);
        // Still bound (a refusal names the agent session to continue in), still closed.
        expect(await store.getMcpSession('mcp-1')).toMatchObject({ agentSessionId: second.id, closed: true });
        expect(await store.getMcpBinding('mcp-1')).toBe(second.id);
        await expectStoreError(store.closeMcpSession('mcp-1', 1.5), 'INVALID_ARGUMENT', 'ifTouches');
        expect(await store.getMcpSession('m\u0000')).toBeUndefined();
        expect(await store.closeMcpSession('m\u0000')).toBe(false);
      });

      it('refuses to bind to an agent session that does not exist, or an empty MCP session id', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        await expectStoreError(
          store.bindMcpSession('mcp-1', 'no-such-session'),
          'SESSION_NOT_FOUND',
          '"no-such-session"',
        );
        await expectStoreError(store.bindMcpSession('', session.id), 'INVALID_ARGUMENT', 'mcpSessionId');
        expect(await store.getMcpBinding('mcp-1')).toBeUndefined();
      });
    });

    describe('conversation items', () => {
      it('returns the items in the order they were appended, as JSON', async () => {
        const { store } = await freshStore();
        const [session, other] = await Promise.all([store.createSession({}), store.createSession({})]);
        const first = [
          {
            type: 'message',
            role: 'user',
            content: [{ type: 'input_text', text: 'Schreib mir ein DDR über “Modi” 🚀' }],
          },
          {
            type: 'function_call',
            call_id: 'call_1',
            name: 'agent_change_mode',
            arguments: '{"mode":"ddr_authoring","branch":false}',
          },
        ];
        const second = [
          { type: 'function_call_output', call_id: 'call_1', output: '{"success":true}' },
          'a bare string',
          42,
          null,
          [1, [2, { deep: true }]],
        ];
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
        await Promise.all(
          Array.from({ length: 40 }, (_, batch) =>
            store.appendConversationItems(session.id, [
              { batch, part: 0 },
              { batch, part: 1 },
            ]),
          ),
        );
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
        await expectStoreError(
          store.appendConversationItems('no-such-session', [{ a: 1 }]),
          'SESSION_NOT_FOUND',
          '"no-such-session"',
        );
      });

      it('refuses items JSON cannot represent and appends none of the batch', async () => {
        const { store } = await freshStore();
        const session = await store.createSession({});
        await store.appendConversationItems(session.id, [{ kept: true }]);
        await expectStoreError(
          store.appendConversationItems(session.id, [{ fine: 1 }, { big: 10n }]),
          'INVALID_ARGUMENT',
          'item 1',
          'nothing was appended',
        );
        await expectStoreError(store.appendConversationItems(session.id, [undefined]), 'INVALID_ARGUMENT', 'item 0');
        expect(await store.listConversationItems(session.id)).toEqual([{ kept: true }]);
      });
    });
  });
}

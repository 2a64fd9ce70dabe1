/**
 * What every session store bounds: the strings it persists, the history a read returns, and calls
 * cancelled before they start. Run by each store's test file on the same harness as the main suite.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSessionStore, SessionStoreLimits } from '../src/types.js';
import {
  applied,
  expectStoreError,
  expectUnbrokenHistory,
  storeOpener,
  type SessionStoreHarness,
} from './session-store.suite.js';

export function describeSessionStoreLimits(name: string, harness: SessionStoreHarness): void {
  describe(`${name}: limits`, () => {
    const opener = storeOpener(harness);
    const freshStore = async (limits?: SessionStoreLimits): Promise<AgentSessionStore> =>
      (await opener.freshStore(undefined, limits)).store;

    describe('bounded strings', () => {
      it('refuses a reason over the default bound, naming the field and the limit, and saves nothing', async () => {
        const store = await freshStore();
        const session = await store.createSession({ org: 'acme', user: 'kevin' });
        // The attack of issue 13: a 900 KB reason, read back with every later GET of the session.
        const error = await expectStoreError(
          store.setSessionMode(session.id, 'ddr_authoring', 'x'.repeat(900_000), 'acme', 'kevin'),
          'VALUE_TOO_LONG',
          'reason',
          '900000',
          '1000',
          'maxReasonLength',
        );
        expect(error.message.length).toBeLessThan(400);
        expect(await store.getSession(session.id)).toEqual(session);
        applied(await store.setSessionMode(session.id, 'ddr_authoring', 'y'.repeat(1000), 'acme', 'kevin'));
      });

      it('refuses org, user, owner, mode keys and ids over the key bound, on every call that stores them', async () => {
        const store = await freshStore();
        const session = await store.createSession({});
        const long = 'k'.repeat(257);
        await expectStoreError(
          store.createSession({ org: long }),
          'VALUE_TOO_LONG',
          'org',
          '257',
          '256',
          'maxKeyLength',
        );
        await expectStoreError(store.createSession({ user: long }), 'VALUE_TOO_LONG', 'user');
        await expectStoreError(
          store.createSession({ owner: long }),
          'VALUE_TOO_LONG',
          'owner is 257 characters long',
          'the limit is 256',
          'maxKeyLength',
          'nothing was saved',
        );
        // Checked for a branch too, though the branch takes its parent's owner.
        await expectStoreError(store.createSession({ parentId: session.id, owner: long }), 'VALUE_TOO_LONG', 'owner');
        await expectStoreError(store.createSession({ mode: long }), 'VALUE_TOO_LONG', 'mode');
        await expectStoreError(store.createSession({ parentId: long }), 'VALUE_TOO_LONG', 'parentId');
        await expectStoreError(store.setSessionMode(session.id, long, 'r', null, null), 'VALUE_TOO_LONG', 'mode');
        await expectStoreError(
          store.setSessionMode(session.id, 'code_review', 'r', long, null),
          'VALUE_TOO_LONG',
          'org',
        );
        await expectStoreError(
          store.setSessionMode(session.id, 'code_review', 'r', null, long),
          'VALUE_TOO_LONG',
          'user',
        );
        await expectStoreError(
          store.setSessionMode(long, 'code_review', 'r', null, null),
          'VALUE_TOO_LONG',
          'sessionId',
        );
        await expectStoreError(store.bindMcpSession(long, session.id), 'VALUE_TOO_LONG', 'mcpSessionId');
        expect(await store.getSession(session.id)).toEqual(session);
        expect(await store.getSession(long)).toBeUndefined();
        expect(await store.getMcpBinding(long)).toBeUndefined();
      });

      it('takes its bounds from the store options', async () => {
        // Session ids are UUIDs (36 characters), so the key bound stays above them here.
        const store = await freshStore({ maxReasonLength: 10, maxKeyLength: 40 });
        const session = await store.createSession({ org: 'acme' });
        await expectStoreError(
          store.setSessionMode(session.id, 'code_review', 'eleven chr!', null, null),
          'VALUE_TOO_LONG',
          'limit is 10',
        );
        await expectStoreError(store.createSession({ org: 'o'.repeat(41) }), 'VALUE_TOO_LONG', 'limit is 40');
        await expectStoreError(
          store.createSession({ owner: 'o'.repeat(41) }),
          'VALUE_TOO_LONG',
          'owner',
          'limit is 40',
        );
        expect((await store.createSession({ owner: 'o'.repeat(40) })).owner).toBe('o'.repeat(40));
        applied(await store.setSessionMode(session.id, 'code_review', 'ten chars!', 'o'.repeat(40), null));
        await expect(freshStore({ maxReasonLength: 0 })).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          message: expect.stringContaining('maxReasonLength'),
        });
      });

      it('refuses NUL in what it stores, and answers "not found" for an id holding NUL', async () => {
        const store = await freshStore();
        const session = await store.createSession({});
        await expectStoreError(
          store.setSessionMode(session.id, 'code_review', 'a\u0000b', null, null),
          'INVALID_ARGUMENT',
          'reason',
          'NUL',
        );
        await expectStoreError(store.createSession({ org: 'ac\u0000me' }), 'INVALID_ARGUMENT', 'org', 'NUL');
        await expectStoreError(store.createSession({ owner: 'agent\u0000key' }), 'INVALID_ARGUMENT', 'owner', 'NUL');
        expect(await store.getSession(`${session.id}\u0000`)).toBeUndefined();
        expect(await store.getSessionPage(`\u0000${session.id}`)).toBeUndefined();
        expect(await store.setSessionMode(`${session.id}\u0000`, 'code_review', 'r', null, null)).toMatchObject({
          applied: false,
          code: 'SESSION_NOT_FOUND',
        });
        expect(await store.listConversationItems(`a\u0000`)).toEqual([]);
        expect(await store.getMcpBinding(`m\u0000`)).toBeUndefined();
        expect(await store.getSession(session.id)).toEqual(session);
      });
    });

    describe('history pages', () => {
      it('walks the whole history a page at a time, oldest first, with a cursor', async () => {
        const store = await freshStore({ defaultHistoryPageSize: 4, maxHistoryPageSize: 10 });
        const session = await store.createSession({ org: 'acme' });
        for (let i = 0; i < 11; i++)
          applied(
            await store.setSessionMode(
              session.id,
              i % 2 === 0 ? 'code_review' : 'ddr_authoring',
              `step ${i}`,
              'acme',
              null,
            ),
          );
        const full = await store.getSession(session.id);
        expectUnbrokenHistory(full, 'general_chat');

        const first = await store.getSessionPage(session.id);
        expect(first?.session.history).toEqual(full.history.slice(0, 4));
        expect({ ...first?.session, history: [] }).toEqual({ ...full, history: [] });
        const seen = [...first!.session.history];
        let cursor = first!.nextCursor;
        while (cursor !== null) {
          const page = await store.getSessionPage(session.id, { cursor, limit: 3 });
          expect(page!.session.history.length).toBeLessThanOrEqual(3);
          seen.push(...page!.session.history);
          cursor = page!.nextCursor;
        }
        expect(seen).toEqual(full.history);
        const whole = await store.getSessionPage(session.id, { limit: 10 });
        expect(whole?.nextCursor).not.toBeNull();
        expect(await store.getSessionPage(session.id, { limit: 10, cursor: whole!.nextCursor })).toMatchObject({
          nextCursor: null,
          session: { history: full.history.slice(10) },
        });
      });

      it('gives the last page a null cursor, and a session without history one empty page', async () => {
        const store = await freshStore();
        const session = await store.createSession({});
        expect(await store.getSessionPage(session.id)).toEqual({ session, nextCursor: null });
        applied(await store.setSessionMode(session.id, 'code_review', 'one', null, null));
        expect((await store.getSessionPage(session.id, { limit: 1 }))?.nextCursor).toBeNull();
        expect(await store.getSessionPage('no-such-session')).toBeUndefined();
      });

      it('refuses a limit out of range and a cursor it did not give out', async () => {
        const store = await freshStore({ maxHistoryPageSize: 50 });
        const session = await store.createSession({});
        await expectStoreError(store.getSessionPage(session.id, { limit: 0 }), 'INVALID_ARGUMENT', 'limit', '1 to 50');
        await expectStoreError(store.getSessionPage(session.id, { limit: 51 }), 'INVALID_ARGUMENT', '1 to 50');
        await expectStoreError(store.getSessionPage(session.id, { limit: 2.5 }), 'INVALID_ARGUMENT', 'limit');
        await expectStoreError(
          store.getSessionPage(session.id, { cursor: "1' OR 1=1" }),
          'INVALID_ARGUMENT',
          'cursor',
          'nextCursor',
        );
        await expectStoreError(store.getSessionPage(session.id, { cursor: '-1' }), 'INVALID_ARGUMENT', 'cursor');
      });
    });

    describe('cancellation', () => {
      it('answers CANCELLED for a mode change whose signal was aborted before it started, and saves nothing', async () => {
        const store = await freshStore();
        const session = await store.createSession({});
        const result = await store.setSessionMode(session.id, 'code_review', 'never', null, null, {
          signal: AbortSignal.abort(),
        });
        expect(result).toEqual({ applied: false, code: 'CANCELLED', message: expect.stringContaining('unchanged') });
        expect(await store.getSession(session.id)).toEqual(session);
      });
    });
  });
}

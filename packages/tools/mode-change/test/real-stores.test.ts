/**
 * agent_change_mode on the real session stores while another connection holds the session: a call
 * cancelled or timed out says so only when nothing was saved, and the change is never applied later,
 * not even once the lock is released.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSessionStore } from '@aptix/agent-sessions/open';
import type { AgentSession, AgentSessionStore } from '@aptix/agent-sessions';
import { AgentToolExecutor, AgentToolRegistry, InvokeResult } from '@aptix/tool-contract';
import { CapturingAdminLogger, testContext } from '@aptix/tool-contract/testing';
import { SqliteDatabase as Database } from '@aptix/agent-sessions/sqlite';
import { Client, escapeIdentifier } from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ModeChangeTool, tools } from '../src/index.js';

const PG_URL = process.env.APTIX_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const modes = { modeKeys: async () => ['general', 'ddr_authoring'], defaultModeKey: async () => 'general' };
const call = JSON.stringify({ mode: 'ddr_authoring', branch: false, reason: 'The user wants to write a DDR.' });
const root = mkdtempSync(join(tmpdir(), 'aptix-mode-change-'));
const schemas: string[] = [];

/** A store, a session in it, and a second connection that can lock that session against writes. */
interface Fixture {
  readonly store: AgentSessionStore;
  readonly session: AgentSession;
  /** Another connection takes the lock a mode change needs, until `release`. */
  lock(): Promise<{ release(): Promise<void> }>;
}

const kinds: Record<'SQLite' | 'PostgreSQL', () => Promise<Fixture>> = {
  async SQLite() {
    const filename = join(root, `${randomBytes(4).toString('hex')}.db`);
    const store = await openSessionStore(`sqlite:${filename}`, { modes, sqlite: { busyTimeoutMs: 60_000 } });
    const lock = async () => {
      const other = new Database(filename);
      other.exec('BEGIN EXCLUSIVE');
      return { release: async () => void (other.exec('COMMIT'), other.close()) };
    };
    return { store, session: await store.createSession({}), lock };
  },
  async PostgreSQL() {
    const schema = `aptix_mode_change_${process.pid}_${randomBytes(3).toString('hex')}`;
    schemas.push(schema);
    const timeouts = { lockTimeoutMs: 60_000, statementTimeoutMs: 60_000, queryTimeoutMs: 90_000 };
    const store = await openSessionStore(PG_URL, { modes, postgres: { schema, timeouts } });
    const session = await store.createSession({});
    const lock = async () => {
      const other = new Client({ connectionString: PG_URL });
      await other.connect();
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM ${escapeIdentifier(schema)}.agent_sessions WHERE id = $1 FOR UPDATE`, [
        session.id,
      ]);
      return { release: async () => void (await other.query('COMMIT'), await other.end()) };
    };
    return { store, session, lock };
  },
};

const stores: AgentSessionStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  if (schemas.length === 0) return;
  const admin = new Client({ connectionString: PG_URL });
  await admin.connect();
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${escapeIdentifier(schema)} CASCADE`);
  await admin.end();
});

/** PostgreSQL runs in CI always; elsewhere an unreachable server drops its half of the suite, loudly. */
async function postgresReachable(): Promise<boolean> {
  const probe = new Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  const reachable = await probe.connect().then(
    () => true,
    () => false,
  );
  await probe.end().catch(() => undefined);
  if (!reachable && process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI.toLowerCase())) {
    throw new Error(
      `PostgreSQL at ${PG_URL.replace(/:[^:@/]*@/, ':***@')} is unreachable and CI is set: start it, or set APTIX_TEST_PG_URL.`,
    );
  }
  if (!reachable)
    console.warn(`\n!!! PostgreSQL is unreachable: the PostgreSQL half of ${import.meta.url} is SKIPPED. !!!\n`);
  return reachable;
}
const storeKinds = (Object.keys(kinds) as (keyof typeof kinds)[]).filter(
  (kind) => kind !== 'PostgreSQL',
) as (keyof typeof kinds)[];
if (await postgresReachable()) storeKinds.push('PostgreSQL');

describe.each(storeKinds)('agent_change_mode on the %s store, the session locked by another connection', (kind) => {
  async function fixture(): Promise<Fixture> {
    const made = await kinds[kind]();
    stores.push(made.store);
    return made;
  }

  /** The mode after the lock is released and anything left running has had its chance to commit. */
  async function modeAfterRelease(made: Fixture, lock: { release(): Promise<void> }): Promise<string | undefined> {
    await lock.release();
    await sleep(300);
    return (await made.store.getSession(made.session.id))?.mode;
  }

  it('cancelled while it waits: a cancelled result, and the mode stays unchanged after the lock is released', async () => {
    const made = await fixture();
    const logger = new CapturingAdminLogger();
    const tool = new ModeChangeTool({ logger, sessionManager: made.store });
    const lock = await made.lock();
    const controller = new AbortController();
    const pending = tool.execute(
      call,
      testContext({ sessionId: made.session.id, conversationId: 'c' }),
      controller.signal,
    );
    await sleep(200);
    controller.abort();
    const result = await pending;
    expect(result.successful).toBe(true);
    expect(JSON.parse(result.result as string)).toMatchObject({ wasCancelled: true, sessionId: made.session.id });
    expect(await modeAfterRelease(made, lock)).toBe('general');
  });

  it('timed out by the executor while it waits: never reported as saved, and never saved later', async () => {
    const made = await fixture();
    const logger = new CapturingAdminLogger();
    const registry = new AgentToolRegistry({ logger });
    registry.registerTools(tools);
    const executor = new AgentToolExecutor({
      registry,
      logger,
      createTool: (toolClass) => new toolClass({ logger, sessionManager: made.store }),
    });
    const lock = await made.lock();
    const result = await executor.execute(
      'agent_change_mode',
      call,
      { sessionId: made.session.id, conversationId: 'c' },
      { timeoutMs: 300 },
    );
    // TIMEOUT, or the tool's own cancelled result: either way not the success of a saved change.
    const saved = result.successful && JSON.parse(result.result as string).success === true;
    expect(saved).toBe(false);
    expect(await modeAfterRelease(made, lock)).toBe('general');
  });

  it('a 900 KB reason is refused with VALUE_TOO_LONG, saying the mode was not changed', async () => {
    const made = await fixture();
    const tool = new ModeChangeTool({ logger: new CapturingAdminLogger(), sessionManager: made.store });
    const result = await tool.execute(
      JSON.stringify({ mode: 'ddr_authoring', branch: false, reason: 'x'.repeat(900_000) }),
      testContext({ sessionId: made.session.id }),
    );
    expect(result.successful).toBe(false);
    expect(result.errors[0]!.code).toBe('VALUE_TOO_LONG');
    expect(InvokeResult.errorMessage(result)).toContain("The session's mode was not changed.");
    expect(InvokeResult.errorMessage(result).length).toBeLessThan(400);
    expect((await made.store.getSession(made.session.id))?.mode).toBe('general');
  });

  it('a reason holding NUL is refused as INVALID_ARGUMENTS on both stores alike, nothing changed', async () => {
    const made = await fixture();
    const tool = new ModeChangeTool({ logger: new CapturingAdminLogger(), sessionManager: made.store });
    const result = await tool.execute(
      JSON.stringify({ mode: 'ddr_authoring', branch: false, reason: 'a\u0000b' }),
      testContext({ sessionId: made.session.id }),
    );
    expect(result.errors[0]).toMatchObject({ code: 'INVALID_ARGUMENTS', message: expect.stringContaining('NUL') });
    expect((await made.store.getSession(made.session.id))?.mode).toBe('general');
  });
});

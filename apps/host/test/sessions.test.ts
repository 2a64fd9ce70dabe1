/**
 * Session history is paged and persisted strings are bounded, over real HTTP and the real CLI: the
 * attack of issue 13 (a 900 KB reason, then a 184 MB GET) is refused, and a NUL in a session id is a
 * 404 on PostgreSQL as on SQLite.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteDatabase as Database } from '@aptix/agent-sessions/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  HOST_ROOT,
  postgresAvailable,
  postgresSchema,
  runCli,
  scratch,
  startHost,
  type RunningHost,
} from './support.js';

async function call(url: string, path: string, body?: unknown): Promise<{ status: number; text: string; body: any }> {
  const response = await fetch(
    url + path,
    body === undefined
      ? {}
      : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
  );
  const text = await response.text();
  return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
}

function changeMode(url: string, sessionId: string, mode: string, reason: string) {
  return call(url, '/v1/tools/agent_change_mode/invoke', {
    arguments: { mode, branch: false, reason },
    context: { sessionId },
  });
}

describe('session history pages and bounded strings (SQLite host)', () => {
  const space = scratch();
  let host: RunningHost;
  let sessionId: string;
  const reasons = ['one', 'two', 'three', 'four', 'five'];

  beforeAll(async () => {
    const config = join(space.dir, 'aptix.config.json');
    writeFileSync(
      config,
      JSON.stringify({ sessions: { historyPageSize: 2, maxHistoryPageSize: 5, maxReasonLength: 500 } }),
    );
    host = await startHost({ env: { APTIX_DB: space.db, APTIX_CONFIG: config } });
    sessionId = (await call(host.url, '/v1/sessions', {})).body.id;
    for (const [i, reason] of reasons.entries()) {
      const changed = await changeMode(host.url, sessionId, i % 2 === 0 ? 'tool_diagnostics' : 'general', reason);
      expect(changed.body.successful).toBe(true);
    }
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('GET /v1/sessions/:id returns the configured page, and the cursor walks the rest', async () => {
    const first = await call(host.url, `/v1/sessions/${sessionId}`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: sessionId, mode: 'tool_diagnostics', parentId: null });
    expect(first.body.history.map((row: { reason: string }) => row.reason)).toEqual(['one', 'two']);
    const seen = [...first.body.history];
    let cursor: string | null = first.body.nextCursor;
    while (cursor !== null) {
      const page = await call(host.url, `/v1/sessions/${sessionId}?cursor=${encodeURIComponent(cursor)}&limit=2`);
      expect(page.status).toBe(200);
      seen.push(...page.body.history);
      cursor = page.body.nextCursor;
    }
    expect(seen.map((row: { reason: string }) => row.reason)).toEqual(reasons);
    expect((await call(host.url, `/v1/sessions/${sessionId}?limit=5`)).body).toMatchObject({
      nextCursor: null,
      history: { length: 5 },
    });
  });

  it('refuses a page larger than the maximum, and a cursor it did not give out, with 400 and what to send', async () => {
    const tooLarge = await call(host.url, `/v1/sessions/${sessionId}?limit=6`);
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('1 to 5') });
    const forged = await call(host.url, `/v1/sessions/${sessionId}?cursor=${encodeURIComponent("1' OR '1'='1")}`);
    expect(forged.status).toBe(400);
    expect(forged.body.error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('nextCursor'),
    });
    expect((await call(host.url, `/v1/sessions/${sessionId}?limit=0`)).status).toBe(400);
  });

  it('refuses a 900 KB reason with VALUE_TOO_LONG, so the session stays small to read', async () => {
    const attack = await changeMode(host.url, sessionId, 'general', 'x'.repeat(900_000));
    expect(attack.status).toBe(200);
    expect(attack.body.successful).toBe(false);
    expect(attack.body.errors[0]).toMatchObject({
      code: 'VALUE_TOO_LONG',
      message: expect.stringContaining('limit is 500'),
    });
    const read = await call(host.url, `/v1/sessions/${sessionId}?limit=5`);
    expect(read.body.mode).toBe('tool_diagnostics');
    expect(read.text.length).toBeLessThan(5_000);
  });

  it('refuses an org over the bound when a session is created', async () => {
    const created = await call(host.url, '/v1/sessions', { org: 'o'.repeat(300) });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ code: 'VALUE_TOO_LONG', message: expect.stringContaining('org') });
  });

  it('aptix sessions show pages with --limit and --cursor', async () => {
    const env = { APTIX_DB: space.db };
    const first = await runCli(['sessions', 'show', sessionId, '--limit', '3'], { env });
    expect(first.code).toBe(0);
    const page = first.json<{ id: string; history: Array<{ reason: string }>; nextCursor: string | null }>();
    expect(page.history.map((row) => row.reason)).toEqual(['one', 'two', 'three']);
    const rest = await runCli(['sessions', 'show', sessionId, '--limit', '3', '--cursor', page.nextCursor!], { env });
    expect(rest.json<{ history: Array<{ reason: string }>; nextCursor: string | null }>()).toMatchObject({
      nextCursor: null,
      history: [{ reason: 'four' }, { reason: 'five' }],
    });
    const bad = await runCli(['sessions', 'show', sessionId, '--limit', 'lots'], { env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--limit');
  });
});

describe('a NUL in a session id on the PostgreSQL store', async () => {
  const available = await postgresAvailable('the PostgreSQL NUL-id test');
  const database = postgresSchema('aptix_nul');
  let host: RunningHost | undefined;
  beforeAll(async () => {
    if (available) host = await startHost({ env: { APTIX_DB: database.db } });
  });
  afterAll(async () => {
    await host?.stop();
    if (available) await database.dispose();
  });

  it.skipIf(!available)('is "not found" (404), as on SQLite, not a 500', async () => {
    const created = await call(host!.url, '/v1/sessions', {});
    for (const id of ['%00', `${created.body.id}%00`, `%00${created.body.id}`]) {
      const read = await call(host!.url, `/v1/sessions/${id}`);
      expect(read.status).toBe(404);
      expect(read.body.error.code).toBe('SESSION_NOT_FOUND');
    }
    const change = await changeMode(host!.url, `${created.body.id}\u0000`, 'general', 'nul');
    expect(change.body.errors?.[0]?.code ?? change.body.error?.code).toBe('SESSION_NOT_FOUND');
  });
});

describe('a SQLite database the host cannot write', () => {
  const space = scratch();
  afterAll(() => space.cleanup());
  // Root may write any file: run the host as an unprivileged user then.
  const asUser = process.getuid?.() === 0 ? 65534 : undefined;

  function aptix(
    args: readonly string[],
    db: string,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const node = [process.execPath, BIN, ...args];
    const command =
      asUser === undefined ? node : ['setpriv', `--reuid=${asUser}`, `--regid=${asUser}`, '--clear-groups', ...node];
    const child = spawn(command[0]!, command.slice(1), {
      cwd: HOST_ROOT,
      env: { ...process.env, APTIX_DB: db, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  it('stops start-up with a message naming the file and the fix, instead of starting and failing every write', async () => {
    chmodSync(space.dir, 0o755);
    const folder = join(space.dir, 'read-only');
    mkdirSync(folder);
    if (asUser !== undefined) chownSync(folder, asUser, asUser);
    const db = `sqlite:${join(folder, 'aptix.db')}`;
    expect((await aptix(['sessions', 'create'], db)).code).toBe(0); // writable: the session is created
    chmodSync(folder, 0o555);
    const refused = await aptix(['sessions', 'create'], db);
    expect(refused.code).toBe(1);
    const output = refused.stdout + refused.stderr;
    expect(output).toContain('STARTUP');
    expect(output).toContain(join(folder, 'aptix.db'));
    expect(output).toContain('cannot be written');
  });
});

describe('a SQLite database locked by another process', () => {
  const space = scratch();
  let host: RunningHost;
  beforeAll(async () => {
    const config = join(space.dir, 'aptix.config.json');
    writeFileSync(config, JSON.stringify({ sessions: { sqliteBusyTimeoutMs: 1500 } }));
    host = await startHost({ env: { APTIX_DB: space.db, APTIX_CONFIG: config } });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('keeps /healthz answering while a write waits, then answers the write 503 DATABASE_LOCKED, without the file name', async () => {
    const other = new Database(space.db.slice('sqlite:'.length));
    other.exec('BEGIN EXCLUSIVE');
    try {
      let writeSettled = false;
      const write = call(host.url, '/v1/sessions', {}).finally(() => (writeSettled = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await call(host.url, '/healthz')).status).toBe(200);
      expect(writeSettled).toBe(false);
      const refused = await write;
      expect(refused.status).toBe(503);
      expect(refused.body.error).toEqual({
        code: 'DATABASE_LOCKED',
        message: expect.stringContaining('locked by another process'),
      });
      expect(refused.text).not.toContain(space.dir);
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect((await call(host.url, '/v1/sessions', {})).status).toBe(201);
  });
});

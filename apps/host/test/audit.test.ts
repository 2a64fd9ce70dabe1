/**
 * The audit trail through a real `aptix serve` (issue 34): every surface records calls of tools that are
 * not read-only, approval decisions and mode changes, with the principal (the key's name), the session,
 * a hash of the arguments (never the arguments), the outcome and the duration; GET /v1/audit pages them
 * for admins only, and `aptix audit` reads the same store from the command line.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ScriptedResponsesServer, call as modelCall, respond } from '@aptix/reasoner/testing';
import { canonicalJson } from '@aptix/tool-contract';
import { SqliteDatabase as Database } from '@aptix/agent-sessions/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLine, rawToolsCall, runCli, scratch, startHost, type RunningHost } from './support.js';

const OPS = 'ops-key-0123456789abcdef0123';
const AGENT = 'agent-key-0123456789abcdef012';
const APPROVER = 'approver-key-0123456789abcdef';
const sha = (args: unknown) => createHash('sha256').update(canonicalJson(args)).digest('hex');

interface Record_ {
  id: string;
  at: string;
  kind: string;
  principal: string | null;
  sessionId: string | null;
  tool: string;
  argumentsHash: string | null;
  outcome: string;
  durationMs: number | null;
  traceId: string | null;
  approvalId: string | null;
  decision: string | null;
  fromMode: string | null;
  toMode: string | null;
}

describe('the audit trail of a serving host', () => {
  const space = scratch();
  const configFile = join(space.dir, 'aptix.config.json');
  let host: RunningHost;
  let model: ScriptedResponsesServer;
  const env = () => ({ APTIX_CONFIG: configFile, APTIX_DB: space.db });

  beforeAll(async () => {
    model = await ScriptedResponsesServer.start();
    writeFileSync(
      configFile,
      JSON.stringify({
        apiKeys: [`ops=${OPS}`, `agent=${AGENT}`, `approver=${APPROVER}`],
        principals: { agent: { tools: ['*'] }, approver: { approve: true } },
        audit: { flushIntervalMs: 20 },
      }),
    );
    host = await startHost({
      env: { ...env(), OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key', APTIX_MODEL: 'scripted-model' },
    });
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    space.cleanup();
  });

  async function http(method: string, path: string, key: string, body?: unknown) {
    const response = await fetch(host.url + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  async function session(key = AGENT, mode = 'tool_diagnostics'): Promise<string> {
    return (await http('POST', '/v1/sessions', key, { mode })).body.id as string;
  }

  /** The records a filter selects, once `count` of them were written (they are written in batches, shortly after). */
  async function recorded(query: Record<string, string>, count: number): Promise<Record_[]> {
    for (let attempt = 0; attempt < 200; attempt++) {
      const page = await http('GET', `/v1/audit?${new URLSearchParams(query)}`, OPS);
      expect(page.status).toBe(200);
      if (page.body.records.length >= count) return page.body.records as Record_[];
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`fewer than ${count} audit records for ${JSON.stringify(query)}`);
  }

  it('records an HTTP call of a write tool with who, where, a hash of the arguments and the outcome, never the arguments', async () => {
    const sessionId = await session();
    const args = { orderId: 'SECRET-ORDER-25', amount: 25, currency: 'EUR' };
    const called = await http('POST', '/v1/tools/testing_issue_refund/invoke', AGENT, {
      arguments: args,
      context: { sessionId },
    });
    expect(called.body.successful).toBe(true);
    const [record] = await recorded({ sessionId }, 1);
    expect(record).toMatchObject({
      kind: 'tool_call',
      principal: 'agent',
      sessionId,
      tool: 'testing_issue_refund',
      argumentsHash: sha(args),
      outcome: 'OK',
      approvalId: null,
    });
    expect(record!.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(record)).not.toContain('SECRET-ORDER');
    // The same call with its keys in another order hashes alike.
    expect(sha({ currency: 'EUR', amount: 25, orderId: 'SECRET-ORDER-25' })).toBe(record!.argumentsHash);
    // A failed call is recorded with its code.
    await http('POST', '/v1/tools/testing_issue_refund/invoke', AGENT, {
      arguments: { orderId: 'x', amount: 'many', currency: 'EUR' },
      context: { sessionId },
    });
    const [failed] = await recorded({ sessionId, outcome: 'INVALID_ARGUMENTS' }, 1);
    expect(failed).toMatchObject({ principal: 'agent', tool: 'testing_issue_refund' });
  });

  it('leaves read-only calls out (APTIX_AUDIT=all records them: see below)', async () => {
    const sessionId = await session(AGENT, 'general');
    expect(
      (await http('POST', '/v1/tools/agent_list_modes/invoke', AGENT, { arguments: {}, context: { sessionId } }))
        .status,
    ).toBe(200);
    await http('POST', '/v1/tools/testing_calculator/invoke', AGENT, {
      arguments: { operation: 'add', a: 1, b: 2 },
      context: { sessionId },
    });
    // The calculator's record is written with (or after) the list's would have been.
    const records = await recorded({ sessionId }, 1);
    expect(records.map((r) => r.tool)).toEqual(['testing_calculator']);
  });

  it('records a call that waits for approval, the decision and who made it, and the approved call run', async () => {
    const sessionId = await session();
    const args = { orderId: 'A-5000', amount: 5000, currency: 'EUR' };
    const pending = await http('POST', '/v1/tools/testing_issue_refund/invoke', AGENT, {
      arguments: args,
      context: { sessionId },
    });
    expect(pending.status).toBe(202);
    const approvalId = pending.body.approvalId as string;
    // The principal that asked cannot decide (separation of duties): that attempt is recorded too.
    expect((await http('POST', `/v1/approvals/${approvalId}`, AGENT, { decision: 'approve' })).status).toBe(403);
    expect((await http('POST', `/v1/approvals/${approvalId}`, APPROVER, { decision: 'approve' })).status).toBe(200);
    const records = await recorded({ sessionId }, 4);
    expect(records.map((r) => [r.kind, r.principal, r.outcome, r.approvalId, r.decision])).toEqual([
      ['tool_call', 'agent', 'OK', approvalId, null],
      ['approval_decision', 'approver', 'APPROVED', approvalId, 'approve'],
      ['approval_decision', 'agent', 'SELF_APPROVAL', approvalId, 'approve'],
      ['tool_call', 'agent', 'PENDING_APPROVAL', approvalId, null],
    ]);
    expect(new Set(records.map((r) => r.argumentsHash))).toEqual(new Set([sha(args)]));
    const decisions = await recorded({ kind: 'approval_decision', principal: 'approver' }, 1);
    expect(decisions[0]).toMatchObject({ tool: 'testing_issue_refund', sessionId, decision: 'approve' });
  });

  it('records a mode change with the mode left and the mode entered', async () => {
    const sessionId = await session(AGENT, 'general');
    const changed = await http('POST', '/v1/tools/agent_change_mode/invoke', AGENT, {
      arguments: { mode: 'tool_diagnostics', branch: false, reason: 'The user wants to test tools.' },
      context: { sessionId },
    });
    expect(changed.body.successful).toBe(true);
    const [record] = await recorded({ sessionId, kind: 'mode_change' }, 1);
    expect(record).toMatchObject({
      tool: 'agent_change_mode',
      principal: 'agent',
      outcome: 'OK',
      fromMode: 'general',
      toMode: 'tool_diagnostics',
    });
  });

  it('records MCP calls on both revisions: a 2025 session (SDK path), the 2026-07-28 fast lane, and aptix_call_tool', async () => {
    const sessionId = await session();
    const legacy = new LegacyClient({ name: 'audit-2025', version: '1.0.0' });
    await legacy.connect(
      new LegacyTransport(new URL(`${host.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${AGENT}`, 'x-aptix-session-id': sessionId } },
      }),
    );
    try {
      const answer = await legacy.callTool({ name: 'testing_calculator', arguments: { operation: 'add', a: 1, b: 1 } });
      expect(answer.isError).toBeFalsy();
    } finally {
      await legacy.close();
    }
    const modern = await rawToolsCall(
      host.url,
      { name: 'testing_calculator', arguments: { operation: 'add', a: 2, b: 2 } },
      { path: '/mcp/modes/tool_diagnostics', key: AGENT },
    );
    expect(modern.result?.isError).toBeFalsy();
    const paired = await rawToolsCall(
      host.url,
      {
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'testing_calculator', arguments: { operation: 'add', a: 3, b: 3 } },
      },
      { key: AGENT },
    );
    expect(paired.result?.isError).toBeFalsy();
    const inSession = await recorded({ sessionId, tool: 'testing_calculator' }, 2);
    expect(inSession.map((r) => r.argumentsHash)).toEqual([
      sha({ operation: 'add', a: 3, b: 3 }),
      sha({ operation: 'add', a: 1, b: 1 }),
    ]);
    expect(inSession.every((r) => r.principal === 'agent' && r.outcome === 'OK')).toBe(true);
    const fast = await recorded({ tool: 'testing_calculator', principal: 'agent' }, 3);
    expect(fast.map((r) => r.argumentsHash)).toContain(sha({ operation: 'add', a: 2, b: 2 }));
  });

  it("records the agent loop's calls as the principal whose turn made them", async () => {
    const sessionId = await session(AGENT, 'general');
    model.script(
      respond(undefined, modelCall('call_1', 'testing_calculator', { operation: 'add', a: 2, b: 3 })),
      respond('5.'),
    );
    const turn = await http('POST', `/v1/sessions/${sessionId}/messages`, AGENT, { input: 'What is 2 + 3?' });
    expect(turn.status).toBe(200);
    const [record] = await recorded({ sessionId }, 1);
    expect(record).toMatchObject({
      kind: 'tool_call',
      principal: 'agent',
      tool: 'testing_calculator',
      outcome: 'OK',
      argumentsHash: sha({ operation: 'add', a: 2, b: 3 }),
    });
  });

  it('GET /v1/audit: admins only, keyset pages without repeats, and clear refusals of odd filters and cursors', async () => {
    const sessionId = await session();
    for (let i = 0; i < 7; i++)
      await http('POST', '/v1/tools/testing_calculator/invoke', AGENT, {
        arguments: { operation: 'add', a: i, b: 100 },
        context: { sessionId },
      });
    await recorded({ sessionId }, 7);
    const forbidden = await http('GET', '/v1/audit', AGENT);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('FORBIDDEN');
    expect((await http('GET', '/v1/audit/1', APPROVER)).status).toBe(403);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: any } = await http(
        'GET',
        `/v1/audit?sessionId=${sessionId}&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
        OPS,
      );
      expect(page.body.records.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.records.map((r: Record_) => r.id));
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    const one = await http('GET', `/v1/audit/${seen[0]}`, OPS);
    expect(one.body).toMatchObject({ id: seen[0], sessionId, tool: 'testing_calculator' });
    expect((await http('GET', '/v1/audit/999999999999', OPS)).body.error.code).toBe('AUDIT_RECORD_NOT_FOUND');

    const refusals: Array<[string, string, RegExp]> = [
      ['cursor=abc', 'INVALID_ARGUMENT', /is not a cursor this store gave out/],
      ['cursor=1%27%20OR%20%271%27%3D%271', 'INVALID_ARGUMENT', /is not a cursor/],
      ['since=yesterday', 'INVALID_ARGUMENT', /since "yesterday" is not a time/],
      [`tool=${'t'.repeat(300)}`, 'BAD_REQUEST', /tool/],
      ['limit=0', 'BAD_REQUEST', /limit/],
      ['kind=drop_table', 'BAD_REQUEST', /kind/],
    ];
    for (const [query, code, message] of refusals) {
      const refused = await http('GET', `/v1/audit?${query}`, OPS);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.code, query).toBe(code);
      expect(refused.body.error.message, query).toMatch(message);
    }
    const injected = await http('GET', `/v1/audit?tool=${encodeURIComponent("x' OR '1'='1")}`, OPS);
    expect(injected.body.records).toEqual([]);
    // The routes are in the OpenAPI document like the others, with the record's fields.
    const spec = await http('GET', '/openapi.json', OPS);
    expect(Object.keys(spec.body.paths)).toEqual(expect.arrayContaining(['/v1/audit', '/v1/audit/{id}']));
    const listed = spec.body.paths['/v1/audit'].get;
    expect(listed.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining([
        'tool',
        'principal',
        'sessionId',
        'outcome',
        'kind',
        'since',
        'until',
        'limit',
        'cursor',
      ]),
    );
    expect(
      Object.keys(spec.body.paths['/v1/audit/{id}'].get.responses['200'].content['application/json'].schema.properties),
    ).toEqual(
      expect.arrayContaining(['principal', 'sessionId', 'tool', 'argumentsHash', 'outcome', 'durationMs', 'traceId']),
    );
  });

  it('aptix audit reads the same trail from the store: JSON, a table, one record, and refusals', async () => {
    const sessionId = await session();
    await http('POST', '/v1/tools/testing_issue_refund/invoke', AGENT, {
      arguments: { orderId: 'cli-1', amount: 3, currency: 'EUR' },
      context: { sessionId },
    });
    const [record] = await recorded({ sessionId }, 1);
    const listed = await runCli(['audit', '--session', sessionId, '--json'], { env: env() });
    expect(listed.code).toBe(0);
    expect(listed.json<{ records: Record_[]; nextCursor: string | null }>()).toEqual({
      records: [record],
      nextCursor: null,
    });
    const filtered = await runCli(['audit', '--principal', 'agent', '--tool', 'testing_issue_refund', '--limit', '1'], {
      env: env(),
    });
    const page = filtered.json<{ records: Record_[]; nextCursor: string }>();
    expect(page.records).toHaveLength(1);
    const older = await runCli(['audit', '--principal', 'agent', '--cursor', page.nextCursor, '--limit', '1'], {
      env: env(),
    });
    expect(older.json<{ records: Record_[] }>().records[0]!.id).not.toBe(page.records[0]!.id);
    const shown = await runCli(['audit', record!.id], { env: env() });
    expect(shown.json()).toEqual(record);
    const missing = await runCli(['audit', '424242424242'], { env: env() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
    const bad = await runCli(['audit', '--cursor', "1' OR 1=1"], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a cursor this store gave out');
  });
});

describe('the audit trail when the host stops', () => {
  it('writes every record still waiting when the host stops gracefully; APTIX_AUDIT=all and off', async () => {
    const space = scratch();
    // Records would wait a minute: only the graceful stop writes them.
    const { host } = await startHostWithLongFlush(space);
    try {
      const { id } = (await (
        await fetch(`${host.url}/v1/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ mode: 'tool_diagnostics' }),
        })
      ).json()) as { id: string };
      for (let i = 0; i < 5; i++)
        await fetch(`${host.url}/v1/tools/testing_calculator/invoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ arguments: { operation: 'add', a: i, b: 200 }, context: { sessionId: id } }),
        });
      expect(await host.stop()).toBe(0);
      const listed = await runCli(['audit', '--session', id], { env: { APTIX_DB: space.db } });
      expect(listed.json<{ records: Record_[] }>().records.map((r) => r.principal === null && r.outcome)).toEqual(
        Array(5).fill('OK'),
      );
      // APTIX_AUDIT=all records read-only calls too.
      const all = await startHost({ env: { APTIX_DB: space.db, APTIX_AUDIT: 'all' } });
      await fetch(`${all.url}/v1/tools/agent_list_modes/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: {} }),
      });
      expect(await all.stop()).toBe(0);
      const readOnly = await runCli(['audit', '--tool', 'agent_list_modes'], { env: { APTIX_DB: space.db } });
      expect(readOnly.json<{ records: Record_[] }>().records).toHaveLength(1);
      // APTIX_AUDIT=off records nothing.
      const off = await startHost({ env: { APTIX_DB: space.db, APTIX_AUDIT: 'off' } });
      await fetch(`${off.url}/v1/tools/testing_calculator/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { operation: 'add', a: 0, b: 300 } }),
      });
      expect(await off.stop()).toBe(0);
      const pings = await runCli(['audit', '--tool', 'testing_calculator', '--json'], { env: { APTIX_DB: space.db } });
      expect(pings.json<{ records: Record_[] }>().records).toHaveLength(5);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});

async function startHostWithLongFlush(space: ReturnType<typeof scratch>): Promise<{ host: RunningHost }> {
  const file = join(space.dir, 'aptix.config.json');
  writeFileSync(file, JSON.stringify({ audit: { flushIntervalMs: 60_000 } }));
  return { host: await startHost({ env: { APTIX_CONFIG: file, APTIX_DB: space.db } }) };
}

describe('the audit trail past its retention', () => {
  it('prunes on a serving host what the configured retention no longer keeps', async () => {
    const space = scratch();
    const file = join(space.dir, 'aptix.config.json');
    writeFileSync(file, JSON.stringify({ audit: { maxRecords: 3, pruneIntervalMs: 1000, flushIntervalMs: 10 } }));
    const host = await startHost({ env: { APTIX_CONFIG: file, APTIX_DB: space.db } });
    try {
      for (let i = 0; i < 8; i++)
        await fetch(`${host.url}/v1/tools/testing_calculator/invoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ arguments: { operation: 'add', a: i, b: 400 } }),
        });
      const pruned = await logLine(host, (entry) => String(entry.msg).includes('audit records past the retention'));
      expect(pruned.removed).toBeGreaterThanOrEqual(1);
      // A prune may have run while the calls were still being written: the next one (within a second) catches up.
      let left: { records: Record_[] } = { records: [] };
      for (let attempt = 0; attempt < 100; attempt++) {
        left = (await (await fetch(`${host.url}/v1/audit`)).json()) as { records: Record_[] };
        if (left.records.length <= 3) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(left.records).toHaveLength(3);
      // The newest are the ones kept.
      expect(left.records[0]!.argumentsHash).toBe(sha({ operation: 'add', a: 7, b: 400 }));
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});

describe('the audit trail when its store fails', () => {
  it('answers every call as usual and logs that the records could not be written', async () => {
    const space = scratch();
    const host = await startHost({ env: { APTIX_DB: space.db } });
    try {
      // Another process breaks the trail's table under the running host.
      const db = new Database(space.db.slice('sqlite:'.length));
      db.exec('DROP TABLE agent_audit_records');
      db.close();
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${host.url}/v1/tools/testing_calculator/invoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ arguments: { operation: 'add', a: i, b: 500 } }),
        });
        expect(response.status).toBe(200);
        expect(((await response.json()) as { successful: boolean }).successful).toBe(true);
      }
      const logged = await logLine(host, (entry) => String(entry.msg).includes('audit records failed'));
      expect(logged.level).toBe(50);
      expect(logged.msg).toMatch(/they are kept and written with the next batch/);
      expect(await host.stop()).toBe(0);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});

/**
 * Approval gates through real `aptix` processes, on SQLite and on PostgreSQL: a gated call waits,
 * a person decides over HTTP or the CLI, and an approved call runs exactly once, across hosts and
 * restarts. Executions are counted by the tool itself: testing_issue_refund logs one line per refund.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSessionStore } from '@aptix/agent-sessions/open';
import type { AgentSessionStore } from '@aptix/agent-sessions';
import { loadModeCatalog } from '@aptix/tool-mode-catalog';
import { runCli, scratch, startHost, type RunningHost } from './support.js';
import { storeBackends } from './suites.js';

const REFUNDED = '[testing_issue_refund_Refunded]';
const refundsIn = (...hosts: RunningHost[]) =>
  hosts.reduce((sum, host) => sum + host.logs.filter((line) => line.tag === REFUNDED).length, 0);

async function call(
  host: RunningHost,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const response = await fetch(host.url + path, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const backends = await storeBackends('aptix_approvals', 'the approval-gate tests on PostgreSQL are');

describe.each(backends)('approval gates on $name', (backend) => {
  const database = backend.setup();
  const dir = scratch();
  const configFile = join(dir.dir, 'aptix.config.json');
  // Short expiry and sweep so that expiry and a stopped host's leftovers are seen within a test.
  writeFileSync(
    configFile,
    JSON.stringify({ db: database.db, approvals: { ttlMs: 60_000, sweepIntervalMs: 100, orphanAfterMs: 300 } }),
  );
  const env = { APTIX_CONFIG: configFile };
  let a: RunningHost;
  let b: RunningHost;
  let store: AgentSessionStore;

  beforeAll(async () => {
    [a, b] = await Promise.all([startHost({ env }), startHost({ env })]);
    store = await openSessionStore(database.db.replace(/[?&]schema=[^&]+/, ''), {
      modes: await loadModeCatalog(),
      ...(/schema=([^&]+)/.exec(database.db) ? { postgres: { schema: /schema=([^&]+)/.exec(database.db)![1]! } } : {}),
    });
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await store?.close();
    await database.dispose();
    dir.cleanup();
  });

  async function session(): Promise<string> {
    return (await call(a, 'POST', '/v1/sessions', { mode: 'tool_diagnostics' })).body.id as string;
  }
  const refund = (amount: number) => ({ arguments: { orderId: `A-${amount}`, amount, currency: 'EUR' } });

  it('runs a call under the threshold at once, and makes one over it wait for a person, running nothing', async () => {
    const sessionId = await session();
    const before = refundsIn(a, b);
    const small = await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', {
      ...refund(25),
      context: { sessionId },
    });
    expect(small).toMatchObject({
      status: 200,
      body: { successful: true, result: { status: 'refunded', amount: 25 } },
    });
    await until(
      async () => refundsIn(a, b),
      (n) => n === before + 1,
      'the small refund to be logged',
    );

    const large = await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', {
      ...refund(5000),
      context: { sessionId },
    });
    expect(large.status).toBe(202);
    expect(large.body).toMatchObject({
      status: 'pending_approval',
      toolName: 'testing_issue_refund',
      sessionId,
      reason: expect.stringContaining('over 100 EUR'),
    });
    expect(large.body.message).toContain(`POST /v1/approvals/${large.body.approvalId}`);
    const listed = await call(b, 'GET', `/v1/approvals?sessionId=${sessionId}&status=pending`);
    expect(listed.body.approvals).toEqual([
      expect.objectContaining({
        id: large.body.approvalId,
        arguments: { orderId: 'A-5000', amount: 5000, currency: 'EUR' },
        status: 'pending',
      }),
    ]);
    expect(refundsIn(a, b)).toBe(before + 1);
  });

  it('never asks a person about a call whose arguments are invalid', async () => {
    const sessionId = await session();
    const invalid = await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', {
      arguments: { orderId: 'A-1', amount: '5000', currency: 'EUR' },
      context: { sessionId },
    });
    expect(invalid).toMatchObject({
      status: 200,
      body: { successful: false, errors: [{ code: 'INVALID_ARGUMENTS' }] },
    });
    expect(invalid.body.errors[0].message).toContain("'amount'");
    expect((await call(a, 'GET', `/v1/approvals?sessionId=${sessionId}`)).body.approvals).toEqual([]);
  });

  it('lets two hosts race to approve one call: it runs exactly once, and the loser is told who won', async () => {
    const sessionId = await session();
    const { approvalId } = (
      await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', { ...refund(700), context: { sessionId } })
    ).body;
    const before = refundsIn(a, b);
    const answers = await Promise.all([
      call(a, 'POST', `/v1/approvals/${approvalId}`, { decision: 'approve' }),
      call(b, 'POST', `/v1/approvals/${approvalId}`, { decision: 'approve' }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const won = answers.find((answer) => answer.status === 200)!.body;
    expect(won).toMatchObject({
      id: approvalId,
      status: 'executed',
      result: { successful: true, result: { orderId: 'A-700', amount: 700, status: 'refunded' } },
    });
    const lost = answers.find((answer) => answer.status === 409)!.body;
    expect(lost.error).toMatchObject({ code: 'APPROVAL_ALREADY_DECIDED' });
    expect(lost.error.message).toContain('Nothing changed');
    await until(
      async () => refundsIn(a, b),
      (n) => n >= before + 1,
      'the approved refund to be logged',
    );
    await new Promise((resolve) => setTimeout(resolve, 400)); // a sweep or two: nothing may run it again
    expect(refundsIn(a, b)).toBe(before + 1);
    expect((await call(b, 'GET', `/v1/approvals/${approvalId}`)).body).toMatchObject({
      status: 'executed',
      result: { successful: true },
    });
  });

  it('stores a denial with its note, runs nothing, and refuses a later approval', async () => {
    const sessionId = await session();
    const { approvalId } = (
      await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', { ...refund(900), context: { sessionId } })
    ).body;
    const before = refundsIn(a, b);
    const denied = await call(b, 'POST', `/v1/approvals/${approvalId}`, {
      decision: 'deny',
      note: 'Order was never delivered to us.',
    });
    expect(denied).toMatchObject({
      status: 200,
      body: { status: 'denied', note: 'Order was never delivered to us.', result: null },
    });
    const late = await call(a, 'POST', `/v1/approvals/${approvalId}`, { decision: 'approve' });
    expect(late).toMatchObject({
      status: 409,
      body: { error: { code: 'APPROVAL_ALREADY_DECIDED' }, approval: { status: 'denied' } },
    });
    expect(refundsIn(a, b)).toBe(before);
  });

  it('re-checks the mode when an approved call runs: a session that moved on refuses it, and the refusal is recorded', async () => {
    const sessionId = await session();
    const { approvalId } = (
      await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', { ...refund(300), context: { sessionId } })
    ).body;
    await call(a, 'POST', '/v1/tools/agent_change_mode/invoke', {
      arguments: { mode: 'general', branch: false, reason: 'Done with diagnostics.' },
      context: { sessionId },
    });
    const before = refundsIn(a, b);
    const approved = await call(b, 'POST', `/v1/approvals/${approvalId}`, { decision: 'approve' });
    expect(approved).toMatchObject({
      status: 200,
      body: { status: 'refused', result: { successful: false, errors: [{ code: 'TOOL_NOT_IN_MODE' }] } },
    });
    expect(approved.body.result.errors[0].message).toContain('The approved call did not run.');
    expect(refundsIn(a, b)).toBe(before);
  });

  it('runs, exactly once, a call approved by a host that stopped before running it', async () => {
    const sessionId = await session();
    const { approvalId } = (
      await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', { ...refund(450), context: { sessionId } })
    ).body;
    const before = refundsIn(a, b);
    // The decision is committed, as a host's would be, and that host is gone before it claims the call.
    expect((await store.approvals.decide(approvalId, 'approve', 'ops', null)).kind).toBe('decided');
    const done = await until(
      () => store.approvals.get(approvalId),
      (approval) => approval?.status === 'executed',
      'a sweep to run the orphaned approval',
    );
    expect(done).toMatchObject({ decidedBy: 'ops', result: { successful: true, result: { orderId: 'A-450' } } });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(refundsIn(a, b)).toBe(before + 1);
  });

  it('records a call whose host stopped while it ran as outcome unknown, and never runs it again', async () => {
    const sessionId = await session();
    const { approvalId } = (
      await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', { ...refund(650), context: { sessionId } })
    ).body;
    await store.approvals.decide(approvalId, 'approve', 'ops', null);
    // Claimed by a host that then died mid-call.
    expect(await store.approvals.claim(approvalId, 'a-host-that-died')).toBeDefined();
    const before = refundsIn(a, b);
    // The hosts' sweep waits for the longest call (30 s) before it may conclude the host died: do what it does after that.
    const abandoned = await store.approvals.abandonStale(0);
    expect(abandoned.map((approval) => approval.id)).toContain(approvalId);
    const after = (await call(b, 'GET', `/v1/approvals/${approvalId}`)).body;
    expect(after).toMatchObject({
      status: 'outcome_unknown',
      result: { successful: false, errors: [{ code: 'OUTCOME_UNKNOWN' }] },
    });
    expect(after.result.errors[0].message).toContain('It was not run again');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(refundsIn(a, b)).toBe(before);
  });

  it('decides from the command line: list, approve with the result printed, deny', async () => {
    const sessionId = await session();
    const first = (
      await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', { ...refund(120), context: { sessionId } })
    ).body.approvalId as string;
    const second = (
      await call(a, 'POST', '/v1/tools/testing_issue_refund/invoke', { ...refund(130), context: { sessionId } })
    ).body.approvalId as string;
    const list = await runCli(['approvals', 'list', '--session', sessionId], { env });
    expect(list.code).toBe(0);
    expect(
      list
        .json<{ approvals: Array<{ id: string }> }>()
        .approvals.map((approval) => approval.id)
        .sort(),
    ).toEqual([first, second].sort());
    const approved = await runCli(['approvals', 'approve', first, '--note', 'ok'], { env });
    expect(approved.code).toBe(0);
    expect(approved.json()).toMatchObject({
      id: first,
      status: 'executed',
      decidedBy: expect.stringMatching(/^cli/),
      result: { successful: true, result: { orderId: 'A-120' } },
    });
    const denied = await runCli(['approvals', 'deny', second, '--note', 'duplicate'], { env });
    expect(denied.json()).toMatchObject({ id: second, status: 'denied', note: 'duplicate' });
    const again = await runCli(['approvals', 'approve', second], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`Approval ${second} was already decided`);
    const missing = await runCli(['approvals', 'show', 'no-such-id'], { env });
    expect(missing.stderr).toContain('Approval "no-such-id" does not exist');
  }, 120_000);

  it('lists the policy beside the tool definitions, and on the tool itself', async () => {
    const listing = await call(a, 'GET', '/v1/tools?mode=tool_diagnostics');
    expect(listing.body.approvals).toEqual({ testing_issue_refund: 'dynamic' });
    expect((await call(a, 'GET', '/v1/tools/testing_issue_refund')).body).toMatchObject({
      approval: 'dynamic',
      definitions: { mcp: { _meta: { 'aptix/approval': 'dynamic' } } },
    });
    expect((await call(a, 'GET', '/v1/tools/testing_calculator')).body.approval).toBe('never');
  });
});

describe('approval expiry', () => {
  const dir = scratch();
  const configFile = join(dir.dir, 'aptix.config.json');
  writeFileSync(configFile, JSON.stringify({ db: dir.db, approvals: { ttlMs: 1000, sweepIntervalMs: 100 } }));
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({ env: { APTIX_CONFIG: configFile } });
  });
  afterAll(async () => {
    await host?.stop();
    dir.cleanup();
  });

  it('expires a call nobody decided in time; a late decision is refused and nothing runs', async () => {
    const { approvalId } = (
      await call(host, 'POST', '/v1/tools/testing_issue_refund/invoke', {
        arguments: { orderId: 'A-9', amount: 999, currency: 'GBP' },
      })
    ).body;
    await until(
      async () => (await call(host, 'GET', `/v1/approvals/${approvalId}`)).body.status,
      (status) => status === 'expired',
      'the approval to expire',
    );
    const late = await call(host, 'POST', `/v1/approvals/${approvalId}`, { decision: 'approve' });
    expect(late).toMatchObject({
      status: 410,
      body: { error: { code: 'APPROVAL_EXPIRED' }, approval: { status: 'expired' } },
    });
    expect(refundsIn(host)).toBe(0);
  });
});

describe('who decides, on a host with named API keys', () => {
  const dir = scratch();
  const KEYS = { ops: 'ops-key-0123456789abcdef0123', agent: 'agent-key-0123456789abcdef012' };
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({ env: { APTIX_DB: dir.db, APTIX_API_KEYS: `ops=${KEYS.ops},agent=${KEYS.agent}` } });
  });
  afterAll(async () => {
    await host?.stop();
    dir.cleanup();
  });

  it('records the name of the key that asked and of the key that decided, never a key', async () => {
    const as = (key: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });
    const asked = await fetch(`${host.url}/v1/tools/testing_issue_refund/invoke`, {
      method: 'POST',
      headers: as(KEYS.agent),
      body: JSON.stringify({ arguments: { orderId: 'K-1', amount: 800, currency: 'EUR' } }),
    });
    const { approvalId } = (await asked.json()) as { approvalId: string };
    const decided = await fetch(`${host.url}/v1/approvals/${approvalId}`, {
      method: 'POST',
      headers: as(KEYS.ops),
      body: JSON.stringify({ decision: 'approve' }),
    });
    const approval = (await decided.json()) as Record<string, unknown>;
    expect(approval).toMatchObject({ requestedBy: 'agent', decidedBy: 'ops', status: 'executed' });
    expect(JSON.stringify(approval)).not.toContain(KEYS.ops);
    expect(JSON.stringify(host.logs)).not.toContain(KEYS.ops);
    const anonymous = await fetch(`${host.url}/v1/approvals/${approvalId}`);
    expect(anonymous.status).toBe(401);
  });
});

describe('the approval routes under odd and oversized input', () => {
  const dir = scratch();
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({ env: { APTIX_DB: dir.db } });
  });
  afterAll(async () => {
    await host?.stop();
    dir.cleanup();
  });

  it('refuses odd decisions, oversized notes and ids, unknown fields and statuses with a clear 4xx, deciding nothing', async () => {
    const { approvalId } = (
      await call(host, 'POST', '/v1/tools/testing_issue_refund/invoke', {
        arguments: { orderId: 'Z-1', amount: 700, currency: 'EUR' },
      })
    ).body;
    for (const body of [
      { decision: 'APPROVE' },
      { decision: 'yes' },
      {},
      { decision: 'approve', note: 'x'.repeat(5000) },
      { decision: 'approve', by: 'me' },
    ]) {
      const answer = await call(host, 'POST', `/v1/approvals/${approvalId}`, body);
      expect(answer.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(answer.body.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    }
    expect((await call(host, 'GET', `/v1/approvals/${approvalId}`)).body.status).toBe('pending');
    expect((await call(host, 'GET', `/v1/approvals/${'a'.repeat(500)}`)).status).toBe(414);
    expect((await call(host, 'GET', '/v1/approvals/nul%00id')).status).toBe(404);
    expect((await call(host, 'GET', '/v1/approvals?status=PENDING')).status).toBe(400);
    expect((await call(host, 'GET', '/v1/approvals?limit=100000')).status).toBe(400);
    // Without a model the resume route says what to set, before it looks at the session.
    expect((await call(host, 'POST', '/v1/sessions/no-such-session/resume')).body.error.code).toBe(
      'MODEL_NOT_CONFIGURED',
    );
  });
});

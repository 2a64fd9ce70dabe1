/**
 * Approval gates over MCP: a client that can ask its user is asked, and the user's answer decides the
 * stored approval (one execution, recorded as decided by the API key's name via MCP elicitation).
 * 2026-07-28 through the v2 SDK client (input_required + an HMAC-sealed requestState), 2025 through the
 * v1 SDK client (elicitation/create). Executions are counted by the tool itself (one log line per refund).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, HOST_ROOT, runCli, scratch, startHost, startHostWithConfig, type RunningHost } from './support.js';
import { storeBackends } from './suites.js';

const REFUNDED = '[testing_issue_refund_Refunded]';
const KEY = 'ops-key-0123456789abcdef';
const STATE_KEY = 'a-shared-request-state-key-for-every-host-0123456789';
const auth = { authorization: `Bearer ${KEY}` };
const refunds = (...hosts: RunningHost[]) =>
  hosts.reduce((sum, host) => sum + host.logs.filter((line) => line.tag === REFUNDED).length, 0);
/** The refunds the tools logged since `before`, once the log lines have arrived (they come on another pipe than the answer). */
async function refundedSince(before: number, expected: number, ...hosts: RunningHost[]): Promise<number> {
  for (let attempt = 0; attempt < 40 && refunds(...hosts) - before < expected; attempt++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 100));
  return refunds(...hosts) - before;
}
let orders = 0;
const bigRefund = () => ({ orderId: `MCP-${++orders}`, amount: 5000, currency: 'EUR' });

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };

async function modernClient(url: string, answer?: (message: string) => Answer): Promise<Client> {
  const client = new Client(
    { name: 'aptix-approvals-v2', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' }, ...(answer ? { capabilities: { elicitation: { form: {} } } } : {}) },
  );
  if (answer)
    client.setRequestHandler(
      'elicitation/create',
      async (request) => answer((request.params as { message: string }).message) as never,
    );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp/modes/tool_diagnostics`), { requestInit: { headers: auth } }),
  );
  return client;
}

async function legacyClient(
  url: string,
  agentSessionId: string,
  answer?: (message: string) => Answer | Promise<Answer>,
): Promise<LegacyClient> {
  const client = new LegacyClient(
    { name: 'aptix-approvals-v1', version: '1.0.0' },
    answer ? { capabilities: { elicitation: {} } } : {},
  );
  if (answer)
    client.setRequestHandler(ElicitRequestSchema, async (request) => (await answer(request.params.message)) as never);
  await client.connect(
    new LegacyTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { ...auth, 'x-aptix-session-id': agentSessionId } },
    }),
  );
  return client;
}

/** One raw 2026-07-28 tools/call, so a test can hold, alter and replay the requestState. */
async function rawCall(
  url: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = { elicitation: { form: {} } },
  key = KEY,
): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const response = await fetch(`${url}/mcp/modes/tool_diagnostics`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  const json = text.startsWith('{')
    ? JSON.parse(text)
    : JSON.parse(
        text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5))
          .pop()!,
      );
  return json;
}

async function approval(host: RunningHost, id: string): Promise<any> {
  return (await fetch(`${host.url}/v1/approvals/${id}`, { headers: auth })).json();
}

const text = (result: object) =>
  (((result as { content?: unknown }).content as Array<{ text?: string }>) ?? [])
    .map((block) => block.text ?? '')
    .join('\n');

const backends = await storeBackends('aptix_mcp_approvals', 'the MCP approval tests on PostgreSQL are');

/**
 * These hosts let the principal that asked for a refund decide it through its own client, for the
 * elicitation round trips to be tested: by default the one that asked never decides (separation of
 * duties, permissions.test.ts), and its client is not asked at all.
 */
const selfApproval = scratch();
const SELF_APPROVAL_CONFIG = join(selfApproval.dir, 'aptix.config.json');
writeFileSync(SELF_APPROVAL_CONFIG, JSON.stringify({ approvals: { allowSelfApproval: ['testing_issue_refund'] } }));
afterAll(() => selfApproval.cleanup());

describe.each(backends)('approval gates over MCP, on $name', (backend) => {
  const database = backend.setup();
  const env = {
    APTIX_DB: database.db,
    APTIX_API_KEYS: `ops=${KEY},auditor=auditor-key-0123456789abcdef`,
    APTIX_MCP_STATE_KEY: STATE_KEY,
  };
  let a: RunningHost;
  let b: RunningHost;
  let stranger: RunningHost;

  beforeAll(async () => {
    const args = ['--config', SELF_APPROVAL_CONFIG];
    [a, b, stranger] = await Promise.all([
      startHost({ env, args }),
      startHost({ env, args }),
      startHost({ env: { ...env, APTIX_MCP_STATE_KEY: 'another-key-that-no-other-host-shares-0123456789' }, args }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), stranger?.stop()]);
    await database.dispose();
  });

  describe('2026-07-28 (v2 SDK client, input_required)', () => {
    it("asks the user, and an approval runs the call once with the result; who decided is the key's name via MCP elicitation", async () => {
      const asked: string[] = [];
      const client = await modernClient(
        a.url,
        (message) => (
          asked.push(message),
          { action: 'accept', content: { decision: 'approve', note: 'checked the order' } }
        ),
      );
      const before = refunds(a, b);
      const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      await client.close();
      expect(result.isError ?? false).toBe(false);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(/testing_issue_refund.*over 100 EUR/s);
      expect(asked[0]).toContain('"amount":5000');
      const { approvalId, status, decidedBy } = (result._meta as any)['aptix/approval'];
      expect({ status, decidedBy }).toEqual({ status: 'executed', decidedBy: 'ops via MCP elicitation' });
      const stored = await approval(a, approvalId);
      expect(stored).toMatchObject({
        status: 'executed',
        decidedBy: 'ops via MCP elicitation',
        requestedBy: 'ops',
        note: 'checked the order',
      });
      expect(text(result)).toBe(JSON.stringify(stored.result.result));
      expect(await refundedSince(before, 1, a, b)).toBe(1);
    });

    it('records a denial with its note; nothing runs, and the caller reads that the person declined', async () => {
      const client = await modernClient(a.url, () => ({
        action: 'accept',
        content: { decision: 'deny', note: 'too much' },
      }));
      const before = refunds(a, b);
      const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      await client.close();
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('declined it, so it did not run. Their note: "too much"');
      expect(await approval(a, (result._meta as any)['aptix/approval'].approvalId)).toMatchObject({
        status: 'denied',
        decidedBy: 'ops via MCP elicitation',
      });
      expect(refunds(a, b)).toBe(before);
    });

    it('a dismissed form decides nothing: the approval stays pending and the answer says where to decide', async () => {
      const client = await modernClient(a.url, () => ({ action: 'cancel' }));
      const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      await client.close();
      expect(text(result)).toMatch(/dismissed.*awaits a person's approval/s);
      expect(await approval(a, (result._meta as any)['aptix/approval'].approvalId)).toMatchObject({
        status: 'pending',
      });
    });

    it("a client without the elicitation capability gets today's pending_approval answer", async () => {
      const client = await modernClient(a.url);
      const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      await client.close();
      expect((result._meta as any)['aptix/approval'].status).toBe('pending_approval');
      expect(text(result)).toContain('POST /v1/approvals/');
    });

    it('a requestState continues on another host with the shared key, and a replay of it is refused with nothing run again', async () => {
      const args = bigRefund();
      const first = await rawCall(a.url, { name: 'testing_issue_refund', arguments: args });
      expect(first.result.resultType).toBe('input_required');
      expect(first.result.inputRequests.approval.method).toBe('elicitation/create');
      const { requestState } = first.result;
      const before = refunds(a, b);
      const answer = { approval: { action: 'accept', content: { decision: 'approve' } } };
      const second = await rawCall(b.url, {
        name: 'testing_issue_refund',
        arguments: args,
        inputResponses: answer,
        requestState,
      });
      expect(second.result._meta['aptix/approval'].status).toBe('executed');
      expect(await refundedSince(before, 1, a, b)).toBe(1);
      const replay = await rawCall(a.url, {
        name: 'testing_issue_refund',
        arguments: args,
        inputResponses: answer,
        requestState,
      });
      expect(replay.error?.code).toBe(-32602);
      expect(replay.error?.message).toMatch(
        /already used: approval .* was decided by ops via MCP elicitation .* Nothing ran again/,
      );
      expect(await refundedSince(before, 1, a, b)).toBe(1);
    });

    it('refuses a tampered requestState, one sealed under another key, or one used for other arguments, another key or another tool', async () => {
      const args = bigRefund();
      const { requestState, inputRequests } = (await rawCall(a.url, { name: 'testing_issue_refund', arguments: args }))
        .result;
      expect(Object.keys(inputRequests)).toEqual(['approval']);
      const answer = { approval: { action: 'accept', content: { decision: 'approve' } } };
      const [body, mac] = [
        requestState.slice(0, requestState.lastIndexOf('.')),
        requestState.slice(requestState.lastIndexOf('.') + 1),
      ];
      // Flip the approval id inside the signed body: the MAC no longer matches.
      const decoded = JSON.parse(Buffer.from(body.slice(3), 'base64url').toString());
      decoded.p.a = '00000000-0000-0000-0000-000000000000';
      const forged = `v1.${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${mac}`;
      const cases: Array<[string, Record<string, unknown>, string, RunningHost, string?]> = [
        ['appended bytes', { arguments: args, requestState: `${requestState}-TAMPERED` }, 'integrity check', a],
        ['a forged body', { arguments: args, requestState: forged }, 'integrity check', a],
        ['garbage', { arguments: args, requestState: 'not-a-state' }, 'not one this host minted', a],
        ['a host with another key', { arguments: args, requestState }, 'integrity check', stranger],
        ['other arguments', { arguments: { ...args, amount: 6000 }, requestState }, 'the arguments differ', a],
        [
          'another API key',
          { arguments: args, requestState },
          'issued to another API key',
          a,
          'auditor-key-0123456789abcdef',
        ],
        ['another tool', { name: 'testing_echo', arguments: { message: 'x' }, requestState }, 'testing_echo', a],
      ];
      const before = refunds(a, b, stranger);
      for (const [what, params, expected, host, key] of cases) {
        const answered = await rawCall(
          host.url,
          { name: 'testing_issue_refund', ...params, inputResponses: answer },
          undefined,
          key,
        );
        expect(answered.error?.code, what).toBe(-32602);
        expect(answered.error?.message, what).toContain(expected);
      }
      expect(refunds(a, b, stranger)).toBe(before);
      const id = JSON.parse(Buffer.from(body.slice(3), 'base64url').toString()).p.a as string;
      expect((await approval(a, id)).status).toBe('pending');
    });

    it('refuses an expired requestState (it lives as long as an approval) and runs nothing', async () => {
      const { host, space: short } = await startHostWithConfig(
        { approvals: { ttlMs: 1000, allowSelfApproval: ['testing_issue_refund'] } },
        { APTIX_API_KEYS: `ops=${KEY}` },
      );
      try {
        const args = bigRefund();
        const { requestState } = (await rawCall(host.url, { name: 'testing_issue_refund', arguments: args })).result;
        await new Promise((resolve) => setTimeout(resolve, 2100));
        const late = await rawCall(host.url, {
          name: 'testing_issue_refund',
          arguments: args,
          requestState,
          inputResponses: { approval: { action: 'accept', content: { decision: 'approve' } } },
        });
        expect(late.error?.code).toBe(-32602);
        expect(late.error?.message).toContain('The requestState has expired. Call the tool again');
        expect(refunds(host)).toBe(0);
      } finally {
        await host.stop();
        short.cleanup();
      }
    });

    it('asks again, with the same state, when the answer is missing, malformed or not a decision; extra keys are ignored', async () => {
      const args = bigRefund();
      const { requestState } = (await rawCall(a.url, { name: 'testing_issue_refund', arguments: args })).result;
      for (const inputResponses of [
        {},
        { wrong: { action: 'accept', content: { decision: 'approve' } } },
        { approval: { action: 'accept', content: { decision: 'yes please' } } },
        { approval: { action: 'accept', content: { decision: 'approve', note: 'x'.repeat(2001) } } },
      ]) {
        const again = await rawCall(a.url, {
          name: 'testing_issue_refund',
          arguments: args,
          inputResponses,
          requestState,
        });
        expect(again.result?.resultType, JSON.stringify(inputResponses)).toBe('input_required');
        expect(again.result.requestState).toBe(requestState);
      }
      const done = await rawCall(a.url, {
        name: 'testing_issue_refund',
        arguments: args,
        requestState,
        inputResponses: { approval: { action: 'decline' }, extra: { action: 'accept', content: {} } },
      });
      expect(done.result.isError).toBe(true);
      expect(done.result._meta['aptix/approval'].status).toBe('denied');
    });
  });

  describe('2025-11-25 (v1 SDK client, elicitation/create)', () => {
    const session = async () =>
      (
        (await (
          await fetch(`${a.url}/v1/sessions`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ mode: 'tool_diagnostics' }),
          })
        ).json()) as { id: string }
      ).id;

    it('asks the user with the reason and the arguments; an approval runs the call once and the call answers with its result', async () => {
      const asked: string[] = [];
      const client = await legacyClient(
        a.url,
        await session(),
        (message) => (asked.push(message), { action: 'accept', content: { decision: 'approve' } }),
      );
      const before = refunds(a, b);
      const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      await client.close();
      expect(asked[0]).toMatch(/over 100 EUR.*"amount":5000/s);
      expect(result.isError ?? false).toBe(false);
      const id = (result._meta as any)['aptix/approval'].approvalId;
      expect(await approval(a, id)).toMatchObject({ status: 'executed', decidedBy: 'ops via MCP elicitation' });
      expect(await refundedSince(before, 1, a, b)).toBe(1);
    });

    it('a decline is a denial; nothing runs', async () => {
      const client = await legacyClient(a.url, await session(), () => ({ action: 'decline' }));
      const before = refunds(a, b);
      const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      await client.close();
      expect(result.isError).toBe(true);
      expect(await approval(a, (result._meta as any)['aptix/approval'].approvalId)).toMatchObject({ status: 'denied' });
      expect(refunds(a, b)).toBe(before);
    });

    it("a client without the capability gets today's pending_approval answer, and the approval waits", async () => {
      const client = await legacyClient(a.url, await session());
      const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      await client.close();
      expect((result._meta as any)['aptix/approval'].status).toBe('pending_approval');
      expect(await approval(a, (result._meta as any)['aptix/approval'].approvalId)).toMatchObject({
        status: 'pending',
      });
    });

    it('asks one question at a time per session: a second gated call while the first is open is not asked, and waits', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let asked = 0;
      const client = await legacyClient(a.url, await session(), async () => {
        asked++;
        await held;
        return { action: 'accept', content: { decision: 'deny' } };
      });
      const first = client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      while (asked === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      const second = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      expect(text(second)).toContain('Another question to the user is open in this MCP session');
      expect(await approval(a, (second._meta as any)['aptix/approval'].approvalId)).toMatchObject({
        status: 'pending',
      });
      release();
      const answered = await first;
      await client.close();
      expect(asked).toBe(1);
      expect(await approval(a, (answered._meta as any)['aptix/approval'].approvalId)).toMatchObject({
        status: 'denied',
      });
    });

    it('an answer that is not a decision decides nothing', async () => {
      const client = await legacyClient(a.url, await session(), () => ({
        action: 'accept',
        content: { decision: 'maybe' },
      }));
      const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
      await client.close();
      expect(text(result)).toContain('not a decision');
      expect(await approval(a, (result._meta as any)['aptix/approval'].approvalId)).toMatchObject({
        status: 'pending',
      });
    });
  });
});

describe('approval gates over MCP on stdio (aptix mcp)', () => {
  const space = scratch();
  afterAll(() => space.cleanup());
  const env = () => ({ ...process.env, APTIX_DB: space.db, LOG_LEVEL: 'warn' }) as Record<string, string>;
  const stored = async (id: string) =>
    JSON.parse((await runCli(['approvals', 'show', id], { env: { APTIX_DB: space.db } })).stdout) as {
      status: string;
      decidedBy: string;
    };

  it('a 2025-era client is asked with elicitation/create, and its approval runs the call', async () => {
    const created = JSON.parse(
      (await runCli(['sessions', 'create', '--mode', 'tool_diagnostics'], { env: { APTIX_DB: space.db } })).stdout,
    ) as { id: string };
    const client = new LegacyClient({ name: 'stdio-v1', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(
      ElicitRequestSchema,
      async () => ({ action: 'accept', content: { decision: 'approve' } }) as never,
    );
    await client.connect(
      new LegacyStdio({
        command: process.execPath,
        args: [BIN, 'mcp', '--session', created.id],
        cwd: HOST_ROOT,
        env: env(),
        stderr: 'pipe',
      }),
    );
    const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
    await client.close();
    const { approvalId, status } = (result._meta as any)['aptix/approval'];
    expect(status).toBe('executed');
    expect(await stored(approvalId)).toMatchObject({
      status: 'executed',
      decidedBy: 'an unauthenticated MCP client via MCP elicitation',
    });
  });

  it('a 2026-07-28 client is asked through input_required, and its denial is stored', async () => {
    const client = new Client(
      { name: 'stdio-v2', version: '1' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler(
      'elicitation/create',
      async () => ({ action: 'accept', content: { decision: 'deny', note: 'not today' } }) as never,
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--mode', 'tool_diagnostics'],
        cwd: HOST_ROOT,
        env: env(),
        stderr: 'pipe',
      }),
    );
    const result = await client.callTool({ name: 'testing_issue_refund', arguments: bigRefund() });
    await client.close();
    expect(result.isError).toBe(true);
    expect(await stored((result._meta as any)['aptix/approval'].approvalId)).toMatchObject({ status: 'denied' });
  });
});

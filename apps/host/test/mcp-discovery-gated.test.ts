/**
 * The pair at /mcp carries what a direct call carries, for the two kinds of call that leave the
 * request: a task-capable tool called through aptix_call_tool by a 2026-07-28 client that declared
 * the tasks extension becomes a task it polls, and a gated call through aptix_call_tool by a
 * 2025-11-25 client asks its user with elicitation/create, and the answer decides the stored approval.
 */
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratch, startHost, type RunningHost } from './support.js';
import { KEY, OTHER, settledVia, taskRpc, TASKS } from './task-client.js';

const auth = { authorization: `Bearer ${KEY}` };
const REFUNDED = '[testing_issue_refund_Refunded]';
const refunds = (host: RunningHost) => host.logs.filter((line) => line.tag === REFUNDED).length;
const texts = (result: { content?: unknown }) =>
  ((result.content as Array<{ text?: string }>) ?? []).map((block) => block.text ?? '');

describe('the pair at /mcp, for tasks and approvals', () => {
  const space = scratch();
  // Both keys are principals (their own sessions only), and the asking key may decide its own refunds
  // here, so its client is asked (by default it never is).
  const config = join(space.dir, 'aptix.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      principals: { ops: { approve: true }, auditor: {} },
      approvals: { allowSelfApproval: ['testing_issue_refund'] },
    }),
  );
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({
      env: { APTIX_DB: space.db, APTIX_API_KEYS: `ops=${KEY},auditor=${OTHER}` },
      args: ['--config', config],
    });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  /** An agent session of `ops` in tool_diagnostics, made as the model makes it at /mcp: agent_change_mode without a handle. */
  async function diagnosticsSession(): Promise<string> {
    const change = await taskRpc(
      host.url,
      'tools/call',
      {
        name: 'agent_change_mode',
        arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Test the delay tool.' },
      },
      {},
      KEY,
      '/mcp',
    );
    expect(change.result?.isError ?? false).toBe(false);
    return (JSON.parse(change.result.content[0].text) as { sessionId: string }).sessionId;
  }

  describe('2026-07-28: a task-capable tool through aptix_call_tool', () => {
    const rpc = (
      method: string,
      params: Record<string, unknown>,
      capabilities: Record<string, unknown> = TASKS,
      key = KEY,
    ) => taskRpc(host.url, method, params, capabilities, key, '/mcp');

    it('becomes a task for a client that declared the extension, and tasks/get at /mcp gives the result', async () => {
      const sessionId = await diagnosticsSession();
      const created = (
        await rpc('tools/call', {
          name: 'aptix_call_tool',
          arguments: { sessionId, name: 'testing_delay', arguments: { milliseconds: 300 } },
        })
      ).result;
      expect(created).toMatchObject({ resultType: 'task', status: 'working' });
      const done = await settledVia((method, params) => rpc(method, params), created.taskId);
      expect(done.status).toBe('completed');
      expect(done.result.isError ?? false).toBe(false);
      expect(texts(done.result).join('\n')).toContain('300');
    });

    it('is answered directly to a client without the extension', async () => {
      const sessionId = await diagnosticsSession();
      const direct = (
        await rpc(
          'tools/call',
          { name: 'aptix_call_tool', arguments: { sessionId, name: 'testing_delay', arguments: { milliseconds: 5 } } },
          {},
        )
      ).result;
      expect(direct.resultType).toBe('complete');
      expect(direct.isError ?? false).toBe(false);
    });

    it("another key can neither read the task nor reach the session's tools through the pair", async () => {
      const sessionId = await diagnosticsSession();
      const { taskId } = (
        await rpc('tools/call', {
          name: 'aptix_call_tool',
          arguments: { sessionId, name: 'testing_delay', arguments: { milliseconds: 200 } },
        })
      ).result;
      expect((await rpc('tasks/get', { taskId }, TASKS, OTHER)).error?.code).toBe(-32602);
      const foreign = await rpc(
        'tools/call',
        { name: 'aptix_call_tool', arguments: { sessionId, name: 'testing_delay', arguments: { milliseconds: 1 } } },
        {},
        OTHER,
      );
      // The session is ops': to the auditor it reads as unknown (no oracle for ids), and nothing ran.
      expect(foreign.result?.isError).toBe(true);
      expect(texts(foreign.result).join('\n')).toMatch(/session/i);
      expect(texts(foreign.result).join('\n')).not.toMatch(/"milliseconds"/);
    });
  });

  describe('2025-11-25: a gated call through aptix_call_tool (v1 SDK client at /mcp, elicitation/create)', () => {
    async function session(): Promise<string> {
      const response = await fetch(`${host.url}/v1/sessions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'tool_diagnostics' }),
      });
      return ((await response.json()) as { id: string }).id;
    }
    async function client(answer?: () => { action: 'accept' | 'decline'; content?: object }): Promise<{
      client: LegacyClient;
      asked: string[];
    }> {
      const asked: string[] = [];
      const legacy = new LegacyClient(
        { name: 'pair-v1', version: '1' },
        answer ? { capabilities: { elicitation: {} } } : {},
      );
      if (answer)
        legacy.setRequestHandler(ElicitRequestSchema, async (request) => {
          asked.push(request.params.message);
          return answer() as never;
        });
      await legacy.connect(new LegacyTransport(new URL(`${host.url}/mcp`), { requestInit: { headers: auth } }));
      expect(legacy.getServerVersion()).toBeDefined();
      return { client: legacy, asked };
    }
    const refund = (n: number) => ({ orderId: `PAIR-${n}`, amount: 5000, currency: 'EUR' });
    const approval = async (id: string) =>
      (await fetch(`${host.url}/v1/approvals/${id}`, { headers: auth })).json() as Promise<Record<string, unknown>>;

    it('asks the user, and an approval runs the refund once and answers with its result', async () => {
      const sessionId = await session();
      const { client: legacy, asked } = await client(() => ({ action: 'accept', content: { decision: 'approve' } }));
      const before = refunds(host);
      const result = await legacy.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'testing_issue_refund', arguments: refund(1) },
      });
      await legacy.close();
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(/over 100 EUR.*"amount":5000/s);
      expect(result.isError ?? false).toBe(false);
      const id = (result._meta as any)['aptix/approval'].approvalId;
      expect(await approval(id)).toMatchObject({ status: 'executed', decidedBy: 'ops via MCP elicitation' });
      for (let attempt = 0; attempt < 40 && refunds(host) === before; attempt++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(refunds(host) - before).toBe(1);
    });

    it('a decline is a denial, and nothing runs', async () => {
      const sessionId = await session();
      const { client: legacy } = await client(() => ({ action: 'decline' }));
      const before = refunds(host);
      const result = await legacy.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'testing_issue_refund', arguments: refund(2) },
      });
      await legacy.close();
      expect(result.isError).toBe(true);
      expect(await approval((result._meta as any)['aptix/approval'].approvalId)).toMatchObject({ status: 'denied' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(refunds(host)).toBe(before);
    });

    it('a client without the capability gets the pending_approval answer, and nobody was asked', async () => {
      const sessionId = await session();
      const { client: legacy } = await client();
      const result = await legacy.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'testing_issue_refund', arguments: refund(3) },
      });
      await legacy.close();
      expect((result._meta as any)['aptix/approval'].status).toBe('pending_approval');
    });
  });
});

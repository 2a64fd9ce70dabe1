/**
 * Who may do what (issue 32), through a real `aptix serve` with three named keys: an agent that may
 * call the testing tools in two modes, an ops key that may decide refunds and use the admin routes,
 * and an auditor key without an entry (every permission, as before). The principal that asked for a
 * gated call never decides it.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, scratch, startHostWithConfig, type RunningHost } from './support.js';
import { taskRpc, TASKS } from './task-client.js';

const KEYS = {
  agent: 'agent-key-0123456789abcdef',
  ops: 'ops-key-0123456789abcdef00',
  auditor: 'auditor-key-0123456789abcd',
  intruder: 'intruder-key-0123456789abc',
  viewer: 'viewer-key-0123456789abcde',
};
const CONFIG = {
  principals: {
    agent: { tools: ['testing_*', 'agent_list_modes', 'agent_change_mode'], modes: ['general', 'tool_diagnostics'] },
    ops: { approve: ['testing_issue_refund'], admin: true, sessions: 'all' },
    intruder: { tools: ['*'] },
    viewer: { tools: ['agent_*'] },
  },
};

let host: RunningHost;
let cleanup: () => void;
beforeAll(async () => {
  const started = await startHostWithConfig(CONFIG, {
    APTIX_API_KEYS: Object.entries(KEYS)
      .map(([name, key]) => `${name}=${key}`)
      .join(','),
  });
  host = started.host;
  cleanup = () => started.space.cleanup();
});
afterAll(async () => {
  await host.stop();
  cleanup();
});

async function as(
  who: keyof typeof KEYS,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${host.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${KEYS[who]}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

const refund = (orderId: string, context?: { sessionId: string }) => ({
  arguments: { orderId, amount: 5000, currency: 'EUR' },
  ...(context ? { context } : {}),
});

describe('separation of duties: the principal that asked never decides', () => {
  it('the agent asks for a refund, cannot approve it itself, and the ops key runs it once; both are recorded', async () => {
    const session = (await as('agent', 'POST', '/v1/sessions', { mode: 'tool_diagnostics' })).body.id as string;
    const asked = await as(
      'agent',
      'POST',
      '/v1/tools/testing_issue_refund/invoke',
      refund('SOD-1', { sessionId: session }),
    );
    expect(asked.status).toBe(202);
    const id = asked.body.approvalId as string;

    const self = await as('agent', 'POST', `/v1/approvals/${id}`, { decision: 'approve' });
    expect(self.status).toBe(403);
    expect(self.body.error.code).toBe('SELF_APPROVAL');
    expect(self.body.error.message).toContain(
      'another principal with the approve permission must (separation of duties)',
    );
    expect(JSON.stringify(self.body)).not.toContain(KEYS.agent);

    const decided = await as('ops', 'POST', `/v1/approvals/${id}`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ status: 'executed', requestedBy: 'agent', decidedBy: 'ops' });
  });

  it("holds for a key without an entry too: the auditor may decide the agent's call, not its own", async () => {
    const own = (await as('auditor', 'POST', '/v1/tools/testing_issue_refund/invoke', refund('SOD-2'))).body
      .approvalId as string;
    expect((await as('auditor', 'POST', `/v1/approvals/${own}`, { decision: 'deny' })).body.error.code).toBe(
      'SELF_APPROVAL',
    );
    expect((await as('ops', 'POST', `/v1/approvals/${own}`, { decision: 'deny' })).body).toMatchObject({
      status: 'denied',
      requestedBy: 'auditor',
      decidedBy: 'ops',
    });
  });

  it('a principal without the approve permission decides nothing, naming the permission', async () => {
    const id = (await as('auditor', 'POST', '/v1/tools/testing_issue_refund/invoke', refund('SOD-3'))).body
      .approvalId as string;
    const refused = await as('agent', 'POST', `/v1/approvals/${id}`, { decision: 'approve' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({
      code: 'FORBIDDEN',
      message:
        'Deciding approvals of testing_issue_refund needs the permission approve: testing_issue_refund, which this principal does not have. Nothing was decided.',
    });
    expect((await as('ops', 'GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
  });
});

describe('tools, modes and admin routes', () => {
  it('a tool outside its permissions is refused with 403 naming the permission, and not listed', async () => {
    const refused = await as('agent', 'POST', '/v1/tools/agent_hello_world/invoke', { arguments: { name: 'Ada' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({
      code: 'FORBIDDEN',
      message:
        'Calling agent_hello_world needs the permission tools: agent_hello_world, which this principal does not have; it was not run.',
    });
    const listed = (await as('agent', 'GET', '/v1/tools?mode=general')).body.tools.map(
      (tool: { name: string }) => tool.name,
    );
    expect(listed).toEqual(['testing_calculator', 'agent_list_modes', 'agent_change_mode']);
    expect(
      (await as('auditor', 'GET', '/v1/tools?mode=general')).body.tools.map((tool: { name: string }) => tool.name),
    ).toContain('agent_hello_world');
    // Nor does the list of gated tools beside the definitions name a tool the principal may not call.
    expect((await as('auditor', 'GET', '/v1/tools')).body.approvals).toHaveProperty('testing_issue_refund');
    expect((await as('viewer', 'GET', '/v1/tools')).body.approvals).toEqual({});
  });

  it('a mode outside its permissions cannot be entered, and nothing changes', async () => {
    const session = (await as('agent', 'POST', '/v1/sessions', {})).body.id as string;
    const change = await as('agent', 'POST', '/v1/tools/agent_change_mode/invoke', {
      arguments: { mode: 'ddr_authoring', branch: false, reason: 'Write a DDR.' },
      context: { sessionId: session },
    });
    expect(change.status).toBe(403);
    expect(change.body.error.message).toBe(
      'Moving a session into mode "ddr_authoring" needs the permission modes: ddr_authoring, which this principal does not have; nothing changed.',
    );
    expect((await as('agent', 'GET', `/v1/sessions/${session}`)).body.mode).toBe('general');
  });

  it('the approvals list and the packages list need the admin permission', async () => {
    for (const path of ['/v1/approvals', '/v1/packages']) {
      const refused = await as('agent', 'GET', path);
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.message).toBe(
        `${path} needs the permission admin, which this principal does not have.`,
      );
      expect((await as('ops', 'GET', path)).status, path).toBe(200);
      expect((await as('auditor', 'GET', path)).status, path).toBe(200);
    }
  });
});

describe('over MCP', () => {
  async function connect(who: keyof typeof KEYS, capabilities: Record<string, unknown> = {}): Promise<Client> {
    const client = new Client(
      { name: `perm-${who}`, version: '1' },
      { versionNegotiation: { mode: 'auto' }, capabilities },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } },
      }),
    );
    return client;
  }
  const text = (result: Record<string, unknown>) => (result.content as Array<{ text: string }>)[0]!.text;

  it("lists only the principal's tools, the same on every request, and refuses the others, directly or through the pair", async () => {
    const client = await connect('agent');
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual([
        'testing_calculator',
        'agent_list_modes',
        'agent_change_mode',
        'aptix_find_tools',
        'aptix_call_tool',
      ]);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(names);
      const direct = await client.callTool({ name: 'agent_hello_world', arguments: { name: 'Ada' } });
      expect(direct.isError).toBe(true);
      expect(text(direct)).toContain('needs the permission tools: agent_hello_world');
      const change = await client.callTool({
        name: 'agent_change_mode',
        arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Refunds.' },
      });
      const sessionId = JSON.parse(text(change)).sessionId as string;
      const found = JSON.parse(text(await client.callTool({ name: 'aptix_find_tools', arguments: { sessionId } })));
      expect(found.tools.map((tool: { name: string }) => tool.name)).not.toContain('agent_hello_world');
      const through = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'agent_hello_world', arguments: { name: 'Ada' } },
      });
      expect(text(through)).toContain('needs the permission tools: agent_hello_world');
    } finally {
      await client.close();
    }
  });

  it('a client that could be asked is not asked to decide its own gated call: it waits for another principal', async () => {
    let asked = 0;
    const client = await connect('agent', { elicitation: { form: {} } });
    client.setRequestHandler('elicitation/create', async () => {
      asked += 1;
      return { action: 'accept', content: { decision: 'approve' } } as never;
    });
    try {
      const change = await client.callTool({
        name: 'agent_change_mode',
        arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Refunds.' },
      });
      const sessionId = JSON.parse(text(change)).sessionId as string;
      const result = await client.callTool({
        name: 'aptix_call_tool',
        arguments: {
          sessionId,
          name: 'testing_issue_refund',
          arguments: { orderId: 'MCP-SOD', amount: 5000, currency: 'EUR' },
        },
      });
      expect(asked).toBe(0);
      expect(text(result)).toContain('Another principal must decide it');
      const approvalId = (result._meta as { 'aptix/approval': { approvalId: string } })['aptix/approval'].approvalId;
      expect((await as('ops', 'POST', `/v1/approvals/${approvalId}`, { decision: 'approve' })).body).toMatchObject({
        status: 'executed',
        requestedBy: 'agent',
        decidedBy: 'ops',
      });
    } finally {
      await client.close();
    }
  });
});

describe('sessions belong to the principal that made them', () => {
  it("another principal's session is as unknown as a missing one, on every route; sessions: all and a key without an entry see it", async () => {
    const id = (await as('agent', 'POST', '/v1/sessions', { mode: 'tool_diagnostics' })).body.id as string;
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const session of [id, missing]) {
      const read = await as('intruder', 'GET', `/v1/sessions/${session}`);
      expect(read.status, session).toBe(404);
      expect(read.body.error.code).toBe('SESSION_NOT_FOUND');
    }
    const foreign = await as('intruder', 'GET', `/v1/sessions/${id}`);
    const absent = await as('intruder', 'GET', `/v1/sessions/${missing}`);
    expect(foreign.body.error.message).toBe(absent.body.error.message.replace(missing, id));

    const call = await as('intruder', 'POST', '/v1/tools/testing_ping_pong/invoke', {
      arguments: { message: 'hi' },
      context: { sessionId: id },
    });
    expect(call.status).toBe(404);
    expect((await as('intruder', 'GET', `/v1/tools?sessionId=${id}`)).status).toBe(404);
    expect((await as('intruder', 'POST', `/v1/sessions/${id}/messages`, { input: 'hello' })).status).toBe(404);

    expect((await as('agent', 'GET', `/v1/sessions/${id}`)).body.mode).toBe('tool_diagnostics');
    expect((await as('ops', 'GET', `/v1/sessions/${id}`)).status).toBe(200);
    expect((await as('auditor', 'GET', `/v1/sessions/${id}`)).status).toBe(200);
  });

  it("an approval follows its session's owner", async () => {
    const session = (await as('agent', 'POST', '/v1/sessions', { mode: 'tool_diagnostics' })).body.id as string;
    const approvalId = (
      await as('agent', 'POST', '/v1/tools/testing_issue_refund/invoke', refund('OWN-1', { sessionId: session }))
    ).body.approvalId as string;
    expect((await as('intruder', 'GET', `/v1/approvals/${approvalId}`)).status).toBe(404);
    expect((await as('agent', 'GET', `/v1/approvals/${approvalId}`)).body.status).toBe('pending');
    expect((await as('ops', 'GET', `/v1/approvals/${approvalId}`)).body.status).toBe('pending');
  });

  it("an MCP task follows its session's owner: one ops starts in the agent's session is the agent's, ops (sessions: all) still sees it, no one else does", async () => {
    const session = (await as('agent', 'POST', '/v1/sessions', { mode: 'tool_diagnostics' })).body.id as string;
    const created = await taskRpc(
      host.url,
      'tools/call',
      {
        name: 'aptix_call_tool',
        arguments: { sessionId: session, name: 'testing_delay', arguments: { milliseconds: 50 } },
      },
      TASKS,
      KEYS.ops,
      '/mcp',
    );
    expect(created.result).toMatchObject({ resultType: 'task' });
    const taskId = created.result.taskId as string;
    const get = (who: keyof typeof KEYS) => taskRpc(host.url, 'tasks/get', { taskId }, TASKS, KEYS[who], '/mcp');
    for (const who of ['agent', 'ops'] as const) {
      const read = await get(who);
      expect(read.error, who).toBeUndefined();
      expect(read.result.taskId, who).toBe(taskId);
    }
    // The intruder may not see the session; the auditor (no entry) sees only its own tasks, as before principals.
    for (const who of ['intruder', 'auditor'] as const) {
      const foreign = await get(who);
      expect(foreign.error?.code, who).toBe(-32602);
      expect(foreign.error?.message, who).toContain(`Unknown task "${taskId}"`);
    }
    // Cancelling is reading and changing: the intruder cannot, the owner can (an empty ack once it ended).
    expect((await taskRpc(host.url, 'tasks/cancel', { taskId }, TASKS, KEYS.intruder, '/mcp')).error?.code).toBe(
      -32602,
    );
    expect((await taskRpc(host.url, 'tasks/cancel', { taskId }, TASKS, KEYS.agent, '/mcp')).error).toBeUndefined();
  });

  it("over MCP: the header, a 2025 initialize and the pair refuse another principal's session as unknown", async () => {
    const id = (await as('agent', 'POST', '/v1/sessions', { mode: 'tool_diagnostics' })).body.id as string;
    const headers = { authorization: `Bearer ${KEYS.intruder}` };
    const init = await fetch(`${host.url}/mcp`, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-aptix-session-id': id,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    expect(init.status).toBe(404);
    expect(((await init.json()) as { error: { message: string } }).error.message).toContain(
      `Agent session ${id} does not exist`,
    );

    const client = new Client({ name: 'intruder', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), { requestInit: { headers } }));
    try {
      const found = await client.callTool({ name: 'aptix_find_tools', arguments: { sessionId: id } });
      expect((found.content as Array<{ text: string }>)[0]!.text).toContain(`Agent session "${id}" does not exist.`);
      const through = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId: id, name: 'testing_ping_pong', arguments: { message: 'hi' } },
      });
      expect((through.content as Array<{ text: string }>)[0]!.text).toContain(`Agent session "${id}" does not exist.`);
    } finally {
      await client.close();
    }
  });
});

describe('configuration', () => {
  it('refuses to start when principals names a key the host does not have', async () => {
    const space = scratch();
    try {
      const file = join(space.dir, 'aptix.config.json');
      writeFileSync(file, JSON.stringify({ principals: { opps: { admin: true } } }));
      const run = await runCli(['--config', file, 'check'], {
        env: { APTIX_DB: space.db, APTIX_API_KEYS: `ops=${KEYS.ops}` },
      });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain(
        'principals names "opps", which is not the name of an accepted API key (keys: ops). Fix: name a key "opps=<key>"',
      );
      expect(run.stderr).not.toContain(KEYS.ops);
    } finally {
      space.cleanup();
    }
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, postgresAvailable, postgresSchema, scratch, startHost, type RunningHost } from './support.js';
import { hostPairOnPostgres } from './suites.js';

const available = await postgresAvailable('the MCP many-hosts test is');

function names(list: { tools: Array<{ name: string }> }): string[] {
  return list.tools.map((tool) => tool.name);
}

describe.skipIf(!available)('a 2025-era MCP session on two hosts that share one PostgreSQL database', () => {
  const pair = hostPairOnPostgres('aptix_mcp_hosts');

  it('is opened on one host and continued on the other, request by request, with no new initialize', async () => {
    const { a, b } = pair;
    // A round-robin load balancer: every request goes to the other host than the one before.
    const hosts = [new URL(a.url), new URL(b.url)];
    const served: string[] = [];
    let turn = 0;
    const roundRobin: typeof fetch = (input, init) => {
      const target = hosts[turn++ % 2]!;
      const url = new URL(input instanceof Request ? input.url : String(input));
      url.host = target.host;
      served.push(target.port);
      return fetch(url, init);
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { fetch: roundRobin });
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    await client.connect(transport);
    try {
      expect(names(await client.listTools())).not.toContain('testing_delay');
      const change = await client.callTool({
        name: 'agent_change_mode',
        arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Across hosts.' },
      });
      expect(change.isError).toBeFalsy();
      expect(changed).toBe(1);
      expect(names(await client.listTools())).toContain('testing_delay');
      const delay = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
      expect(delay.isError).toBeFalsy();
      // Both hosts answered requests of the one session.
      expect(new Set(served)).toEqual(new Set([hosts[0]!.port, hosts[1]!.port]));
    } finally {
      await client.close();
    }
  });
});

describe('a 2025-era MCP session across a host restart', () => {
  const space = scratch();
  afterAll(() => space.cleanup());

  it('keeps working through the SDK client after the host is killed and started again on its port', async () => {
    const port = await freePort();
    const start = () => startHost({ env: { APTIX_DB: space.db }, args: ['--port', String(port)] });
    let host = await start();
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const sessionId = transport.sessionId;
      await client.callTool({
        name: 'agent_change_mode',
        arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Before the crash.' },
      });
      expect(await host.stop('SIGKILL')).toBeNull();
      host = await start();
      // Same MCP session, no new initialize: the restarted host adopts it from the store.
      expect(names(await client.listTools())).toContain('testing_delay');
      const delay = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
      expect(delay.isError).toBeFalsy();
      expect(transport.sessionId).toBe(sessionId);
    } finally {
      await client.close();
      await host.stop();
    }
  });
});

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'aptix-test', version: '1' } },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface OpenedSession {
  readonly id: string;
  readonly agentSessionId: string;
}

async function initialize(host: RunningHost): Promise<OpenedSession> {
  const response = await fetch(`${host.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: INITIALIZE });
  await response.text();
  expect(response.status).toBe(200);
  return { id: response.headers.get('mcp-session-id')!, agentSessionId: response.headers.get('x-aptix-session-id')! };
}

async function listTools(host: RunningHost, session: OpenedSession): Promise<{ status: number; body: string }> {
  const response = await fetch(`${host.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': session.id, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  return { status: response.status, body: await response.text() };
}

/** The refusal a client gets for an expired or closed session, on whichever host it asks: 404 -32001 naming the agent session to continue in. */
async function expectRefused(host: RunningHost, session: OpenedSession): Promise<void> {
  const answer = await listTools(host, session);
  expect(answer.status).toBe(404);
  const body = JSON.parse(answer.body) as { error: { code: number; message: string }; id: unknown };
  expect(body.error.code).toBe(-32001);
  expect(body.error.message).toContain(`MCP session ${session.id} is not open`);
  expect(body.error.message).toContain(`"X-Aptix-Session-Id: ${session.agentSessionId}"`);
  expect(body.id).toBe(2);
}

const postgres = await postgresAvailable('the MCP session expiry test on PostgreSQL is');
const stores: Array<{ name: string; setup(): { db: string; dispose(): Promise<void> | void } }> = [
  {
    name: 'a SQLite file',
    setup: () => {
      const space = scratch();
      return { db: space.db, dispose: () => space.cleanup() };
    },
  },
  ...(postgres ? [{ name: 'PostgreSQL', setup: () => postgresSchema('aptix_mcp_expiry') }] : []),
];

describe.each(stores)('2025-era MCP sessions that expired or were closed, on hosts sharing $name', ({ setup }) => {
  const store = setup();
  afterAll(() => store.dispose());
  const start = (idleSeconds: number, port?: number) =>
    startHost({
      env: { APTIX_DB: store.db, APTIX_MCP_SESSION_IDLE_SECONDS: String(idleSeconds) },
      ...(port === undefined ? {} : { args: ['--port', String(port)] }),
    });
  const running: RunningHost[] = [];
  const host = async (idleSeconds: number, port?: number) => {
    const started = await start(idleSeconds, port);
    running.push(started);
    return started;
  };
  afterAll(async () => void (await Promise.all(running.map((h) => h.stop()))));

  // The idle limit is 1 s: a session idle 2.5 s is past it and past the store's allowance for an unrecorded last use (a quarter of the limit).
  it('refuses a session idle past the limit on a second host, and on the host restarted after a crash that left it open in the store', async () => {
    const portA = await freePort();
    let a = await host(1, portA);
    const b = await host(1);
    const expired = await initialize(a);
    expect((await listTools(a, expired)).status).toBe(200);
    await sleep(2500);
    await expectRefused(b, expired);
    await expectRefused(a, expired);

    // A crash before the host could see the session expire: only the store knows its last use.
    const abandoned = await initialize(a);
    expect(await a.stop('SIGKILL')).toBeNull();
    await sleep(2500);
    a = await host(1, portA);
    await expectRefused(a, abandoned);
    await expectRefused(b, abandoned);
    // A session opened after the restart is unaffected.
    expect((await listTools(b, await initialize(a))).status).toBe(200);
  });

  it('refuses a DELETEd session on every host: one that never saw it, one that served it, and the restarted host', async () => {
    const portA = await freePort();
    let a = await host(1, portA);
    const b = await host(1);
    const c = await host(1);
    const closed = await initialize(a);
    expect((await listTools(b, closed)).status).toBe(200);
    const deleted = await fetch(`${a.url}/mcp`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json', 'mcp-session-id': closed.id },
    });
    expect(deleted.status).toBe(200);
    await expectRefused(c, closed);
    await expectRefused(a, closed);
    // B served it from memory: it sees the close at its next mark in the store, due after a quarter of the idle limit.
    await sleep(600);
    await expectRefused(b, closed);
    expect(await a.stop('SIGKILL')).toBeNull();
    a = await host(1, portA);
    await expectRefused(a, closed);
  });

  it('keeps a session used regularly past the idle limit working across a host restart', async () => {
    const port = await freePort();
    let a = await host(5, port);
    const b = await host(5);
    const busy = await initialize(a);
    // 7 s of use, one request every 0.4 s, alternating hosts: longer than the 5 s limit, never idle for it.
    for (let i = 0; i < 18; i++) {
      expect((await listTools(i % 2 === 0 ? a : b, busy)).status).toBe(200);
      await sleep(400);
    }
    expect(await a.stop('SIGKILL')).toBeNull();
    // Still used on the other host while this one starts again: on a loaded machine a start can take
    // longer than the idle limit, and a session left idle that long is rightly gone.
    const state = { up: false };
    const restarting = host(5, port).finally(() => (state.up = true));
    while (!state.up) {
      expect((await listTools(b, busy)).status).toBe(200);
      await Promise.race([restarting, sleep(400)]);
    }
    a = await restarting;
    expect((await listTools(a, busy)).status).toBe(200);
    expect((await listTools(b, busy)).status).toBe(200);
  });
});

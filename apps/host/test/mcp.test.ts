import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { AptixHost } from '../src/aptix-host.js';
import { loadConfig } from '../src/config.js';
import { composeHost } from '../src/container.js';
import { createMcpServer } from '../src/mcp/mcp-server.js';
import { BIN, HOST_ROOT, hostForSuite, runCli, scratch } from './support.js';

/** At /mcp and over stdio, the default mode's tools and the pair that reaches any mode's tools (see mcp-discovery.test.ts). */
const GENERAL_TOOLS = [
  'agent_hello_world',
  'testing_calculator',
  'agent_list_modes',
  'agent_change_mode',
  'aptix_find_tools',
  'aptix_call_tool',
];

function listChanged(client: Client): { count: () => number; next: () => Promise<void> } {
  let count = 0;
  let waiters: Array<() => void> = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    count++;
    for (const waiter of waiters) waiter();
    waiters = [];
  });
  return { count: () => count, next: () => new Promise((resolve) => waiters.push(resolve)) };
}

function text(result: Record<string, unknown>): string {
  return (result.content as Array<{ text: string }>)[0]!.text;
}

async function exerciseModes(client: Client) {
  const changes = listChanged(client);
  const before = await client.listTools();
  expect(before.tools.map((t) => t.name)).toEqual(GENERAL_TOOLS);
  expect(before.tools.find((t) => t.name === 'agent_list_modes')!.annotations).toMatchObject({
    readOnlyHint: true,
    idempotentHint: true,
  });

  const sum = await client.callTool({ name: 'testing_calculator', arguments: { operation: 'add', a: 2, b: 3 } });
  expect(sum.isError).toBeFalsy();
  // The result goes out once, as text: structuredContent is only for tools that declare an output schema.
  expect(JSON.parse(text(sum))).toMatchObject({ value: 5 });
  expect(sum.structuredContent).toBeUndefined();

  const failed = await client.callTool({ name: 'testing_calculator', arguments: { operation: 'divide', a: 1, b: 0 } });
  expect(failed.isError).toBe(true);
  expect((failed.content as Array<{ text: string }>)[0]!.text).toMatch(/zero/i);

  const outside = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
  expect(outside.isError).toBe(true);
  expect((outside.content as Array<{ text: string }>)[0]!.text).toContain('not offered in mode "general"');

  const notified = changes.next();
  const change = await client.callTool({
    name: 'agent_change_mode',
    arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Debug a slow tool.' },
  });
  expect(change.isError).toBeFalsy();
  await notified;
  expect(changes.count()).toBe(1);
  const after = await client.listTools();
  expect(after.tools.map((t) => t.name)).toContain('testing_delay');
  const delay = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
  expect(JSON.parse(text(delay))).toMatchObject({ wasCancelled: false });
  return (JSON.parse(text(change)) as { sessionId: string }).sessionId;
}

describe('MCP over stdio, through the SDK client', () => {
  const space = scratch();
  afterAll(() => space.cleanup());

  it('offers the mode tools, runs calls, and announces a mode change', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: HOST_ROOT,
      env: { ...process.env, APTIX_DB: space.db, LOG_LEVEL: 'warn' } as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const sessionId = await exerciseModes(client);
      // The mode change was persisted: a later process sees it.
      expect(
        (await runCli(['sessions', 'show', sessionId], { env: { APTIX_DB: space.db } })).json<{ mode: string }>().mode,
      ).toBe('tool_diagnostics');
    } finally {
      await client.close();
    }
  });

  it('continues an existing session with --session', async () => {
    const created = (
      await runCli(['sessions', 'create', '--mode', 'tool_diagnostics'], { env: { APTIX_DB: space.db } })
    ).json<{ id: string }>();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--session', created.id],
      cwd: HOST_ROOT,
      env: { ...process.env, APTIX_DB: space.db, LOG_LEVEL: 'warn' } as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('testing_failure_injection');
    } finally {
      await client.close();
    }
  });
});

describe('MCP over Streamable HTTP, through the SDK client', () => {
  const host = hostForSuite();

  it('binds each MCP session to a persisted agent session, and announces mode changes', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`));
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client.connect(transport);
    const sessionId = await exerciseModes(client);
    const mcpSessionId = transport.sessionId!;
    await transport.terminateSession();
    await client.close();

    // A client that reconnects with the agent session id continues in that session's mode.
    const again = new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
      requestInit: { headers: { 'x-aptix-session-id': sessionId } },
    });
    const client2 = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client2.connect(again);
    expect((await client2.listTools()).tools.map((t) => t.name)).toContain('testing_delay');
    await client2.close();

    // A host that does not know an MCP session id (ended, or opened on another host) says which agent session to continue.
    const stale = await fetch(`${host.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': mcpSessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(stale.status).toBe(404);
    expect(((await stale.json()) as { error: { message: string } }).error.message).toContain(
      `X-Aptix-Session-Id: ${sessionId}`,
    );
  });

  it('sends progress notifications to a 2025-era client that sent a progress token', async () => {
    const created = (await (
      await fetch(`${host.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'tool_diagnostics' }),
      })
    ).json()) as { id: string };
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
        requestInit: { headers: { 'x-aptix-session-id': created.id } },
      }),
    );
    try {
      const reports: Array<{ progress: number; total?: number }> = [];
      await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 200 } }, undefined, {
        onprogress: (progress) => reports.push(progress),
      });
      expect(reports[0]).toMatchObject({ progress: 0, total: 200 });
      expect(reports.at(-1)).toMatchObject({ progress: 200, total: 200 });
      // Without a token, nothing is sent.
      const quiet: unknown[] = [];
      client.fallbackNotificationHandler = async (notification) => void quiet.push(notification);
      await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 50 } });
      expect(quiet).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('refuses to continue an agent session that does not exist', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
      requestInit: { headers: { 'x-aptix-session-id': 'missing' } },
    });
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow(/missing/);
  });
});

describe('MCP cancellation', () => {
  it('notifications/cancelled aborts the tool signal', async () => {
    const space = scratch();
    const config = await loadConfig({ env: { APTIX_DB: space.db }, cwd: space.dir });
    const host = new AptixHost(await composeHost(config, { pino: pino({ level: 'silent' }) }));
    try {
      const session = await host.createSession({ mode: 'tool_diagnostics' });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await createMcpServer(host, { era: 'legacy', agentSessionId: session.id }, 'test').connect(serverSide);
      const client = new Client({ name: 'aptix-test', version: '1.0.0' });
      await client.connect(clientSide);
      // Record what the tool itself answered: only a tool whose signal was aborted reports wasCancelled.
      const outcomes: Array<Promise<unknown>> = [];
      const call = host.call.bind(host);
      host.call = (...args) => {
        const outcome = call(...args);
        outcomes.push(outcome);
        return outcome;
      };
      const controller = new AbortController();
      const pending = client.callTool({ name: 'testing_delay', arguments: { milliseconds: 60_000 } }, undefined, {
        signal: controller.signal,
      });
      setTimeout(() => controller.abort('user pressed stop'), 50);
      await expect(pending).rejects.toThrow();
      const outcome = (await outcomes[0]) as { kind: string; result: { successful: boolean; result: string } };
      expect(outcome.kind).toBe('result');
      expect(outcome.result.successful).toBe(true);
      expect(JSON.parse(outcome.result.result)).toMatchObject({ wasCancelled: true, requestedMs: 60_000 });
      await client.close();
    } finally {
      await host.close();
      space.cleanup();
    }
  });
});

/**
 * Modes for every MCP client (issue 31): a client that knows only `/mcp` or `aptix mcp` reaches the
 * tools of the mode its agent session moved to, through aptix_find_tools and aptix_call_tool, with the
 * session's id passed back as an argument. 2026-07-28 through the v2 SDK client (its list never
 * follows a mode change), 2025-11-25 through the v1 SDK client, over HTTP and stdio.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, HOST_ROOT, hostForSuite, runCli, scratch, startHostWithConfig, type RunningHost } from './support.js';

const GENERAL = ['agent_hello_world', 'testing_calculator', 'agent_list_modes', 'agent_change_mode'];
const PAIR = ['aptix_find_tools', 'aptix_call_tool'];

type Result = Record<string, unknown>;
const texts = (result: Result): string[] => (result.content as Array<{ text: string }>).map((block) => block.text);
const json = <T = any>(result: Result, index = 0): T => JSON.parse(texts(result)[index]!) as T;

async function modern(url: string, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client(
    { name: 'aptix-discovery-v2', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' }, capabilities },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  return client;
}

/** The model's steps as a framework's loop would run them: change mode, then work in the new mode through the pair. */
async function changeToDiagnostics(client: {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<Result>;
}): Promise<{ sessionId: string; guidance: string }> {
  const change = await client.callTool({
    name: 'agent_change_mode',
    arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Test the delay tool.' },
  });
  expect(change.isError).toBeFalsy();
  return { sessionId: json<{ sessionId: string }>(change).sessionId, guidance: texts(change)[1]! };
}

describe('2026-07-28 at /mcp (v2 SDK client, configured with the URL only)', () => {
  const host = hostForSuite();

  it('changes mode in one step and runs a tool of the new mode in a later one; the list never changes', async () => {
    const client = await modern(`${host.url}/mcp`);
    try {
      const before = (await client.listTools()).tools.map((tool) => tool.name);
      expect(before).toEqual([...GENERAL, ...PAIR]);
      const { sessionId, guidance } = await changeToDiagnostics(client);
      expect(guidance).toContain(`aptix_find_tools {"sessionId": "${sessionId}"`);
      expect(guidance).toContain(`aptix_call_tool {"sessionId": "${sessionId}"`);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(before);

      const found = json(
        await client.callTool({
          name: 'aptix_find_tools',
          arguments: { sessionId, query: 'wait for some milliseconds', limit: 3 },
        }),
      );
      expect(found).toMatchObject({ mode: 'tool_diagnostics', sessionId, total: 8 });
      expect(found.tools[0]).toMatchObject({
        name: 'testing_delay',
        parameters: { type: 'object', properties: { milliseconds: expect.any(Object) } },
      });
      expect(found.tools[0].usage).toMatch(/Primary purpose/);

      const delay = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'testing_delay', arguments: { milliseconds: 1 } },
      });
      expect(delay.isError).toBeFalsy();
      expect(json(delay)).toMatchObject({ wasCancelled: false, sessionId });
    } finally {
      await client.close();
    }
  });

  it("sends the tool's progress reports through the pair, as a direct call does", async () => {
    const client = await modern(`${host.url}/mcp`);
    try {
      const { sessionId } = await changeToDiagnostics(client);
      const reports: number[] = [];
      const result = await client.callTool(
        { name: 'aptix_call_tool', arguments: { sessionId, name: 'testing_delay', arguments: { milliseconds: 300 } } },
        { onprogress: (progress) => reports.push(progress.progress) },
      );
      expect(result.isError).toBeFalsy();
      expect(reports[0]).toBe(0);
      expect(reports.at(-1)).toBe(300);
    } finally {
      await client.close();
    }
  });

  it('finds the default mode without a handle, and the whole mode without a query', async () => {
    const client = await modern(`${host.url}/mcp`);
    try {
      const all = json(await client.callTool({ name: 'aptix_find_tools', arguments: {} }));
      expect(all).toMatchObject({ mode: 'general', sessionId: null, query: null, total: 4 });
      expect(all.tools.map((tool: { name: string }) => tool.name)).toEqual(GENERAL);
      // Strict mode's nulls stand for left-out arguments.
      const nulls = json(
        await client.callTool({
          name: 'aptix_find_tools',
          arguments: { query: 'multiply two numbers', sessionId: null, limit: null },
        }),
      );
      expect(nulls.tools[0].name).toBe('testing_calculator');
    } finally {
      await client.close();
    }
  });

  it('invalid arguments come back naming the field, for the pair and for the tool it calls', async () => {
    const client = await modern(`${host.url}/mcp`);
    try {
      const { sessionId } = await changeToDiagnostics(client);
      const inner = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'testing_delay', arguments: { milliseconds: 'soon' } },
      });
      expect(inner.isError).toBe(true);
      expect(texts(inner)[0]).toMatch(/milliseconds/);
      const outer = await client.callTool({ name: 'aptix_call_tool', arguments: { sessionId, tool: 'testing_delay' } });
      expect(outer.isError).toBe(true);
      expect(texts(outer)[0]).toMatch(/name/);
      expect(texts(outer)[0]).toContain('Call aptix_call_tool as {"name": "<tool>"');
      const limit = await client.callTool({ name: 'aptix_find_tools', arguments: { limit: 0 } });
      expect(limit.isError).toBe(true);
      expect(texts(limit)[0]).toMatch(/limit/);
      const proto = await client.callTool({
        name: 'aptix_call_tool',
        arguments: JSON.parse(
          `{"sessionId":"${sessionId}","name":"testing_delay","arguments":{"milliseconds":1,"__proto__":{"x":1}}}`,
        ),
      });
      expect(proto.isError).toBe(true);
      expect(texts(proto)[0]).toMatch(/forbidden key/);
    } finally {
      await client.close();
    }
  });

  it('a refusal says what this client can do, so nothing loops', async () => {
    const client = await modern(`${host.url}/mcp`);
    try {
      // Called directly without a handle: the default mode refuses, and says how to reach the tool.
      const direct = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
      expect(direct.isError).toBe(true);
      expect(texts(direct)[0]).toBe(
        'Tool "testing_delay" is not offered in mode "general"; it was not run. Tools in this ' +
          'mode: agent_hello_world, testing_calculator, agent_list_modes, agent_change_mode. ' +
          'testing_delay is in mode "tool_diagnostics": switch with agent_change_mode, then call it ' +
          'through aptix_call_tool with the sessionId agent_change_mode returns.',
      );
      // Through the pair without a handle: the same, in the pair's words.
      const sessionless = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { name: 'testing_delay', arguments: { milliseconds: 1 } },
      });
      expect(texts(sessionless)[0]).toContain(
        'not offered in the default mode "general" (no sessionId was given); it was not run.',
      );
      expect(texts(sessionless)[0]).toContain(
        'call agent_change_mode with that mode, then call testing_delay through aptix_call_tool with the sessionId agent_change_mode returns.',
      );

      // In a session whose mode does not offer the tool: the exact call that changes it.
      const { sessionId } = await changeToDiagnostics(client);
      await client.callTool({
        name: 'aptix_call_tool',
        arguments: {
          sessionId,
          name: 'agent_change_mode',
          arguments: { mode: 'ddr_authoring', branch: false, reason: 'Write a DDR.' },
        },
      });
      const outside = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'testing_delay', arguments: { milliseconds: 1 } },
      });
      expect(outside.isError).toBe(true);
      expect(texts(outside)[0]).toContain(
        `Tool "testing_delay" is not offered in mode "ddr_authoring" of agent session ${sessionId}; it was not run.`,
      );
      expect(texts(outside)[0]).toContain(
        `aptix_call_tool {"name": "agent_change_mode", "arguments": {"mode": "tool_diagnostics", "branch": false, "reason": "…"}, "sessionId": "${sessionId}"}`,
      );

      const unknownSession = await client.callTool({
        name: 'aptix_find_tools',
        arguments: { sessionId: 'no-such-session' },
      });
      expect(texts(unknownSession)[0]).toContain('Agent session "no-such-session" does not exist.');
      const unknownTool = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'no_such_tool' },
      });
      expect(texts(unknownTool)[0]).toContain('There is no tool "no_such_tool".');
    } finally {
      await client.close();
    }
  });

  it('a gated call through the pair asks the user, and waits for the approval', async () => {
    const asked: string[] = [];
    const client = await modern(`${host.url}/mcp`, { elicitation: { form: {} } });
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push((request.params as { message: string }).message);
      return { action: 'accept', content: { decision: 'approve' } } as never;
    });
    try {
      const { sessionId } = await changeToDiagnostics(client);
      const refund = await client.callTool({
        name: 'aptix_call_tool',
        arguments: {
          sessionId,
          name: 'testing_issue_refund',
          arguments: { orderId: 'A-1', amount: 900, currency: 'EUR' },
        },
      });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(/testing_issue_refund/);
      expect(refund.isError, texts(refund).join()).toBeFalsy();
      expect(json(refund)).toMatchObject({ orderId: 'A-1', sessionId });
    } finally {
      await client.close();
    }
  });

  it('odd spellings of a mode URL are refused, never served as another mode', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    for (const path of [
      '/modes/GENERAL/mcp',
      '/modes/%2e%2e/mcp',
      '/modes/..%2Fmcp/mcp',
      '/modes/general%00/mcp',
      `/modes/${'x'.repeat(5000)}/mcp`,
      '/modes/general/mcp/extra',
      '/modes//mcp',
    ]) {
      const response = await fetch(`${host.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(list),
      });
      expect([400, 404, 414], path.slice(0, 40)).toContain(response.status);
      expect(await response.text(), path.slice(0, 40)).not.toContain('agent_hello_world');
    }
    // The same mode percent-encoded is the same mode.
    const encoded = await modern(`${host.url}/modes/tool%5Fdiagnostics/mcp`);
    expect((await encoded.listTools()).tools.map((tool) => tool.name)).toContain('testing_delay');
    await encoded.close();
  });

  it('a mode URL pins its mode: it lists that mode, without the pair, and a 2025 session opened there starts in it', async () => {
    for (const url of [`${host.url}/modes/tool_diagnostics/mcp`, `${host.url}/mcp/modes/tool_diagnostics`]) {
      const client = await modern(url);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('testing_delay');
      expect(names).not.toContain('aptix_call_tool');
      await client.close();

      const legacy = new LegacyClient({ name: 'aptix-discovery-v1', version: '1.0.0' });
      const transport = new LegacyHttpTransport(new URL(url));
      await legacy.connect(transport);
      expect((await legacy.listTools()).tools.map((tool) => tool.name)).toContain('testing_delay');
      const delay = await legacy.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
      expect(delay.isError).toBeFalsy();
      await transport.terminateSession();
      await legacy.close();
    }
  });
});

describe('2025-11-25 at /mcp (v1 SDK client, configured with the URL only)', () => {
  const host = hostForSuite();

  it("a client that never lists again still runs the new mode's tools, in its own session, through the pair", async () => {
    const client = new LegacyClient({ name: 'aptix-discovery-v1', version: '1.0.0' });
    const transport = new LegacyHttpTransport(new URL(`${host.url}/mcp`));
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([...GENERAL, ...PAIR]);
      const { sessionId, guidance } = await changeToDiagnostics(client as never);
      expect(guidance).toContain("If your tool list does not show this mode's tools");
      // The MCP session's own agent session: no handle needed.
      const delay = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { name: 'testing_delay', arguments: { milliseconds: 1 } },
      });
      expect(json(delay as Result)).toMatchObject({ sessionId, wasCancelled: false });
      // And a client that does list again sees the mode's tools directly.
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('testing_delay');
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });
});

describe('aptix mcp over stdio, both revisions', () => {
  const space = scratch();
  afterAll(() => space.cleanup());
  const transport = () =>
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: HOST_ROOT,
      env: { PATH: process.env.PATH ?? '', APTIX_DB: space.db, LOG_LEVEL: 'warn' },
      stderr: 'pipe',
    });

  it("2026-07-28: the list stays the start mode's, and the new mode's tools run through the pair", async () => {
    const client = new Client({ name: 'stdio-v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(transport());
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([...GENERAL, ...PAIR]);
      const { sessionId, guidance } = await changeToDiagnostics(client);
      // The connection keeps the session the change started: its direct calls run there, as the guidance says.
      expect(guidance).toContain("this connection's calls run in it, direct ones too");
      expect(json(await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } }))).toMatchObject({
        sessionId,
      });
      const found = json(
        await client.callTool({ name: 'aptix_find_tools', arguments: { sessionId, query: 'inject a failure' } }),
      );
      expect(found.tools[0].name).toBe('testing_failure_injection');
      const ping = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { sessionId, name: 'testing_ping_pong', arguments: { message: 'hi', count: 2 } },
      });
      expect(ping.isError, texts(ping).join()).toBeFalsy();
      expect(json(ping)).toMatchObject({ sessionId });
    } finally {
      await client.close();
    }
  });

  it('--mode pins the mode: no pair', async () => {
    const client = new Client({ name: 'stdio-v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--mode', 'tool_diagnostics'],
        cwd: HOST_ROOT,
        env: { PATH: process.env.PATH ?? '', APTIX_DB: space.db, LOG_LEVEL: 'warn' },
        stderr: 'pipe',
      }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('aptix_find_tools');
    } finally {
      await client.close();
    }
  });
});

describe('deferredModes: a mode too large to list is offered as its mode tools and the pair', () => {
  let host: RunningHost;
  let cleanup: () => void;
  beforeAll(async () => {
    const started = await startHostWithConfig({ deferredModes: ['tool_diagnostics'] });
    host = started.host;
    cleanup = () => started.space.cleanup();
  });
  afterAll(async () => {
    await host.stop();
    cleanup();
  });

  it('lists the deferred mode at its own URL as the mode tools and the pair, and runs its tools through the pair', async () => {
    const client = await modern(`${host.url}/modes/tool_diagnostics/mcp`);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        'agent_list_modes',
        'agent_change_mode',
        ...PAIR,
      ]);
      const found = json(
        await client.callTool({ name: 'aptix_find_tools', arguments: { query: 'echo a message back' } }),
      );
      expect(found).toMatchObject({ mode: 'tool_diagnostics', total: 8 });
      expect(found.tools[0].name).toBe('testing_ping_pong');
      const ping = await client.callTool({
        name: 'aptix_call_tool',
        arguments: { name: 'testing_ping_pong', arguments: { message: 'hi' } },
      });
      expect(json(ping)).toMatchObject({ reply: 'pong: hi' });
      // A mode that is not deferred keeps its list, and no pair at its own URL.
      const general = await modern(`${host.url}/modes/general/mcp`);
      expect((await general.listTools()).tools.map((tool) => tool.name)).toEqual(GENERAL);
      await general.close();
    } finally {
      await client.close();
    }
  });

  it('a 2025 session whose mode becomes the deferred one lists it as the mode tools and the pair', async () => {
    const client = new LegacyClient({ name: 'aptix-discovery-v1', version: '1.0.0' });
    const transport = new LegacyHttpTransport(new URL(`${host.url}/mcp`));
    await client.connect(transport);
    try {
      await changeToDiagnostics(client as never);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        'agent_list_modes',
        'agent_change_mode',
        ...PAIR,
      ]);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });

  it('refuses to start when deferredModes names a mode the catalog does not have', async () => {
    const space = scratch();
    try {
      const file = join(space.dir, 'aptix.config.json');
      writeFileSync(file, JSON.stringify({ deferredModes: ['tool_diagnostic'] }));
      const run = await runCli(['--config', file, 'check'], { env: { APTIX_DB: space.db } });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain(
        'deferredModes names "tool_diagnostic", which the catalog does not have. Modes: general, ddr_authoring, tool_diagnostics.',
      );
    } finally {
      space.cleanup();
    }
  });
});

import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { respond, ScriptedResponsesServer } from '@aptix/reasoner/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { scratch, startHost, type RunningHost } from './support.js';

// A real `aptix serve`, configured by file, bridging an MCP server (on the official v2 server SDK)
// whose tools the test changes while the host runs: the host offers the new ones without a restart.
const require = createRequire(import.meta.url);
const LIVE = join(
  dirname(require.resolve('@aptix/tool-mcp-bridge/package.json')),
  'test',
  'fixtures',
  'live-server.mjs',
);
const FIRST_PARTY = ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'];

interface Envelope {
  successful: boolean;
  result: Record<string, unknown> | null;
  errors: Array<{ code?: string; message: string }>;
}

describe('aptix serve with a bridged server that adds, changes and removes tools', () => {
  const space = scratch();
  let host: RunningHost;
  let model: ScriptedResponsesServer;
  const invoke = async (
    name: string,
    args: object,
  ): Promise<{ status: number; body: Envelope & { error?: { code: string; message: string } } }> => {
    const response = await fetch(`${host.url}/v1/tools/${name}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: args }),
    });
    return {
      status: response.status,
      body: (await response.json()) as Envelope & { error?: { code: string; message: string } },
    };
  };
  const listed = async (mode: string) => {
    const response = await fetch(`${host.url}/v1/tools?mode=${mode}`);
    const body = (await response.json()) as { tools: Array<{ name: string }> };
    return body.tools.map((tool) => tool.name);
  };
  const control = async (args: object) => expect((await invoke('testing_control', args)).body.errors).toEqual([]);

  beforeAll(async () => {
    const file = join(space.dir, 'live.json');
    // The prefix "testing" puts the bridged tools next to tool-samples' testing_* tools, so the server
    // can try to take one of their names.
    const bridge = {
      package: '@aptix/tool-mcp-bridge',
      startupTimeoutMs: 60_000,
      options: {
        name: 'live',
        prefix: 'testing',
        connectTimeoutMs: 30_000,
        modes: ['general'],
        stdio: { command: process.execPath, args: [LIVE, 'stdio'] },
      },
    };
    // The configuration also names a single bridged tool the server offers only later in another mode.
    writeFileSync(
      file,
      JSON.stringify({
        toolPackages: [...FIRST_PARTY, bridge],
        modes: { extend: { tool_diagnostics: ['testing_extra_1'] } },
      }),
    );
    model = await ScriptedResponsesServer.start();
    host = await startHost({
      env: {
        APTIX_DB: space.db,
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: 'test-key',
        APTIX_MODEL: 'scripted-model',
      },
      args: ['--config', file],
    });
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    space.cleanup();
  });

  it('offers a tool the server adds in the mode the bridge joins, over HTTP and to MCP clients of both revisions', async () => {
    const legacy = new Client({ name: 'aptix-test', version: '1.0.0' });
    let changed = 0;
    legacy.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    await legacy.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`)));
    const modern = new ModernClient(
      { name: 'aptix-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await modern.connect(new ModernTransport(new URL(`${host.url}/mcp`)));
    try {
      expect((await legacy.listTools()).tools.map((tool) => tool.name)).not.toContain('testing_extra_1');
      expect((await modern.listTools()).tools.map((tool) => tool.name)).not.toContain('testing_extra_1');

      expect(await listed('tool_diagnostics')).not.toContain('testing_extra_1');

      await control({ action: 'add', count: 1 });
      await vi.waitFor(async () => expect(await listed('general')).toContain('testing_extra_1'), {
        timeout: 15_000,
        interval: 50,
      });
      // The mode the configuration's "modes.extend" names it in offers it too, from the moment it exists.
      expect(await listed('tool_diagnostics')).toContain('testing_extra_1');
      expect((await invoke('testing_extra_1', { x: 5 })).body.result).toMatchObject({
        content: [{ type: 'text', text: 'extra-1: 5' }],
      });

      // A 2025 session hears list_changed on its next request's stream, and lists the new tool.
      const call = await legacy.callTool({ name: 'testing_echo', arguments: { text: 'hi' } });
      expect(call.isError).toBeFalsy();
      expect(changed).toBe(1);
      expect((await legacy.listTools()).tools.map((tool) => tool.name)).toContain('testing_extra_1');
      // A 2026-07-28 client was promised no caching of the list, so its next listing has the tool.
      expect((await modern.listTools()).tools.map((tool) => tool.name)).toContain('testing_extra_1');
      const called = await modern.callTool({ name: 'testing_extra_1', arguments: { x: 6 } });
      expect(JSON.stringify(called.content)).toContain('extra-1: 6');
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('started with a warning naming the tool the configuration puts in a mode before the server offers it', async () => {
    const warned = host.logs.find((line) =>
      String(line.msg).includes(
        'Tool "testing_extra_1" is named in mode tool_diagnostics, but no package offers it at start-up',
      ),
    );
    expect(String(warned?.msg)).toContain(
      '"@aptix/tool-mcp-bridge" (whose tools change while the host runs) offers it',
    );
    await vi.waitFor(
      () =>
        expect(
          host.logs.some((line) =>
            String(line.msg).includes(
              'Tool "testing_extra_1" from "@aptix/tool-mcp-bridge" is now offered. It joins the modes the catalog names it in (tool_diagnostics).',
            ),
          ),
        ).toBe(true),
      { timeout: 5_000, interval: 50 },
    );
  });

  it('stops offering a removed tool; a call by its name says why', async () => {
    await control({ action: 'remove', name: 'extra-1' });
    await vi.waitFor(async () => expect(await listed('general')).not.toContain('testing_extra_1'), {
      timeout: 15_000,
      interval: 50,
    });
    expect(await listed('tool_diagnostics')).not.toContain('testing_extra_1');
    const gone = await invoke('testing_extra_1', { x: 5 });
    expect(gone.status).toBe(404);
    expect(JSON.stringify(gone.body)).toContain('is no longer offered');
    // Over MCP: the protocol's unknown-tool error, saying why.
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`)));
    try {
      await expect(client.callTool({ name: 'testing_extra_1', arguments: { x: 5 } })).rejects.toThrow(
        /Unknown tool: "testing_extra_1"\. Tool "testing_extra_1" from "@aptix\/tool-mcp-bridge" is no longer offered/,
      );
    } finally {
      await client.close();
    }
  });

  it("reaches the agent loop: the model is offered the new tool with its usage guide in the session's mode", async () => {
    await control({ action: 'add', count: 1 });
    await vi.waitFor(async () => expect(await listed('general')).toContain('testing_extra_2'), {
      timeout: 15_000,
      interval: 50,
    });
    const session = (await (
      await fetch(`${host.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
    ).json()) as { id: string };
    model.script(respond('Noted.'));
    const before = model.requests.length;
    const reply = await fetch(`${host.url}/v1/sessions/${session.id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'What can you do?' }),
    });
    expect(reply.status).toBe(200);
    const [request] = model.requests.slice(before);
    expect(request!.body.tools.map((tool: { name: string }) => tool.name)).toContain('testing_extra_2');
    expect(request!.body.tools.map((tool: { name: string }) => tool.name)).not.toContain('testing_extra_1');
    expect(request!.body.instructions).toContain('testing_extra_2');
  });

  it('offers a changed schema once it passes the contract, and withdraws one that fails it, naming why in the log', async () => {
    await control({ action: 'change_shape' });
    await vi.waitFor(
      async () => expect((await invoke('testing_shape', { a: 1 })).body.errors[0]?.code).toBe('INVALID_ARGUMENTS'),
      { timeout: 15_000, interval: 50 },
    );
    expect((await invoke('testing_shape', { a: 1, b: 2 })).body.successful).toBe(true);
    await control({ action: 'break_shape' });
    await vi.waitFor(async () => expect(await listed('general')).not.toContain('testing_shape'), {
      timeout: 15_000,
      interval: 50,
    });
    // The log reaches the test over the child's stdout, which may trail the HTTP answer.
    await vi.waitFor(
      () =>
        expect(
          host.logs.some(
            (line) => line.tag === '[McpBridge_SchemaRejected]' && String(line.msg).includes('refers to itself'),
          ),
        ).toBe(true),
      { timeout: 5_000, interval: 50 },
    );
    expect((await invoke('testing_echo', { text: 'still' })).body.successful).toBe(true);
  });

  it("a server that renames a tool onto a host tool's name is refused (DUPLICATE_TOOL); the host tool keeps answering", async () => {
    await control({ action: 'rename', name: 'echo', to: 'calculator' });
    await vi.waitFor(async () => expect(await listed('general')).not.toContain('testing_echo'), {
      timeout: 15_000,
      interval: 50,
    });
    await vi.waitFor(
      () =>
        expect(
          host.logs.some(
            (line) =>
              String(line.msg).includes('Tool "testing_calculator" from "@aptix/tool-mcp-bridge" is not offered') &&
              String(line.msg).includes('DUPLICATE_TOOL'),
          ),
        ).toBe(true),
      { timeout: 5_000, interval: 50 },
    );
    const local = await invoke('testing_calculator', { operation: 'multiply', a: 6, b: 7 });
    expect(local.body.result).toMatchObject({ value: 42 });
    expect(host.child.exitCode).toBeNull();
  });
});

describe('the same with the bridge in worker isolation', () => {
  const space = scratch();
  let host: RunningHost;
  const invoke = async (name: string, args: object) => {
    const response = await fetch(`${host.url}/v1/tools/${name}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: args }),
    });
    return { status: response.status, body: (await response.json()) as Envelope };
  };
  const listed = async (mode: string) =>
    ((await (await fetch(`${host.url}/v1/tools?mode=${mode}`)).json()) as { tools: Array<{ name: string }> }).tools.map(
      (tool) => tool.name,
    );

  beforeAll(async () => {
    const file = join(space.dir, 'isolated.json');
    // One worker: a stdio server is started per worker, and the test changes the one it talks to.
    const bridge = {
      package: '@aptix/tool-mcp-bridge',
      isolation: 'worker',
      workers: 1,
      startupTimeoutMs: 60_000,
      options: {
        name: 'live',
        connectTimeoutMs: 30_000,
        modes: ['general'],
        stdio: { command: process.execPath, args: [LIVE, 'stdio'] },
      },
    };
    writeFileSync(file, JSON.stringify({ toolPackages: [...FIRST_PARTY, bridge] }));
    host = await startHost({ env: { APTIX_DB: space.db }, args: ['--config', file] });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('offers the tools its worker reports after a change, in the modes the bridge joins, and withdraws removed ones', async () => {
    expect(await listed('general')).toContain('live_echo');
    expect((await invoke('live_control', { action: 'add', count: 1 })).body.errors).toEqual([]);
    await vi.waitFor(async () => expect(await listed('general')).toContain('live_extra_1'), {
      timeout: 15_000,
      interval: 50,
    });
    expect((await invoke('live_extra_1', { x: 3 })).body.result).toMatchObject({
      content: [{ type: 'text', text: 'extra-1: 3' }],
    });
    expect((await invoke('live_control', { action: 'remove', name: 'extra-1' })).body.errors).toEqual([]);
    await vi.waitFor(async () => expect(await listed('general')).not.toContain('live_extra_1'), {
      timeout: 15_000,
      interval: 50,
    });
    expect((await invoke('live_extra_1', { x: 3 })).status).toBe(404);
  });
});

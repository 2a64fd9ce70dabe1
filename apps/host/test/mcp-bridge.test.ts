import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort, runCli, scratch, startHost, type RunningHost } from './support.js';

// Real MCP servers from the npm registry, bridged into a real `aptix` process configured by file.
const require = createRequire(import.meta.url);
const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json');
const EVERYTHING = join(
  dirname(manifest),
  (require(manifest) as { bin: Record<string, string> }).bin['mcp-server-everything']!,
);
const FIRST_PARTY = ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'];
/** The bridge's own fixture: an MCP server on the v2 server SDK whose tool list changes while it runs. */
const CHANGING = join(
  dirname(require.resolve('@aptix/tool-mcp-bridge/package.json')),
  'test',
  'fixtures',
  'changing-server.mjs',
);

/** server-everything over Streamable HTTP, as its own process (so a test can kill it and start it again). */
async function everythingOverHttp(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('listening on port')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${text}`)));
  });
  return child;
}

async function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

describe('MCP servers bridged into aptix, configured by file', () => {
  const space = scratch();
  const env = { APTIX_DB: space.db, BRIDGE_E2E_TOKEN: 'from-the-environment' };
  const config = (name: string, bridges: object[]) => {
    const file = join(space.dir, name);
    // Generous time limits: two cores shared by many test runs can make a server slow to start.
    const entry = (bridge: { options: object }) => ({
      package: '@aptix/tool-mcp-bridge',
      startupTimeoutMs: 60_000,
      ...bridge,
      options: { connectTimeoutMs: 30_000, ...bridge.options },
    });
    writeFileSync(
      file,
      JSON.stringify({
        toolPackages: [...FIRST_PARTY, ...bridges.map((bridge) => entry(bridge as { options: object }))],
      }),
    );
    return file;
  };
  const stdioEverything = {
    options: {
      name: 'everything',
      stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      modes: ['general'],
    },
  };
  afterAll(() => space.cleanup());

  it('aptix check runs the contract check on the bridged tools, and tools list shows them in the mode they join', async () => {
    const file = config('stdio.json', [stdioEverything]);
    const check = await runCli(['--config', file, 'check'], { env });
    expect(check.code).toBe(0);
    const report = check.json<{ ok: boolean; toolPackages: Array<{ name: string; tools: string[] }> }>();
    expect(report.ok).toBe(true);
    const bridged = report.toolPackages.find((entry) => entry.name === '@aptix/tool-mcp-bridge');
    expect(bridged?.tools).toEqual(
      expect.arrayContaining(['everything_echo', 'everything_get_sum', 'everything_get_structured_content']),
    );

    const listed = await runCli(['--config', file, 'tools', 'list', '--mode', 'general'], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('everything_echo');
  });

  it('aptix tools call forwards a call to the stdio server and exits when done', async () => {
    const run = await runCli(
      [
        '--config',
        config('call.json', [stdioEverything]),
        'tools',
        'call',
        'everything_get_structured_content',
        '{"location":"Los Angeles"}',
      ],
      { env },
    );
    expect(run.code).toBe(0);
    const output = run.json<{ successful: boolean; result: { structuredContent: unknown } }>();
    expect(output.successful).toBe(true);
    expect(output.result.structuredContent).toEqual({ temperature: 73, conditions: 'Sunny / Clear', humidity: 48 });
  });

  it('runs in worker isolation too: each worker holds its own bridge', async () => {
    const isolated = { ...stdioEverything, isolation: 'worker', workers: 1 };
    const run = await runCli(
      [
        '--config',
        config('worker.json', [isolated]),
        'tools',
        'call',
        'everything_echo',
        '{"message":"from a worker"}',
      ],
      { env },
    );
    expect(run.code).toBe(0);
    expect(run.json<{ result: unknown }>().result).toMatchObject({
      content: [{ type: 'text', text: 'Echo: from a worker' }],
    });
  });

  it('an unreachable server stops start-up naming it, unless its entry is optional', async () => {
    const missing = { options: { name: 'ghost', stdio: { command: join(space.dir, 'no-such-server') } } };
    const stopped = await runCli(['--config', config('required.json', [missing]), 'check'], { env });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain('MCP server "ghost"');
    const skipped = await runCli(
      ['--config', config('optional.json', [{ ...missing, optional: true }, stdioEverything]), 'check'],
      { env },
    );
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toMatch(/optional tool package skipped: .*MCP server \\"ghost\\" .*cannot be reached/);
    expect(JSON.stringify(skipped.json())).toContain('everything_echo');
  });

  describe('aptix serve with a Streamable HTTP server that goes away and comes back', () => {
    let port: number;
    let server: ChildProcess | undefined;
    let host: RunningHost | undefined;
    let file: string;
    const invoke = async (name: string, args: object) => {
      const response = await fetch(`${host!.url}/v1/tools/${name}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: args }),
      });
      return (await response.json()) as {
        successful: boolean;
        result: Record<string, unknown> | null;
        errors: Array<{ code?: string; message: string }>;
      };
    };
    beforeAll(async () => {
      port = await freePort();
      server = await everythingOverHttp(port);
      file = config('serve.json', [
        {
          options: {
            name: 'remote',
            http: {
              url: `http://127.0.0.1:${port}/mcp`,
              headers: { Authorization: { env: 'BRIDGE_E2E_TOKEN', prefix: 'Bearer ' } },
            },
            timeoutMs: 3_000,
            reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
          },
        },
      ]);
      host = await startHost({ env, args: ['--config', file] });
    });
    afterAll(async () => {
      await host?.stop();
      await kill(server);
    });

    it('serves the bridged tools over HTTP with the server errors as failed results', async () => {
      const echo = await invoke('remote_echo', { message: 'through the host' });
      expect(echo.successful).toBe(true);
      expect(echo.result).toMatchObject({ content: [{ type: 'text', text: 'Echo: through the host' }] });
      const refused = await invoke('remote_gzip_file_as_resource', { data: 'file:///etc/passwd' });
      expect(refused.errors[0]?.code).toBe('REMOTE_TOOL_ERROR');
    });

    it("stops a call at the bridged tool's time-out with TIMEOUT, and the server answers the next one", async () => {
      const slow = await invoke('remote_trigger_long_running_operation', { duration: 30, steps: 3 });
      expect(slow.successful).toBe(false);
      expect(slow.errors[0]?.code).toBe('TIMEOUT');
      expect((await invoke('remote_echo', { message: 'next' })).successful).toBe(true);
    });

    it('a one-shot command exits once done: the host closes the bridge and its HTTP notification stream', async () => {
      const check = await runCli(['--config', file, 'check'], { env });
      expect(check.code).toBe(0);
      expect(JSON.stringify(check.json())).toContain('remote_echo');
    });

    it('answers REMOTE_UNAVAILABLE while the server is down, keeps serving the rest, and reconnects', async () => {
      await kill(server);
      const down = await invoke('remote_echo', { message: 'anyone?' });
      expect(down.successful).toBe(false);
      expect(down.errors[0]?.code).toBe('REMOTE_UNAVAILABLE');
      const local = await invoke('testing_calculator', { operation: 'multiply', a: 6, b: 7 });
      expect(local.result).toMatchObject({ value: 42 });
      server = await everythingOverHttp(port);
      await vi.waitFor(async () => expect((await invoke('remote_echo', { message: 'back' })).successful).toBe(true), {
        timeout: 15_000,
        interval: 100,
      });
      expect(host!.child.exitCode).toBeNull();
    });
  });

  describe('aptix serve with a server that changes its tool list', () => {
    let host: RunningHost | undefined;
    const invoke = async (name: string, args: object) => {
      const response = await fetch(`${host!.url}/v1/tools/${name}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: args }),
      });
      return (await response.json()) as {
        successful: boolean;
        result: Record<string, unknown> | null;
        errors: Array<{ code?: string; message: string }>;
      };
    };
    beforeAll(async () => {
      host = await startHost({
        env,
        args: [
          '--config',
          config('changing.json', [
            { options: { name: 'calc', stdio: { command: process.execPath, args: [CHANGING] } } },
          ]),
        ],
      });
    });
    afterAll(() => host?.stop());

    it('follows tools/list_changed: a removed tool is no longer offered, a changed schema is checked, logged and offered, a new tool is offered', async () => {
      expect((await invoke('calc_add', { a: 1, b: 2 })).result).toMatchObject({ structuredContent: { value: 3 } });
      expect((await invoke('calc_reshape', {})).successful).toBe(true);
      await vi.waitFor(
        async () => expect(JSON.stringify(await invoke('calc_retire', {}))).toContain('is no longer offered'),
        { timeout: 10_000, interval: 50 },
      );
      expect((await invoke('calc_multiply', { a: 6, b: 7 })).result).toMatchObject({
        content: [{ type: 'text', text: '42' }],
      });
      const old = await invoke('calc_add', { a: 1, b: 2 });
      expect(old.errors[0]?.code).toBe('INVALID_ARGUMENTS');
      expect((await invoke('calc_add', { a: 1, b: 2, c: 3 })).result).toMatchObject({
        structuredContent: { value: 6 },
      });
      // The log reaches the test over the child's stdout, which may trail the HTTP answers.
      await vi.waitFor(
        () =>
          expect(
            host!.logs.some(
              (line) => line.tag === '[McpBridge_SchemaChanged]' && String(line.msg).includes('arguments added: c'),
            ),
          ).toBe(true),
        { timeout: 5_000, interval: 50 },
      );
    });
  });
});

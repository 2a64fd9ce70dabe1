import { spawn, spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, freePort, HOST_ROOT, scratch, startHost, type RunningHost } from './support.js';

/** Reports on stderr any AsyncLocalStorage or async hook made in the process it is preloaded into. */
const PROBE = join(HOST_ROOT, 'test', 'fixtures', 'async-context', 'probe.cjs');
const MARK = 'ASYNC_CONTEXT_USED';

type Line = Record<string, unknown>;

/** What a node process running `args` with the probe preloaded writes to stderr. */
function probed(...args: string[]): string {
  return spawnSync(process.execPath, ['--require', PROBE, ...args], { encoding: 'utf8' }).stderr;
}

/** The lines logged from `from` on, once the host has had a moment to flush them (pino writes asynchronously). */
async function linesSince(
  host: Pick<RunningHost, 'logs'>,
  from: number,
  until: (lines: Line[]) => boolean,
): Promise<Line[]> {
  for (let i = 0; i < 100 && !until(host.logs.slice(from)); i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return host.logs.slice(from);
}

async function invoke(host: Pick<RunningHost, 'url'>, tool: string, args: unknown, requestId: string): Promise<number> {
  const response = await fetch(`${host.url}/v1/tools/${tool}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ arguments: args }),
  });
  await response.text();
  return response.status;
}

describe('request-scoped logging, in a real aptix serve at LOG_LEVEL=info', () => {
  const space = scratch();
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({ env: { APTIX_DB: space.db, LOG_LEVEL: 'info', NODE_OPTIONS: `--require ${PROBE}` } });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('the probe would see an AsyncLocalStorage or an async hook, made from ESM or CommonJS (so its silence below means something)', () => {
    expect(probed('-e', "new (require('node:async_hooks').AsyncLocalStorage)()")).toContain(
      `${MARK} AsyncLocalStorage`,
    );
    expect(probed('-e', "require('node:async_hooks').createHook({})")).toContain(`${MARK} async_hooks.createHook`);
    expect(
      probed(
        '--input-type=module',
        '-e',
        "import { AsyncLocalStorage } from 'node:async_hooks'; new AsyncLocalStorage();",
      ),
    ).toContain(`${MARK} AsyncLocalStorage`);
    expect(probed('-e', '1 + 1')).not.toContain(MARK);
  });

  it("every line of one request carries its id, the tool's own and the executor's included", async () => {
    const from = host.logs.length;
    expect(await invoke(host, 'testing_failure_injection', { mode: 'exception', payload: 'p-exc' }, 'req-exc-1')).toBe(
      200,
    );
    const lines = await linesSince(host, from, (seen) => seen.some((line) => line.msg === 'request completed'));
    // The host is otherwise idle: everything logged from the request on belongs to it.
    // The tool's exception line and the request's access line, at least.
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line.reqId, JSON.stringify(line)).toBe('req-exc-1');
    expect(
      lines.some(
        (line) =>
          line.tag === '[testing_failure_injection_ExecuteAsync__Exception]' && String(line.msg).includes('p-exc'),
      ),
    ).toBe(true);
    // One access line per request at info, once answered: what was asked and how it ended.
    const completed = lines.filter((line) => line.msg === 'request completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({
      method: 'POST',
      url: '/v1/tools/testing_failure_injection/invoke',
      statusCode: 200,
    });
    expect(lines.some((line) => line.msg === 'incoming request')).toBe(false);
  });

  it("the tool's custom event and the executor's malformed-result line carry their own request's id", async () => {
    const from = host.logs.length;
    await Promise.all([
      invoke(host, 'testing_failure_injection', { mode: 'error', payload: 'p-err' }, 'req-err-2'),
      invoke(host, 'testing_failure_injection', { mode: 'malformed_json' }, 'req-bad-3'),
    ]);
    const lines = await linesSince(
      host,
      from,
      (seen) => seen.filter((line) => line.msg === 'request completed').length >= 2,
    );
    expect(
      lines.find((line) => line.tag === 'FailureInjectionTool.ExecuteAsync' && line.Payload === 'p-err')?.reqId,
    ).toBe('req-err-2');
    expect(lines.find((line) => line.tag === '[testing_failure_injection_ExecuteAsync__MalformedResult]')?.reqId).toBe(
      'req-bad-3',
    );
    for (const line of lines) expect(['req-err-2', 'req-bad-3']).toContain(line.reqId);
  });

  it('a tool called over MCP (/mcp) logs with the id of the HTTP request that carried the call', async () => {
    // An agent session in the mode that offers the failure injection tool, joined by the MCP session.
    const created = await fetch(`${host.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'tool_diagnostics' }),
    });
    const { id } = (await created.json()) as { id: string };
    const transport = new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
      requestInit: { headers: { 'x-request-id': 'req-mcp-4', 'x-aptix-session-id': id } },
    });
    const client = new Client({ name: 'request-logging-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const from = host.logs.length;
      const result = await client.callTool({
        name: 'testing_failure_injection',
        arguments: { mode: 'exception', payload: 'p-mcp' },
      });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain('failed to process arguments');
      const lines = await linesSince(host, from, (seen) => seen.some((line) => String(line.msg).includes('p-mcp')));
      expect(lines.find((line) => String(line.msg).includes('p-mcp'))?.reqId).toBe('req-mcp-4');
    } finally {
      await client.close();
    }
  });

  it('a client that hangs up before its answer still leaves an access line, saying so and giving no status it never got', async () => {
    const from = host.logs.length;
    const body = JSON.stringify({ arguments: { milliseconds: 3000 } });
    const url = new URL(`${host.url}/v1/tools/testing_delay/invoke`);
    const sent = httpRequest(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-request-id': 'req-gone-6',
      },
    });
    sent.on('error', () => undefined);
    sent.end(body);
    await new Promise((resolve) => setTimeout(resolve, 300));
    sent.destroy();
    const lines = await linesSince(host, from, (seen) =>
      seen.some((line) => line.reqId === 'req-gone-6' && String(line.msg).startsWith('request aborted')),
    );
    const mine = lines.filter((line) => line.reqId === 'req-gone-6' && String(line.msg).startsWith('request'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      method: 'POST',
      url: '/v1/tools/testing_delay/invoke',
      msg: 'request aborted: the connection closed before its answer was sent',
    });
    expect(mine[0]).not.toHaveProperty('statusCode');
    expect(mine[0]!.responseTime).toBeGreaterThan(0);
  });

  it('no AsyncLocalStorage and no async hook was made in the host process', async () => {
    await invoke(host, 'testing_calculator', { operation: 'add', a: 1, b: 2 }, 'req-calc-5');
    expect(host.output()).not.toContain(MARK);
  });
});

/**
 * `aptix serve` at LOG_LEVEL=warn, which says nothing when it listens: ready once /healthz answers.
 * Its log lines (stdout) are parsed into `logs`.
 */
async function startQuietHost(env: NodeJS.ProcessEnv): Promise<{ url: string; logs: Line[]; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
    cwd: HOST_ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const logs: Line[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => logs.push(JSON.parse(line) as Line));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`aptix serve exited with ${child.exitCode} before listening`);
    const ok = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (i > 600) throw new Error('aptix serve did not listen');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, logs, stop: async () => void (child.kill('SIGTERM'), await exited) };
}

describe("request-scoped logging at LOG_LEVEL=warn (no access line; a request's logger made only when it logs)", () => {
  const space = scratch();
  let host: Awaited<ReturnType<typeof startQuietHost>>;
  beforeAll(async () => {
    host = await startQuietHost({ APTIX_DB: space.db });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it("the tool's and the executor's lines carry their own request's id; a quiet request writes nothing", async () => {
    const from = host.logs.length;
    await Promise.all([
      invoke(host, 'testing_ping_pong', { message: 'quiet' }, 'warn-quiet-1'),
      invoke(host, 'testing_failure_injection', { mode: 'exception', payload: 'w-exc' }, 'warn-exc-2'),
      invoke(host, 'testing_failure_injection', { mode: 'malformed_json' }, 'warn-bad-3'),
    ]);
    const lines = await linesSince(
      host,
      from,
      (seen) =>
        seen.some((line) => String(line.msg).includes('w-exc')) &&
        seen.some((line) => String(line.tag).includes('MalformedResult')),
    );
    expect(lines.find((line) => String(line.msg).includes('w-exc'))?.reqId).toBe('warn-exc-2');
    expect(lines.find((line) => line.tag === '[testing_failure_injection_ExecuteAsync__MalformedResult]')?.reqId).toBe(
      'warn-bad-3',
    );
    for (const line of lines) expect(['warn-exc-2', 'warn-bad-3']).toContain(line.reqId);
    expect(lines.some((line) => line.msg === 'request completed')).toBe(false);
  });
});

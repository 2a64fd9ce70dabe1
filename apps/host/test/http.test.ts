import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli, scratch, startHost, type RunningHost } from './support.js';

async function call(
  host: RunningHost,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const response = await fetch(host.url + path, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json') ?? false;
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: json && text ? (JSON.parse(text) as Record<string, any>) : undefined,
  };
}

/** A raw request with a Host header of our choosing (fetch will not let us set it). */
function rawGet(url: string, path: string, headers: Record<string, string>): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTP, over real sockets', () => {
  const space = scratch();
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({ env: { APTIX_DB: space.db } });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('logs where it listens, the docs and the tool packages it loaded', () => {
    const banner = host.logs.find((line) => String(line.msg).startsWith('Aptix listening'))!;
    expect(banner).toMatchObject({
      docs: `${host.url}/docs`,
      mcp: `${host.url}/mcp`,
      toolPackages: ['@aptix/tool-samples@0.1.0', '@aptix/tool-mode-catalog@0.1.0', '@aptix/tool-mode-change@0.1.0'],
    });
  });

  it('answers /healthz', async () => {
    expect((await call(host, '/healthz')).body).toEqual({ status: 'ok', tools: 8, modes: 3 });
  });

  it('lists tools in both OpenAI formats, for all or for one mode', async () => {
    const all = await call(host, '/v1/tools');
    expect(all.body!.tools).toHaveLength(8);
    expect(all.body!.tools[0]).toMatchObject({ type: 'function', name: 'agent_hello_world', strict: true });
    const chat = await call(host, '/v1/tools?format=chat&mode=ddr_authoring');
    expect(
      chat.body!.tools.every(
        (t: any) =>
          t.type === 'function' && typeof t.function.name === 'string' && typeof t.function.strict === 'boolean',
      ),
    ).toBe(true);
    expect(chat.body!.tools.map((t: any) => t.function.name)).toContain('agent_change_mode');
    expect((await call(host, '/v1/tools?mode=nope')).status).toBe(400);
    expect((await call(host, '/v1/tools?format=xml')).status).toBe(400);
  });

  it('describes one tool, with its usage guidance, and 404s an unknown one', async () => {
    const tool = await call(host, '/v1/tools/testing_ping_pong');
    expect(tool.body).toMatchObject({
      name: 'testing_ping_pong',
      usageMetadata: expect.stringContaining('Primary purpose'),
      definitions: { chat: { function: { name: 'testing_ping_pong' } } },
    });
    expect((await call(host, '/v1/tools/nope')).status).toBe(404);
  });

  it('lists the modes', async () => {
    expect((await call(host, '/v1/modes')).body!.modes.map((m: any) => m.key)).toEqual([
      'general',
      'ddr_authoring',
      'tool_diagnostics',
    ]);
  });

  it('invokes a tool with arguments as an object or as a JSON string', async () => {
    const asObject = await call(host, '/v1/tools/testing_ping_pong/invoke', {
      body: { arguments: { message: 'hi', count: 2 }, context: { conversationId: 'c-7' } },
    });
    expect(asObject.status).toBe(200);
    expect(asObject.body).toMatchObject({ successful: true, result: { conversationId: 'c-7' }, errors: [] });
    const asString = await call(host, '/v1/tools/testing_ping_pong/invoke', {
      body: { arguments: '{"message":"hi"}' },
    });
    expect(asString.body).toMatchObject({ successful: true, errors: [] });
    expect(asString.headers.get('x-request-id')).toBeTruthy();
  });

  it('returns 200 with the failure for a call that reached validation or the tool', async () => {
    const invalid = await call(host, '/v1/tools/testing_calculator/invoke', {
      body: { arguments: { operation: 'pow', a: 1 } },
    });
    expect(invalid.status).toBe(200);
    expect(invalid.body).toMatchObject({ successful: false, result: null, errors: [{ code: 'INVALID_ARGUMENTS' }] });
    expect(invalid.body!.errors[0].message).toContain("'b' is required");
    const thrown = await call(host, '/v1/tools/testing_failure_injection/invoke', {
      body: { arguments: { mode: 'exception' } },
    });
    expect(thrown.body).toMatchObject({ successful: false, errors: [{ code: 'TOOL_EXCEPTION' }] });
    expect(thrown.text).not.toMatch(/\bat \S+:\d+/);
  });

  it('404s an unknown tool and 400s a malformed body', async () => {
    expect((await call(host, '/v1/tools/nope/invoke', { body: { arguments: {} } })).status).toBe(404);
    expect((await call(host, '/v1/tools/testing_ping_pong/invoke', { body: '{"arguments":' })).status).toBe(400);
    expect((await call(host, '/v1/tools/testing_ping_pong/invoke', { body: { args: {} } })).status).toBe(400);
    const notJson = await call(host, '/v1/tools/testing_ping_pong/invoke', { body: '[1]' });
    expect(notJson.status).toBe(400);
    expect(notJson.text).not.toMatch(/\bat \S+:\d+/);
  });

  it('checks the mode when the tool runs, not when the tools were listed, and says to list them again', async () => {
    const { id } = (await call(host, '/v1/sessions', { body: { mode: 'tool_diagnostics' } })).body!;
    const listed = await call(host, `/v1/tools?sessionId=${id}`);
    expect(listed.body!.tools.map((t: any) => t.name)).toContain('testing_ping_pong');
    // Another client moves the session; this caller still holds the old list.
    const change = await call(host, '/v1/tools/agent_change_mode/invoke', {
      body: {
        arguments: { mode: 'general', branch: false, reason: 'Back to everyday help.' },
        context: { sessionId: id },
      },
    });
    expect(change.body).toMatchObject({ successful: true, result: { mode: 'general' } });
    const refused = await call(host, '/v1/tools/testing_ping_pong/invoke', {
      body: { arguments: { message: 'hi' }, context: { sessionId: id } },
    });
    expect(refused.status).toBe(403);
    expect(refused.body!.error.code).toBe('TOOL_NOT_IN_MODE');
    expect(refused.body!.error.message).toMatch(
      /^Tool "testing_ping_pong" is not offered in mode "general" \(session [\w-]+\); it was not run\. .*list the tools again/,
    );
  });

  it('creates and shows sessions, and keeps a tool call inside the session mode', async () => {
    const created = await call(host, '/v1/sessions', { body: { mode: 'ddr_authoring' } });
    expect(created.status).toBe(201);
    const { id } = created.body!;
    const refused = await call(host, '/v1/tools/testing_calculator/invoke', {
      body: { arguments: { operation: 'add', a: 1, b: 2 }, context: { sessionId: id } },
    });
    expect(refused.status).toBe(403);
    expect(refused.body!.error).toMatchObject({
      code: 'TOOL_NOT_IN_MODE',
      message: expect.stringContaining('"ddr_authoring"'),
    });
    const change = await call(host, '/v1/tools/agent_change_mode/invoke', {
      body: {
        arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Debugging a tool.' },
        context: { sessionId: id },
      },
    });
    expect(change.body).toMatchObject({
      successful: true,
      result: { success: true, mode: 'tool_diagnostics', sessionId: id },
    });
    const tools = await call(host, `/v1/tools?sessionId=${id}`);
    expect(tools.body!.tools.map((t: any) => t.name)).toContain('testing_calculator');
    const shown = await call(host, `/v1/sessions/${id}`);
    expect(shown.body).toMatchObject({
      id,
      mode: 'tool_diagnostics',
      history: [{ fromMode: 'ddr_authoring', toMode: 'tool_diagnostics', reason: 'Debugging a tool.', branch: false }],
    });
    expect((await call(host, '/v1/sessions/missing')).status).toBe(404);
    expect((await call(host, '/v1/sessions', { body: { mode: 'nope' } })).status).toBe(400);
  });

  it('serves OpenAPI and the docs', async () => {
    const spec = await call(host, '/openapi.json');
    expect(spec.body!.openapi).toMatch(/^3\./);
    expect(Object.keys(spec.body!.paths)).toEqual(
      expect.arrayContaining(['/v1/tools', '/v1/tools/{name}/invoke', '/v1/sessions', '/v1/sessions/{id}']),
    );
    expect((await call(host, '/docs/')).status).toBe(200);
  });

  it('refuses another Host or a foreign Origin with 403 (DNS rebinding)', async () => {
    expect(await rawGet(host.url, '/healthz', { host: 'evil.example:80' })).toBe(403);
    expect(await rawGet(host.url, '/healthz', { host: new URL(host.url).host, origin: 'http://evil.example' })).toBe(
      403,
    );
    expect(await rawGet(host.url, '/healthz', { host: new URL(host.url).host, origin: host.url })).toBe(200);
    expect(await rawGet(host.url, '/healthz', { host: `localhost:${new URL(host.url).port}` })).toBe(200);
  });

  it('answers an oversized body with 413', async () => {
    const big = await call(host, '/v1/tools/testing_ping_pong/invoke', {
      body: { arguments: { message: 'x'.repeat(2 * 1024 * 1024) } },
    });
    expect(big.status).toBe(413);
    expect(big.body!.error.code).toBe('BODY_TOO_LARGE');
  });

  it("puts the request id in every log line of a request, the tools' included", async () => {
    await call(host, '/v1/tools/testing_failure_injection/invoke', {
      body: { arguments: { mode: 'error', payload: 'p-1' } },
      headers: { 'x-request-id': 'req-trace-1' },
    });
    // The lines reach the test over the host's stdout, which may trail the answer.
    const lines = () => host.logs.filter((line) => line.reqId === 'req-trace-1');
    await vi.waitFor(() => expect(lines().some((line) => line.msg === 'request completed')).toBe(true), {
      timeout: 10_000,
      interval: 50,
    });
    expect(lines().some((line) => line.tag === 'FailureInjectionTool.ExecuteAsync' && line.Payload === 'p-1')).toBe(
      true,
    );
    expect(lines().find((line) => line.msg === 'request completed')).toMatchObject({
      method: 'POST',
      url: '/v1/tools/testing_failure_injection/invoke',
      statusCode: 200,
    });
  });
});

describe('HTTP: lifecycle and security', () => {
  it('refuses to listen beyond loopback without an API key', async () => {
    const space = scratch();
    const run = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], { env: { APTIX_DB: space.db } });
    space.cleanup();
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('without an API key');
  });

  it('requires the API key on /v1/* and /mcp when one is set', async () => {
    const space = scratch();
    const key = 'k'.repeat(32);
    const host = await startHost({ env: { APTIX_DB: space.db, APTIX_API_KEY: key } });
    try {
      expect((await call(host, '/v1/tools')).status).toBe(401);
      expect((await call(host, '/v1/tools', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      expect((await call(host, '/mcp', { body: {} })).status).toBe(401);
      expect((await call(host, '/v1/tools', { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      expect((await call(host, '/healthz')).status).toBe(200);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });

  it('finishes the calls in flight on SIGTERM, then exits 0; sessions survive the restart', async () => {
    const space = scratch();
    const first = await startHost({ env: { APTIX_DB: space.db } });
    const { id } = (await call(first, '/v1/sessions', { body: {} })).body!;
    await call(first, '/v1/tools/agent_change_mode/invoke', {
      body: {
        arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Restart test.' },
        context: { sessionId: id },
      },
    });
    const inFlight = call(first, '/v1/tools/testing_delay/invoke', {
      body: { arguments: { milliseconds: 1500 }, context: { sessionId: id } },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const code = await first.stop('SIGTERM');
    const answered = await inFlight;
    expect(code).toBe(0);
    expect(answered.body).toMatchObject({ successful: true, result: { wasCancelled: false, requestedMs: 1500 } });

    const second = await startHost({ env: { APTIX_DB: space.db } });
    try {
      expect((await call(second, `/v1/sessions/${id}`)).body).toMatchObject({
        id,
        mode: 'tool_diagnostics',
        history: [{ toMode: 'tool_diagnostics' }],
      });
    } finally {
      await second.stop();
      space.cleanup();
    }
  });
});

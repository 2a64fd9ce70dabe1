import { call, respond } from '@aptix/reasoner/testing';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { BIN, HOST_ROOT, runCli, scratch, startHost, type RunningHost } from './support.js';
import { hostWithScriptedModel } from './suites.js';

async function post(host: RunningHost, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(host.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** Parses a server-sent-event stream into its events' JSON data. */
function parseEvents(text: string): Array<Record<string, any>> {
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, any>);
}

describe('the agent loop through the host, against a scripted Responses endpoint', () => {
  const suite = hostWithScriptedModel();

  it('POST /v1/sessions/:id/messages runs the tools the model calls and returns the answer', async () => {
    const { host, model } = suite;
    const { id } = (await (await post(host, '/v1/sessions', {})).json()) as { id: string };
    model.script(
      respond(undefined, call('call_1', 'testing_calculator', { operation: 'add', a: 2, b: 3 })),
      respond('2 + 3 = 5.'),
    );
    const before = model.requests.length;
    const response = await post(host, `/v1/sessions/${id}/messages`, { input: 'What is 2 + 3?' });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      sessionId: id,
      mode: 'general',
      output: '2 + 3 = 5.',
      toolCalls: [{ name: 'testing_calculator', successful: true }],
    });

    const [first, second] = model.requests.slice(before);
    expect(first!.body.model).toBe('scripted-model');
    expect(first!.body.tools.map((t) => t.name)).toEqual([
      'agent_hello_world',
      'testing_calculator',
      'agent_list_modes',
      'agent_change_mode',
    ]);
    expect(first!.body.tools.every((t) => typeof t.strict === 'boolean')).toBe(true);
    expect(first!.body.instructions).toContain('testing_calculator — Usage Guide');
    expect(first!.body.instructions).not.toContain('testing_delay — Usage Guide');
    const output = second!.body.input.find((item) => item.type === 'function_call_output' && item.call_id === 'call_1');
    expect(JSON.parse(String(output!.output))).toMatchObject({ value: 5 });
  });

  it('streams text deltas and tool events as server-sent events', async () => {
    const { host, model } = suite;
    const { id } = (await (await post(host, '/v1/sessions', {})).json()) as { id: string };
    model.script(respond(undefined, call('call_2', 'agent_hello_world', { name: 'Ada' })), respond('Hello, Ada!'));
    const response = await post(
      host,
      `/v1/sessions/${id}/messages`,
      { input: 'Greet Ada.' },
      { accept: 'text/event-stream' },
    );
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = parseEvents(await response.text());
    const types = events.map((event) => event.type);
    expect(types).toContain('tool_call_started');
    expect(types).toContain('tool_call_finished');
    expect(
      events
        .filter((event) => event.type === 'text_delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe('Hello, Ada!');
    expect(types.at(-1)).toBe('turn_ended');
  });

  it("streams a tool's progress during the turn as tool_call_progress events naming the call", async () => {
    const { host, model } = suite;
    const { id } = (await (await post(host, '/v1/sessions', { mode: 'tool_diagnostics' })).json()) as { id: string };
    model.script(respond(undefined, call('call_wait', 'testing_delay', { milliseconds: 200 })), respond('Waited.'));
    const response = await post(
      host,
      `/v1/sessions/${id}/messages`,
      { input: 'Wait a moment.' },
      { accept: 'text/event-stream' },
    );
    const events = parseEvents(await response.text());
    const progress = events.filter((event) => event.type === 'tool_call_progress');
    expect(progress.length).toBeGreaterThan(1);
    for (const event of progress)
      expect(event).toMatchObject({ sessionId: id, callId: 'call_wait', name: 'testing_delay', total: 200 });
    expect(progress.at(-1)!.progress).toBe(200);
    const order = events.map((event) => event.type);
    expect(order.indexOf('tool_call_progress')).toBeGreaterThan(order.indexOf('tool_call_started'));
    expect(order.lastIndexOf('tool_call_progress')).toBeLessThan(order.indexOf('tool_call_finished'));
  });

  it('answers 404 for an unknown session, as plain JSON even when a stream was asked for', async () => {
    const { host } = suite;
    const response = await post(
      host,
      '/v1/sessions/missing/messages',
      { input: 'hi' },
      { accept: 'text/event-stream' },
    );
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('missing');
  });

  it('aptix chat --message answers once, for scripts', async () => {
    const { model, env } = suite;
    const created = (await runCli(['sessions', 'create'], { env })).json<{ id: string }>();
    model.script(respond('Hi there.'));
    const run = await runCli(['chat', '--session', created.id, '--message', 'hello'], { env });
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ sessionId: created.id, mode: 'general', output: 'Hi there.', toolCalls: [] });
  });

  it('aptix chat is an interactive chat that shows tool calls as they happen', async () => {
    const { model, env } = suite;
    const created = (await runCli(['sessions', 'create'], { env })).json<{ id: string }>();
    model.script(
      respond(undefined, call('call_9', 'testing_calculator', { operation: 'multiply', a: 6, b: 7 })),
      respond('6 × 7 = 42.'),
      respond('Goodbye.'),
    );
    const child = spawn(process.execPath, [BIN, 'chat', '--session', created.id], {
      cwd: HOST_ROOT,
      env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const waitFor = async (text: string, stream: () => string) => {
      while (!stream().includes(text)) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await waitFor('> ', () => stderr);
    child.stdin.write('What is 6 times 7?\n');
    await waitFor('6 × 7 = 42.', () => stdout);
    child.stdin.write('Thanks, bye.\n');
    await waitFor('Goodbye.', () => stdout);
    child.stdin.write('/exit\n');
    expect(await exited).toBe(0);
    expect(stderr).toContain(`Chatting in session ${created.id}`);
    expect(stderr).toMatch(/→ testing_calculator .*"operation":"multiply"/);
    expect(stderr).toContain('✓ testing_calculator');
    // The second message continued the same conversation: the model saw the first exchange.
    const last = model.requests.at(-1)!.body.input;
    expect(JSON.stringify(last)).toContain('What is 6 times 7?');
  });
});

describe('the agent loop without a configured model', () => {
  it('says what to set, over HTTP and in the CLI, while the tools keep working', async () => {
    const space = scratch();
    const env = { APTIX_DB: space.db, OPENAI_BASE_URL: '', OPENAI_API_KEY: '', APTIX_MODEL: '' };
    const host = await startHost({ env });
    try {
      const { id } = (await (await post(host, '/v1/sessions', {})).json()) as { id: string };
      const response = await post(host, `/v1/sessions/${id}/messages`, { input: 'hi' });
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'MODEL_NOT_CONFIGURED',
        message: expect.stringContaining('APTIX_MODEL'),
      });
      expect((await post(host, '/v1/tools/agent_hello_world/invoke', { arguments: { name: 'Ada' } })).status).toBe(200);
      const run = await runCli(['chat', '--message', 'hi'], { env });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('APTIX_MODEL');
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});

/**
 * Long calls as MCP tasks (io.modelcontextprotocol/tasks, SEP-2663) on 2026-07-28, through real HTTP:
 * testing_delay declares TaskSupport 'optional', so a client that declared the extension gets a task
 * and polls it; others get the result directly. Task records live in the session store, so a restart
 * keeps them (mcp-tasks-shared.test.ts: several hosts on one store).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { HOST_ROOT, scratch, startHost, startHostWithConfig, type RunningHost } from './support.js';
import { KEY, OTHER, settledVia, taskRpc, TASKS } from './task-client.js';

const rpc = taskRpc;
const settled = (url: string, taskId: string) => settledVia((method, params) => rpc(url, method, params), taskId);

describe('long calls as MCP tasks (2026-07-28)', () => {
  const space = scratch();
  const env = { APTIX_DB: space.db, APTIX_API_KEYS: `ops=${KEY},auditor=${OTHER}` };
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({ env });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('advertises the extension in server/discover (2026-07-28 tool listings carry no task vocabulary: the server decides)', async () => {
    const discovered = await rpc(host.url, 'server/discover', {});
    expect(discovered.result.capabilities.extensions).toHaveProperty(['io.modelcontextprotocol/tasks']);
  });

  it('a client that declared the extension gets a task at once, and tasks/get inlines the result once it completed', async () => {
    const created = (await rpc(host.url, 'tools/call', { name: 'testing_delay', arguments: { milliseconds: 300 } }))
      .result;
    expect(created).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: expect.any(Number),
      pollIntervalMs: expect.any(Number),
    });
    expect(created).not.toHaveProperty('requestState');
    const working = (await rpc(host.url, 'tasks/get', { taskId: created.taskId })).result;
    expect(working.status).toBe('working');
    expect(working).not.toHaveProperty('result');
    const done = await settled(host.url, created.taskId);
    expect(done.status).toBe('completed');
    expect(done.result.isError ?? false).toBe(false);
    expect(JSON.stringify(done.result.content)).toContain('300');
  });

  it('a client without the extension gets the result directly, and the tasks methods refuse it with -32021', async () => {
    const direct = (await rpc(host.url, 'tools/call', { name: 'testing_delay', arguments: { milliseconds: 10 } }, {}))
      .result;
    expect(direct.resultType).toBe('complete');
    expect(direct.content.length).toBeGreaterThan(0);
    const refused = await rpc(host.url, 'tasks/get', { taskId: 'anything' }, {});
    expect(refused.error?.code).toBe(-32021);
    expect(refused.error?.data?.requiredCapabilities).toEqual(TASKS);
  });

  it('tasks/cancel stops a running call: the task reads cancelled, and cancelling again is an empty ack', async () => {
    const { taskId } = (
      await rpc(host.url, 'tools/call', { name: 'testing_delay', arguments: { milliseconds: 20_000 } })
    ).result;
    expect((await rpc(host.url, 'tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    expect((await rpc(host.url, 'tasks/get', { taskId })).result.status).toBe('cancelled');
    expect((await rpc(host.url, 'tasks/cancel', { taskId })).error).toBeUndefined();
  });

  it('refuses an unknown, odd or foreign task id with -32602, saying what it looked for', async () => {
    const { taskId } = (await rpc(host.url, 'tools/call', { name: 'testing_delay', arguments: { milliseconds: 10 } }))
      .result;
    for (const [id, key] of [
      ['no-such-task', KEY],
      [taskId, OTHER],
      ['x'.repeat(10_000), KEY],
    ] as const) {
      const answer = await rpc(host.url, 'tasks/get', { taskId: id }, TASKS, key);
      expect(answer.error?.code).toBe(-32602);
      expect(answer.error?.message).toContain('no task of this API key has that id');
      expect(answer.error?.message).not.toContain('x'.repeat(200));
    }
    const odd = await rpc(host.url, 'tasks/get', { taskId: 42 });
    expect(odd.error?.code).toBe(-32602);
  });

  it('2025-11-25 (v1 SDK client, experimental tasks): a call with the task parameter runs as a task it polls to the result; one without runs directly', async () => {
    const client = new LegacyClient({ name: 'tasks-v1', version: '1' }, { capabilities: { tasks: {} } });
    const session = (await (
      await fetch(`${host.url}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'tool_diagnostics' }),
      })
    ).json()) as { id: string };
    await client.connect(
      new LegacyTransport(new URL(`${host.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${KEY}`, 'x-aptix-session-id': session.id } },
      }),
    );
    try {
      expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } } });
      expect((await client.listTools()).tools.find((tool) => tool.name === 'testing_delay')?.execution).toEqual({
        taskSupport: 'optional',
      });
      const seen: string[] = [];
      let final: any;
      for await (const message of client.experimental.tasks.callToolStream(
        { name: 'testing_delay', arguments: { milliseconds: 200 } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      )) {
        seen.push(message.type === 'taskStatus' ? `status:${message.task.status}` : message.type);
        if (message.type === 'result') final = message.result;
      }
      expect(seen[0]).toBe('taskCreated');
      expect(seen.at(-1)).toBe('result');
      expect(JSON.stringify(final.content)).toContain('200');
      expect((await client.experimental.tasks.listTasks()).tasks.length).toBeGreaterThan(0);
      const long = await client.request(
        {
          method: 'tools/call',
          params: { name: 'testing_delay', arguments: { milliseconds: 20_000 }, task: { ttl: 60_000 } },
        } as never,
        (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
      );
      expect((await client.experimental.tasks.cancelTask(long.task.taskId)).status).toBe('cancelled');
      await expect(client.experimental.tasks.cancelTask(long.task.taskId)).rejects.toThrow(/already cancelled/);
      const direct = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 10 } });
      expect(JSON.parse((direct.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
        requestedMs: 10,
        wasCancelled: false,
      });
    } finally {
      await client.close();
    }
  });

  it('a host restarted under a finished task still returns its result; one stopped under a working task records that it stopped the call', async () => {
    const finished = (await rpc(host.url, 'tools/call', { name: 'testing_delay', arguments: { milliseconds: 50 } }))
      .result.taskId;
    const done = await settled(host.url, finished);
    const working = (await rpc(host.url, 'tools/call', { name: 'testing_delay', arguments: { milliseconds: 20_000 } }))
      .result.taskId;
    await host.stop();
    host = await startHost({ env });
    expect((await rpc(host.url, 'tasks/get', { taskId: finished })).result).toEqual(done);
    const stopped = (await rpc(host.url, 'tasks/get', { taskId: working })).result;
    // testing_delay stops when asked and says so: the task says the call made no change.
    expect(stopped).toMatchObject({ status: 'failed', error: { code: -32603, data: { code: 'TOOL_UNAVAILABLE' } } });
    expect(stopped.error.message).toContain(
      'shut down, so testing_delay was stopped before it finished; it made no change',
    );
    expect(stopped).not.toHaveProperty('result');
  });
});

// The same behaviour whether the tools run in the host's process or in worker threads (their TaskSupport and TaskInput cross to the host).
describe.each(['none', 'worker'] as const)(
  'tasks of the conformance fixtures (questions, failures), isolation %s',
  (isolation) => {
    const conformance = join(HOST_ROOT, '../../e2e/conformance');
    let host: RunningHost;
    let cleanup: () => void;
    beforeAll(async () => {
      const fixtures = join(conformance, 'fixture-tools');
      const started = await startHostWithConfig({
        toolPackages: [
          '@aptix/tool-mode-catalog',
          '@aptix/tool-mode-change',
          isolation === 'none' ? fixtures : { package: fixtures, isolation, workers: 1 },
        ],
        modes: join(conformance, 'modes.json'),
      });
      host = started.host;
      cleanup = () => started.space.cleanup();
    });
    afterAll(async () => {
      await host?.stop();
      cleanup?.();
    });
    const call = (method: string, params: Record<string, unknown>) => rpc(host.url, method, params, TASKS, KEY, '/mcp');
    const parked = async (taskId: string) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const { result } = await call('tasks/get', { taskId });
        if (result.status !== 'working') return result;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('never parked');
    };

    it('parks for its questions, keeps the unanswered ones pending, ignores unknown keys, and goes on once all are answered', async () => {
      const { taskId } = (await call('tools/call', { name: 'multi_input', arguments: {} })).result;
      expect(Object.keys((await parked(taskId)).inputRequests).sort()).toEqual(['first', 'second']);
      expect(
        (
          await call('tasks/update', {
            taskId,
            inputResponses: {
              first: { action: 'accept', content: { name: 'Ada', confirm: true } },
              stranger: { action: 'accept', content: {} },
            },
          })
        ).error,
      ).toBeUndefined();
      const half = (await call('tasks/get', { taskId })).result;
      expect(half.status).toBe('input_required');
      expect(Object.keys(half.inputRequests)).toEqual(['second']);
      await call('tasks/update', {
        taskId,
        inputResponses: { second: { action: 'accept', content: { name: 'Grace', confirm: true } } },
      });
      let done = (await call('tasks/get', { taskId })).result;
      for (let attempt = 0; attempt < 100 && done.status === 'working'; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        done = (await call('tasks/get', { taskId })).result;
      }
      expect(done.status).toBe('completed');
      expect(JSON.stringify(done.result.content)).toContain('Both answered: Ada and Grace.');
    });

    it("a task the host stopped at its time-out is failed with a JSON-RPC error and no result; a tool's own error completes it with isError", async () => {
      const stopped = await settledVia(
        call,
        (await call('tools/call', { name: 'protocol_error_job', arguments: {} })).result.taskId,
      );
      expect(stopped.status).toBe('failed');
      expect(stopped.error).toMatchObject({ code: -32603, data: { code: 'TIMEOUT' } });
      expect(stopped.error.message).toContain('did not finish within 200 ms');
      expect(stopped).not.toHaveProperty('result');
      const own = await settledVia(
        call,
        (await call('tools/call', { name: 'failing_job', arguments: {} })).result.taskId,
      );
      expect(own.status).toBe('completed');
      expect(own.result.isError).toBe(true);
      expect(own).not.toHaveProperty('error');
    });

    it('a tool that asks first (TaskInput before) asks on tools/call, and the round bringing the answer becomes the task', async () => {
      // The client declares form elicitation too: a tool asks only a client that can ask its user.
      const ask = (method: string, params: Record<string, unknown>) =>
        rpc(host.url, method, params, { ...TASKS, elicitation: { form: {} } }, KEY, '/mcp');
      const asked = (await ask('tools/call', { name: 'test_tool_with_task', arguments: {} })).result;
      expect(asked).toMatchObject({
        resultType: 'input_required',
        inputRequests: { user_name: expect.any(Object) },
        requestState: expect.any(String),
      });
      expect(asked).not.toHaveProperty('taskId');
      const answer = { user_name: { action: 'accept', content: { name: 'Alice' } } };
      // A state that was altered is refused: nothing runs, no task is made.
      const tampered = await ask('tools/call', {
        name: 'test_tool_with_task',
        arguments: {},
        inputResponses: answer,
        requestState: `${asked.requestState.slice(0, -4)}AAAA`,
      });
      expect(tampered.error?.code).toBe(-32602);
      const created = (
        await ask('tools/call', {
          name: 'test_tool_with_task',
          arguments: {},
          inputResponses: answer,
          requestState: asked.requestState,
        })
      ).result;
      expect(created).toMatchObject({ resultType: 'task', status: 'working' });
      expect(created).not.toHaveProperty('requestState');
      expect(created).not.toHaveProperty('inputRequests');
      const done = await settledVia(call, created.taskId);
      expect(done.status).toBe('completed');
      expect(JSON.parse(done.result.content[0].text)).toBe('Hello, Alice: the task finished.');
      // Without the extension a tool that runs only as a task is refused before it asks.
      expect(
        (
          await rpc(
            host.url,
            'tools/call',
            { name: 'test_tool_with_task', arguments: {} },
            { elicitation: { form: {} } },
            KEY,
            '/mcp',
          )
        ).error?.code,
      ).toBe(-32021);
    });

    it('malformed answers change nothing (the question stays pending), and a parked task can be cancelled', async () => {
      const { taskId } = (await call('tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } }))
        .result;
      await parked(taskId);
      for (const inputResponses of [null, [1, 2], 'yes', { confirm: 12345 }, { confirm: null }]) {
        const answer = await call('tasks/update', { taskId, inputResponses });
        // The SDK drops answers that are not response objects; a body that is not an object is refused.
        if (answer.error !== undefined) expect(answer.error.code, JSON.stringify(inputResponses)).toBe(-32602);
        const still = (await call('tasks/get', { taskId })).result;
        expect(still.status, JSON.stringify(inputResponses)).toBe('input_required');
        expect(Object.keys(still.inputRequests)).toEqual(['confirm']);
      }
      await call('tasks/cancel', { taskId });
      const cancelled = (await call('tasks/get', { taskId })).result;
      expect(cancelled.status).toBe('cancelled');
      expect(cancelled).not.toHaveProperty('inputRequests');
    });
  },
);

/**
 * MCP tasks across hosts that share one session store, as behind a load balancer (2026-07-28 is
 * stateless: tasks/get may land on any host). Real `aptix serve` processes on one PostgreSQL schema
 * (and one SQLite file), the conformance fixture tools: a task created on one host is read, answered
 * and cancelled through another, and a task whose host was killed is reported failed, outcome unknown (tasks/get, and a 2025 client's tasks/list).
 * A cancel through another host never shows a terminal status the running host could contradict.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeBackends } from './suites.js';
import { HOST_ROOT, startHost, type RunningHost } from './support.js';
import { KEY, OTHER, settledVia, taskRpc, TASKS } from './task-client.js';
import { CANCEL_REQUESTED } from '../src/mcp/task-records.js';

const conformance = join(HOST_ROOT, '../../e2e/conformance');
/** stubborn_job: a task tool that ignores its stop signal (test/fixtures/task-tools). */
const taskTools = join(HOST_ROOT, 'test', 'fixtures', 'task-tools');
const OPEN = ['working', 'input_required'];
const backends = await storeBackends('mcp_tasks', 'MCP tasks across hosts on PostgreSQL');

describe.each(backends)('MCP tasks across hosts sharing one store ($name)', (backend) => {
  const dir = mkdtempSync(join(tmpdir(), 'aptix-tasks-'));
  const config = join(dir, 'aptix.config.json');
  // The conformance modes, with stubborn_job offered too.
  const modes = JSON.parse(readFileSync(join(conformance, 'modes.json'), 'utf8'));
  modes.modes[0].tools.push('stubborn_job');
  writeFileSync(join(dir, 'modes.json'), JSON.stringify(modes));
  // A host that stops marking its tasks alive is taken for stopped after a second (default 30 s); a stopped tool has 2 s to confirm.
  writeFileSync(
    config,
    JSON.stringify({
      toolPackages: [
        '@aptix/tool-mode-catalog',
        '@aptix/tool-mode-change',
        join(conformance, 'fixture-tools'),
        taskTools,
      ],
      modes: join(dir, 'modes.json'),
      mcp: { taskStaleMs: 1000 },
      toolCancelGraceMs: 2000,
    }),
  );
  // Hosts that take a silent host for stopped only after the default 30 s, and give a stopped tool 200 ms.
  const patient = join(dir, 'patient.config.json');
  writeFileSync(
    patient,
    JSON.stringify({
      toolPackages: ['@aptix/tool-mode-catalog', '@aptix/tool-mode-change', join(conformance, 'fixture-tools')],
      modes: join(conformance, 'modes.json'),
      toolCancelGraceMs: 200,
    }),
  );
  const store = backend.setup();
  const hosts: RunningHost[] = [];
  const start = async (file = config) => {
    const host = await startHost({
      args: ['--config', file],
      env: { APTIX_DB: store.db, APTIX_API_KEYS: `ops=${KEY},auditor=${OTHER}` },
    });
    hosts.push(host);
    return host;
  };
  let a: RunningHost;
  let b: RunningHost;
  beforeAll(async () => {
    [a, b] = await Promise.all([start(), start()]);
  });
  afterAll(async () => {
    await Promise.all(hosts.map((host) => host.stop()));
    await store.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const on =
    (host: RunningHost, capabilities: Record<string, unknown> = TASKS, key = KEY) =>
    (method: string, params: Record<string, unknown>) =>
      taskRpc(host.url, method, params, capabilities, key, '/mcp');

  it('a task created on one host is read, answered and finished through the other', async () => {
    const created = (await on(a)('tools/call', { name: 'confirm_delete', arguments: { filename: 'report.txt' } }))
      .result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    // The questions the call on host a asked are read on host b.
    let parked: any;
    for (let poll = 0; poll < 100 && parked?.status !== 'input_required'; poll++) {
      parked = (await on(b)('tasks/get', { taskId: created.taskId })).result;
      if (parked.status !== 'input_required') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(Object.keys(parked.inputRequests)).toEqual(['confirm']);
    expect((await on(b, TASKS, OTHER)('tasks/get', { taskId: created.taskId })).error?.code).toBe(-32602);
    // Answered on host b: the call on host a goes on with the answer.
    expect(
      (
        await on(b)('tasks/update', {
          taskId: created.taskId,
          inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        })
      ).error,
    ).toBeUndefined();
    const done = await settledVia(on(b), created.taskId);
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.result.content)).toContain('Confirmed: report.txt would be deleted');
    expect((await on(a)('tasks/get', { taskId: created.taskId })).result).toEqual(done);
  });

  /**
   * Cancels through `via` a task running on `runner`, reading tasks/get on both hosts from the moment the
   * cancel is sent until the task is terminal: every status read on the way, and the end.
   */
  const cancelWatched = async (runner: RunningHost, via: RunningHost, taskId: string) => {
    const seen: string[] = [];
    let cancelled = false;
    const answer = on(via)('tasks/cancel', { taskId }).finally(() => (cancelled = true));
    let end: any;
    while (end === undefined) {
      for (const host of [runner, via]) {
        const { result, error } = await on(host)('tasks/get', { taskId });
        if (error !== undefined) throw new Error(`tasks/get ${taskId}: ${error.message}`);
        seen.push(result.status);
        if (!OPEN.includes(result.status)) end ??= result;
      }
    }
    // Reads go on until the cancel has answered: the end must not change after it either.
    while (!cancelled) seen.push((await on(runner)('tasks/get', { taskId })).result.status);
    seen.push(
      (await on(via)('tasks/get', { taskId })).result.status,
      (await on(runner)('tasks/get', { taskId })).result.status,
    );
    return { seen, end, answer: await answer };
  };
  /** Every status read was open, or the end: the end was written once and never changed. */
  const expectOnlyOpenThen = (seen: string[], status: string) => {
    expect(seen).toContain(status);
    expect(seen.filter((read) => !OPEN.includes(read))).toEqual(seen.filter((read) => read === status));
    expect(seen.slice(seen.indexOf(status)).every((read) => read === status)).toBe(true);
  };

  it('a cancel through the other host of a tool that stops: the running host stops it and records cancelled', async () => {
    const { taskId } = (await on(a)('tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    const { seen, end, answer } = await cancelWatched(a, b, taskId);
    expect(answer.result).toMatchObject({ resultType: 'complete' });
    expectOnlyOpenThen(seen, 'cancelled');
    expect(end).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled by the client before it finished.' });
    expect(end).not.toHaveProperty('result');
    // Host a learned of it when it next marked its tasks alive, and stopped the call.
    expect(a.output()).toContain(
      `task ${taskId}: a cancel was requested through another host, so its call here was asked to stop`,
    );
    expect((await on(a)('tasks/cancel', { taskId })).error).toBeUndefined();
    expect((await on(b)('tasks/get', { taskId })).result).toEqual(end);
  });

  it('a cancel through the other host of a task parked for its questions: cancelled, its questions gone', async () => {
    const { taskId } = (await on(a)('tools/call', { name: 'confirm_delete', arguments: { filename: 'kept.txt' } }))
      .result;
    let parked: any;
    for (let poll = 0; poll < 100 && parked?.status !== 'input_required'; poll++) {
      parked = (await on(b)('tasks/get', { taskId })).result;
      if (parked.status !== 'input_required') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(parked.status).toBe('input_required');
    const { seen, end } = await cancelWatched(a, b, taskId);
    expectOnlyOpenThen(seen, 'cancelled');
    expect(end).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled by the client before it finished.' });
    expect(end).not.toHaveProperty('inputRequests');
    // An answer that comes after the end changes nothing.
    expect(
      (
        await on(b)('tasks/update', {
          taskId,
          inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        })
      ).error,
    ).toBeUndefined();
    expect((await on(a)('tasks/get', { taskId })).result).toEqual(end);
  });

  it('a cancel through the other host of a tool that finished first reads completed with its result, never cancelled on the way', async () => {
    // stubborn_job goes on when asked to stop, and finishes within the grace period: its effect happened.
    const { taskId } = (await on(a)('tools/call', { name: 'stubborn_job', arguments: { milliseconds: 1500 } })).result;
    const { seen, end } = await cancelWatched(a, b, taskId);
    expectOnlyOpenThen(seen, 'completed');
    expect(end).toMatchObject({
      status: 'completed',
      statusMessage: 'The tool finished before the cancel reached it: its result stands.',
    });
    expect(JSON.stringify(end.result.content)).toContain('Finished after 1500 ms.');
    // A 2025 client's cancel of the finished task is refused, saying what it is.
    const legacy = new LegacyClient({ name: 'tasks-v1', version: '1' }, { capabilities: { tasks: {} } });
    await legacy.connect(
      new LegacyTransport(new URL(`${b.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }),
    );
    try {
      await expect(legacy.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/already completed/);
    } finally {
      await legacy.close();
    }
    expect((await on(a)('tasks/get', { taskId })).result).toEqual(end);
  });

  it('a cancel through the other host of a tool that does not confirm it stopped: cancelled, saying the outcome is unknown', async () => {
    const { taskId } = (await on(a)('tools/call', { name: 'stubborn_job', arguments: { milliseconds: 60_000 } }))
      .result;
    const { seen, end } = await cancelWatched(a, b, taskId);
    expectOnlyOpenThen(seen, 'cancelled');
    expect(end.statusMessage).toBe(
      'Cancelled by the client, but the tool did not confirm it stopped: whether it took effect is unknown.',
    );
  });

  it('a cancel whose running host does not answer in time: the task stays open, saying a cancel was requested; the host records the end once it runs again', async () => {
    const [runner, via] = await Promise.all([start(patient), start(patient)]);
    const { taskId } = (await on(runner)('tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    // Frozen, the running host neither marks its task alive nor takes the request; 30 s must pass before it counts as stopped.
    runner.child.kill('SIGSTOP');
    try {
      expect((await on(via)('tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
      const open = (await on(via)('tasks/get', { taskId })).result;
      expect(open).toMatchObject({ status: 'working', statusMessage: CANCEL_REQUESTED });
      // A 2025 client's cancel answers the task as it is: still working, never a cancelled that might be false.
      const legacy = new LegacyClient({ name: 'tasks-v1', version: '1' }, { capabilities: { tasks: {} } });
      await legacy.connect(
        new LegacyTransport(new URL(`${via.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${KEY}` } },
        }),
      );
      try {
        expect(await legacy.experimental.tasks.cancelTask(taskId)).toMatchObject({
          taskId,
          status: 'working',
          statusMessage: CANCEL_REQUESTED,
        });
      } finally {
        await legacy.close();
      }
    } finally {
      runner.child.kill('SIGCONT');
    }
    const end = await settledVia(on(via), taskId);
    expect(end).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled by the client before it finished.' });
    // The host's log line comes on its stdout, another pipe than the answers: wait for it to arrive.
    await expect
      .poll(() => runner.output())
      .toContain(`task ${taskId}: a cancel was requested through another host, so its call here was asked to stop`);
  });

  it('a host killed under a working task: another host reports it failed, its outcome unknown, never working forever', async () => {
    const doomed = await start();
    const { taskId } = (await on(doomed)('tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    expect((await on(b)('tasks/get', { taskId })).result.status).toBe('working');
    await doomed.stop('SIGKILL');
    // A 2025-11-25 client's tasks/list on host b shows it failed once its host is stale, never working forever.
    const legacy = new LegacyClient({ name: 'tasks-v1', version: '1' }, { capabilities: { tasks: {} } });
    await legacy.connect(
      new LegacyTransport(new URL(`${b.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }),
    );
    try {
      let listed: string | undefined;
      for (let poll = 0; poll < 100 && listed !== 'failed'; poll++) {
        listed = (await legacy.experimental.tasks.listTasks()).tasks.find((task) => task.taskId === taskId)?.status;
        if (listed !== 'failed') await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(listed).toBe('failed');
    } finally {
      await legacy.close();
    }
    const failed = await settledVia(on(b), taskId);
    expect(failed).toMatchObject({
      status: 'failed',
      statusMessage: 'The host running this task stopped; the outcome is unknown.',
      error: { code: -32603, data: { code: 'OUTCOME_UNKNOWN' } },
    });
    expect(failed.error.message).toContain('Whether the tool finished or took effect is unknown');
    expect(failed).not.toHaveProperty('result');
    expect((await on(a)('tasks/get', { taskId })).result).toEqual(failed);
  });
});

/**
 * MCP tasks across hosts that share one session store, as behind a load balancer (2026-07-28 is
 * stateless: tasks/get may land on any host). Real `aptix serve` processes on one PostgreSQL schema
 * (and one SQLite file), the conformance fixture tools: a task created on one host is read, answered
 * and cancelled through another, and a task whose host was killed is reported failed, outcome unknown (tasks/get, and a 2025 client's tasks/list).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeBackends } from './suites.js';
import { HOST_ROOT, startHost, type RunningHost } from './support.js';
import { KEY, OTHER, settledVia, taskRpc, TASKS } from './task-client.js';

const conformance = join(HOST_ROOT, '../../e2e/conformance');
const backends = await storeBackends('mcp_tasks', 'MCP tasks across hosts on PostgreSQL');

describe.each(backends)('MCP tasks across hosts sharing one store ($name)', (backend) => {
  const dir = mkdtempSync(join(tmpdir(), 'aptix-tasks-'));
  const config = join(dir, 'aptix.config.json');
  // A host that stops marking its tasks alive is taken for stopped after a second (default 30 s).
  writeFileSync(config, JSON.stringify({ toolPackages: ['@aptix/tool-mode-catalog', '@aptix/tool-mode-change', join(conformance, 'fixture-tools')], modes: join(conformance, 'modes.json'), mcp: { taskStaleMs: 1000 } }));
  const store = backend.setup();
  const hosts: RunningHost[] = [];
  const start = async () => {
    const host = await startHost({ args: ['--config', config], env: { APTIX_DB: store.db, APTIX_API_KEYS: `ops=${KEY},auditor=${OTHER}` } });
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
  const on = (host: RunningHost, capabilities: Record<string, unknown> = TASKS, key = KEY) => (method: string, params: Record<string, unknown>) => taskRpc(host.url, method, params, capabilities, key, '/mcp');

  it('a task created on one host is read, answered and finished through the other', async () => {
    const created = (await on(a)('tools/call', { name: 'confirm_delete', arguments: { filename: 'report.txt' } })).result;
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
    expect((await on(b)('tasks/update', { taskId: created.taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } })).error).toBeUndefined();
    const done = await settledVia(on(b), created.taskId);
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.result.content)).toContain('Confirmed: report.txt would be deleted');
    expect((await on(a)('tasks/get', { taskId: created.taskId })).result).toEqual(done);
  });

  it('a cancel on the other host stops the call where it runs', async () => {
    const { taskId } = (await on(a)('tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    expect((await on(b)('tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    expect((await on(a)('tasks/get', { taskId })).result).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled by the client before it finished.' });
    // Host a learns of it when it next marks its tasks alive, and stops the call.
    const stopped = `task ${taskId}: cancelled through another host, so its call here was stopped`;
    for (let poll = 0; poll < 100 && !a.output().includes(stopped); poll++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(a.output()).toContain(stopped);
    expect((await on(b)('tasks/get', { taskId })).result.status).toBe('cancelled');
  });

  it('a host killed under a working task: another host reports it failed, its outcome unknown, never working forever', async () => {
    const doomed = await start();
    const { taskId } = (await on(doomed)('tools/call', { name: 'slow_compute', arguments: { seconds: 60 } })).result;
    expect((await on(b)('tasks/get', { taskId })).result.status).toBe('working');
    await doomed.stop('SIGKILL');
    // A 2025-11-25 client's tasks/list on host b shows it failed once its host is stale, never working forever.
    const legacy = new LegacyClient({ name: 'tasks-v1', version: '1' }, { capabilities: { tasks: {} } });
    await legacy.connect(new LegacyTransport(new URL(`${b.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }));
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
    expect(failed).toMatchObject({ status: 'failed', statusMessage: 'The host running this task stopped; the outcome is unknown.', error: { code: -32603, data: { code: 'OUTCOME_UNKNOWN' } } });
    expect(failed.error.message).toContain('Whether the tool finished or took effect is unknown');
    expect(failed).not.toHaveProperty('result');
    expect((await on(a)('tasks/get', { taskId })).result).toEqual(failed);
  });
});

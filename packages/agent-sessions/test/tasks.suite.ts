/**
 * The MCP task suite every session store passes: records written by one store are read by another on
 * the same database (two hosts), each change is taken at most once, values are bounded, and a task
 * whose host stopped marking it alive is found and failed.
 */
import { describe, expect, it } from 'vitest';
import { MCP_TASK_VALUE_MAX_BYTES } from '../src/tasks.js';
import { twoHostsOn } from './fixtures/two-hosts.js';
import type { SessionStoreHarness } from './session-store.suite.js';

const STOPPED = {
  error: { code: -32603, message: 'The host running this task stopped.' },
  statusMessage: 'host stopped',
  keepForMs: 60_000,
};

export function describeTaskStore(name: string, harness: SessionStoreHarness): void {
  describe(`${name}: MCP tasks`, () => {
    /** Two stores on one fresh database: two hosts. */
    const twoHosts = twoHostsOn(harness);

    it('keeps a task one host created for the other to read, through every step to its result', async () => {
      const [a, b] = await twoHosts();
      const task = await a.tasks.create({ owner: 'ops', toolName: 'testing_delay', ttlMs: 60_000 });
      expect(task).toMatchObject({
        owner: 'ops',
        toolName: 'testing_delay',
        status: 'working',
        result: null,
        error: null,
        inputRequests: null,
        inputResponses: {},
        cancelRequestedAt: null,
        version: 1,
      });
      expect(await b.tasks.get(task.id)).toEqual(task);
      const parked = await a.tasks.change(
        task.id,
        { status: 'input_required', inputRequests: { confirm: { method: 'elicitation/create' } } },
        { from: ['working'] },
      );
      expect(parked).toMatchObject({
        status: 'input_required',
        inputRequests: { confirm: { method: 'elicitation/create' } },
        version: 2,
      });
      // An answer on the other host, conditional on the version it read.
      expect(
        await b.tasks.change(
          task.id,
          { inputRequests: {}, inputResponses: { confirm: { action: 'accept' } } },
          { from: ['input_required'], version: 1 },
        ),
      ).toBeUndefined();
      expect(
        await b.tasks.change(
          task.id,
          { inputRequests: {}, inputResponses: { confirm: { action: 'accept' } } },
          { from: ['input_required'], version: 2 },
        ),
      ).toMatchObject({ inputResponses: { confirm: { action: 'accept' } }, version: 3 });
      const result = { content: [{ type: 'text', text: 'done ✓' }], structuredContent: { n: 1 } };
      const done = await a.tasks.change(
        task.id,
        { status: 'completed', result, inputRequests: null, keepForMs: 60_000 },
        { from: ['working', 'input_required'] },
      );
      expect(done).toMatchObject({ status: 'completed', result, inputRequests: null });
      expect(await b.tasks.get(task.id)).toEqual(done);
      // A finished task takes no further transition: a late cancel changes nothing.
      expect(
        await b.tasks.change(task.id, { status: 'cancelled' }, { from: ['working', 'input_required'] }),
      ).toBeUndefined();
      expect((await b.tasks.list('ops')).map((t) => t.id)).toEqual([task.id]);
      expect(await b.tasks.list('auditor')).toEqual([]);
      expect(await a.tasks.get('no-such-task')).toBeUndefined();
      expect(await a.tasks.get('nul\u0000id')).toBeUndefined();
    });

    it('lets exactly one of two hosts finish a task (a cancel on one, the result on the other)', async () => {
      const [a, b] = await twoHosts();
      for (let round = 0; round < 5; round++) {
        const task = await a.tasks.create({ owner: null, toolName: 'testing_delay', ttlMs: 60_000 });
        const outcomes = await Promise.all([
          a.tasks.change(
            task.id,
            { status: 'completed', result: { content: [] } },
            { from: ['working', 'input_required'] },
          ),
          b.tasks.change(
            task.id,
            { status: 'cancelled', statusMessage: 'Cancelled by the client.' },
            { from: ['working', 'input_required'] },
          ),
        ]);
        expect(outcomes.filter((outcome) => outcome !== undefined)).toHaveLength(1);
        expect((await a.tasks.get(task.id))?.status).toBe(outcomes[0] ? 'completed' : 'cancelled');
      }
    });

    it('never changes a finished task: every way of writing a record moves it from an open status only', async () => {
      const [a, b] = await twoHosts();
      const ends = [
        { status: 'completed', result: { content: [{ type: 'text', text: 'done' }] } },
        { status: 'failed', error: { code: -32603, message: 'boom' } },
        { status: 'cancelled', statusMessage: 'Cancelled by the client before it finished.' },
      ] as const;
      for (const end of ends) {
        const task = await a.tasks.create({ owner: null, toolName: 'testing_delay', ttlMs: 60_000 });
        const finished = await a.tasks.change(
          task.id,
          { ...end, keepForMs: 60_000 },
          { from: ['working', 'input_required'] },
        );
        expect(finished).toMatchObject(end);
        // A change that names a finished status as its starting point is refused outright, whatever it would write.
        for (const from of ['completed', 'failed', 'cancelled'] as const) {
          await expect(
            b.tasks.change(
              task.id,
              { status: 'completed', result: { content: [] } },
              { from: ['working', 'input_required', from] },
            ),
          ).rejects.toMatchObject({
            code: 'INVALID_ARGUMENT',
            message: expect.stringContaining('A finished task never changes'),
          });
          await expect(
            b.tasks.change(task.id, { statusMessage: 'rewritten' }, { from: [from], version: finished!.version }),
          ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        }
        // From open statuses, with or without its version, nothing applies; nor a cancel request, a heartbeat or a stale sweep.
        expect(
          await b.tasks.change(task.id, { status: 'cancelled' }, { from: ['working', 'input_required'] }),
        ).toBeUndefined();
        expect(
          await b.tasks.change(
            task.id,
            { status: 'working' },
            { from: ['working', 'input_required'], version: finished!.version },
          ),
        ).toBeUndefined();
        expect(await b.tasks.requestCancel(task.id, 'cancel requested')).toBeUndefined();
        await b.tasks.heartbeat([task.id]);
        expect(await b.tasks.abandonStale(0, STOPPED, task.id)).toBe(0);
        expect(await a.tasks.get(task.id)).toEqual(finished);
      }
    });

    it('records a cancel request on an open task without ending it; the running host then writes the true end', async () => {
      const [a, b] = await twoHosts();
      const task = await a.tasks.create({ owner: null, toolName: 'testing_delay', ttlMs: 60_000 });
      expect(task.cancelRequestedAt).toBeNull();
      const requested = await b.tasks.requestCancel(task.id, 'A cancel was requested.');
      expect(requested).toMatchObject({
        status: 'working',
        statusMessage: 'A cancel was requested.',
        cancelRequestedAt: expect.any(String),
        version: 2,
      });
      // A second request keeps the first one's time; the host running it sees the request when it marks it alive.
      const again = await b.tasks.requestCancel(task.id, 'A cancel was requested again.');
      expect(again?.cancelRequestedAt).toBe(requested!.cancelRequestedAt);
      expect((await a.tasks.heartbeat([task.id]))[0]).toMatchObject({
        status: 'working',
        cancelRequestedAt: requested!.cancelRequestedAt,
      });
      // The tool finished first: the task completes, and keeps saying a cancel was asked.
      const done = await a.tasks.change(
        task.id,
        { status: 'completed', statusMessage: null, result: { content: [] } },
        { from: ['working', 'input_required'] },
      );
      expect(done).toMatchObject({
        status: 'completed',
        statusMessage: null,
        cancelRequestedAt: requested!.cancelRequestedAt,
      });
      expect(await b.tasks.get(task.id)).toEqual(done);
      expect(await b.tasks.requestCancel('no-such-task', 'x')).toBeUndefined();
      expect(await b.tasks.requestCancel('nul\u0000id', 'x')).toBeUndefined();
    });

    it('refuses a value over its bound, or one JSON cannot hold, and writes nothing', async () => {
      const [a] = await twoHosts();
      const task = await a.tasks.create({ owner: null, toolName: 'big_result', ttlMs: 60_000 });
      const huge = { content: [{ type: 'text', text: 'x'.repeat(MCP_TASK_VALUE_MAX_BYTES) }] };
      await expect(
        a.tasks.change(task.id, { status: 'completed', result: huge }, { from: ['working'] }),
      ).rejects.toMatchObject({ code: 'VALUE_TOO_LONG' });
      await expect(
        a.tasks.change(task.id, { status: 'completed', result: { text: 'nul \u0000' } }, { from: ['working'] }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await expect(
        a.tasks.change(task.id, { status: 'completed', result: cyclic }, { from: ['working'] }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(await a.tasks.get(task.id)).toEqual(task);
      await expect(a.tasks.create({ owner: 'x'.repeat(300), toolName: 't', ttlMs: 1000 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(a.tasks.create({ owner: null, toolName: 't', ttlMs: 0 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    });

    it('fails an open task nobody marked alive, and leaves one whose host beats', async () => {
      const [a, b] = await twoHosts();
      const alive = await a.tasks.create({ owner: null, toolName: 'testing_delay', ttlMs: 60_000 });
      const orphan = await a.tasks.create({ owner: null, toolName: 'testing_delay', ttlMs: 60_000 });
      const finished = await a.tasks.create({ owner: null, toolName: 'testing_delay', ttlMs: 60_000 });
      await a.tasks.change(finished.id, { status: 'completed', result: { content: [] } }, { from: ['working'] });
      // Wait until both open tasks' heartbeats are a second old, then beat for one of them only.
      while (Date.now() - Date.parse((await b.tasks.get(orphan.id))!.heartbeatAt) <= 1000)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await b.tasks.abandonStale(60_000, STOPPED)).toBe(0);
      const beaten = await a.tasks.heartbeat([alive.id, finished.id, 'no-such-task']);
      expect(beaten.map((t) => t.id).sort()).toEqual([alive.id, finished.id].sort());
      expect(await b.tasks.abandonStale(500, STOPPED, alive.id)).toBe(0);
      expect(await b.tasks.abandonStale(500, STOPPED)).toBe(1);
      expect(await b.tasks.get(orphan.id)).toMatchObject({
        status: 'failed',
        error: STOPPED.error,
        statusMessage: 'host stopped',
      });
      expect((await b.tasks.get(alive.id))?.status).toBe('working');
      expect((await b.tasks.get(finished.id))?.status).toBe('completed');
    });

    it('forgets a finished task past its expiry, but never an open one', async () => {
      const [a] = await twoHosts();
      const running = await a.tasks.create({ owner: null, toolName: 'testing_delay', ttlMs: 1 });
      const finished = await a.tasks.create({ owner: null, toolName: 'testing_delay', ttlMs: 60_000 });
      await a.tasks.change(
        finished.id,
        { status: 'completed', result: { content: [] }, keepForMs: 1 },
        { from: ['working'] },
      );
      while ((await a.tasks.get(finished.id)) !== undefined) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await a.tasks.deleteExpired()).toBe(1);
      expect((await a.tasks.get(running.id))?.status).toBe('working');
    });
  });
}

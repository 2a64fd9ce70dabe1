/**
 * A call that has ended but waits for the worker's health verdict (over its memory limit, collections
 * deciding) still counts as running: a report of the worker's made meanwhile (its check between calls)
 * must not let the host take it for a call never started and run it again elsewhere.
 */
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { AgentToolExecutor, AgentToolRegistry } from '@aptix/tool-contract';
import { PingPongTool } from '@aptix/tool-samples';
import { encodeCall } from './protocol.js';
import { WorkerCalls, type UnfitCalls } from './worker-calls.js';
import { WorkerHealth } from './worker-health.js';

const MIB = 1024 * 1024;

describe('a call waiting for the health verdict', () => {
  it('is reported running until the verdict, then as the call that found the worker unfit', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTools([PingPongTool]);
    const executor = new AgentToolExecutor({ registry, logger: pino({ level: 'silent' }) });
    const health = new WorkerHealth(64 * MIB);
    health.baseline();
    const sent: string[] = [];
    const reports: UnfitCalls[] = [];
    const calls = new WorkerCalls(
      executor,
      (wire) => sent.push(wire),
      () => undefined,
      health,
      (_unfit, ids) => reports.push(ids),
    );
    // Held for the whole call: the verdict (over the limit) comes after the collections' waits.
    const held = Buffer.alloc(100 * MIB, 1);
    calls.run(encodeCall(7, 'testing_ping_pong', JSON.stringify({ message: 'hi', count: 1 }), {}));
    for (let i = 0; i < 100; i++) await Promise.resolve(); // the call runs and ends; no turn passes
    expect(sent).toEqual([]);
    expect(reports).toEqual([]);
    expect(calls.running()).toEqual([7]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.running()).toEqual([7]); // a turn later, still judged
    await vi.waitFor(() => expect(reports).toHaveLength(1), { timeout: 10_000, interval: 20 });
    expect(held[0]).toBe(1);
    expect(reports).toEqual([{ call: 7, running: [] }]);
    expect(sent).toEqual([]); // its result is dropped: the worker that ran it is unfit
  });
});

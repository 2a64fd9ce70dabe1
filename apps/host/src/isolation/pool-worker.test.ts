/**
 * Which calls of an unfit worker go to another (takeNeverStarted): an unfit worker starts nothing more,
 * so every call the host sent it, but the one whose end found it and those it says are running, never
 * started there. The race this closes: the worker's check between calls finds it unfit while a call the
 * host just sent is still in its queue; that call used to be failed with the worker, though it never ran.
 */
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { PoolWorker, takeNeverStarted, type Pending } from './pool-worker.js';

const thread = new Worker('setInterval(() => {}, 1000)', { eval: true });
afterAll(() => thread.terminate());

function holding(...ids: number[]): PoolWorker {
  const entry = new PoolWorker(thread);
  for (const id of ids) {
    const pending: Pending = {
      name: `call_${id}`,
      args: '{}',
      context: {},
      resolve: () => undefined,
      signal: undefined,
      onAbort: undefined,
    };
    entry.pending.set(id, pending);
  }
  return entry;
}

describe('the calls an unfit worker never started', () => {
  it('found between calls: all but those running', () => {
    const entry = holding(1, 2, 3, 4);
    const taken = takeNeverStarted(entry, { running: [2] });
    expect(taken.map((pending) => pending.name)).toEqual(['call_1', 'call_3', 'call_4']);
    expect([...entry.pending.keys()]).toEqual([2]);
  });

  it("found at a call's end: all but that call and those running", () => {
    const entry = holding(1, 2, 3);
    const taken = takeNeverStarted(entry, { call: 1, running: [3] });
    expect(taken.map((pending) => pending.name)).toEqual(['call_2']);
    expect([...entry.pending.keys()]).toEqual([1, 3]);
  });

  it('a later report takes nothing: the first named every call the worker held or took it, and a later one no longer names the call it found unfit at its end', () => {
    const entry = holding(1, 2);
    // The call's own verdict, then the check between calls that waited on the same collections.
    expect(takeNeverStarted(entry, { call: 1, running: [] }).map((pending) => pending.name)).toEqual(['call_2']);
    expect(takeNeverStarted(entry, { running: [] })).toEqual([]);
    expect(takeNeverStarted(entry, { unstarted: [1] })).toEqual([]);
    expect([...entry.pending.keys()]).toEqual([1]);
  });

  it('a message without the running list: only the calls it lists as unstarted (nothing from a worker is trusted)', () => {
    const entry = holding(1, 2, 3);
    expect(takeNeverStarted(entry, { unstarted: [3, 'x', 99] }).map((pending) => pending.name)).toEqual(['call_3']);
    expect([...entry.pending.keys()]).toEqual([1, 2]);
    const other = holding(1, 2, 3);
    expect(takeNeverStarted(other, { running: 'all' }).map((pending) => pending.name)).toEqual([]);
    expect([...other.pending.keys()]).toEqual([1, 2, 3]);
  });
});

/**
 * Every isolated worker gets its garbage collector, however many start at once: V8's --expose-gc flag is
 * one for the process, and each worker sets it and sets it back. Without the host's lock, one of two
 * workers starting together sometimes got none, and its memory verdicts then failed calls that had only
 * used memory for a moment. Real worker threads running the built module.
 */
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOST_ROOT } from './support.js';

const MODULE = pathToFileURL(join(HOST_ROOT, 'dist/isolation/collector.js')).href;
const WORKER = new URL('./fixtures/collector-worker.mjs', import.meta.url);

function missing(lock: Int32Array, times: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { module: MODULE, lock, times }, stderr: true });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

describe('the garbage collector of isolated workers', () => {
  it('is made in each of four workers that make it 300 times at once, with one lock', async () => {
    const { collectorLock } = (await import(MODULE)) as { collectorLock: () => Int32Array };
    const lock = collectorLock();
    expect(await Promise.all([1, 2, 3, 4].map(() => missing(lock, 300)))).toEqual([0, 0, 0, 0]);
    expect(Atomics.load(lock, 0)).toBe(0);
  }, 30_000);

  it('is made all the same when the lock is never let go (a package in another worker can reach it): after a bounded wait', async () => {
    const lock = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(lock, 0, 1);
    expect(await missing(lock, 1)).toBe(0);
    // Not taken from its holder: still held.
    expect(Atomics.load(lock, 0)).toBe(1);
  }, 30_000);
});

/**
 * How an isolated worker decides it holds too much outside the heap (WorkerHealth), on a memory whose
 * count lags as V8's does: what a call dropped is counted until some collections after it. The real
 * isolate's side is in intrinsics.test.ts and test/worker-health.test.ts; here the lag is set, so that the
 * schedule of collections is what is tested.
 */
import { describe, expect, it } from 'vitest';
import { WorkerHealth, type MemoryProbe, type Unfit } from './worker-health.js';

const MIB = 1024 * 1024;

/** What a worker holds, and what its calls dropped: each counted until the third collection after it was dropped. */
class LaggingMemory {
  held = 0;
  collections = 0;
  #dropped: { bytes: number; collectionsLeft: number }[] = [];

  readonly probe: MemoryProbe = {
    external: () => this.count(),
    usage: () => ({ external: this.count(), arrayBuffers: this.count() }),
    gc: () => {
      this.collections++;
      for (const dropped of this.#dropped) dropped.collectionsLeft--;
      this.#dropped = this.#dropped.filter((dropped) => dropped.collectionsLeft > 0);
    },
  };

  count(): number {
    return this.#dropped.reduce((sum, dropped) => sum + dropped.bytes, this.held);
  }

  /** A call used `mb` and dropped it. */
  drop(mb: number): void {
    this.#dropped.push({ bytes: mb * MIB, collectionsLeft: 3 });
  }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe('the verdict on memory outside the heap', () => {
  it('a call that ends while collections are deciding gets their whole schedule: what it dropped is not held against it', async () => {
    const memory = new LaggingMemory();
    const health = new WorkerHealth(64 * MIB, memory.probe);
    health.baseline();
    // Between calls, the worker holds 128 MiB: collections start deciding, with growing waits.
    memory.held = 128 * MIB;
    const between = new Promise<Unfit | undefined>((decided) => health.idle(decided));
    // The last wait (700 ms, after the ninth collection): the memory is let go, and a call uses and drops 128 MiB.
    await until(() => memory.collections === 9);
    memory.held = 0;
    memory.drop(128);
    const call = new Promise<Unfit | undefined>((decided) => health.afterCall(decided));
    expect(await call).toBeUndefined();
    expect(await between).toBeUndefined();
    expect(health.unfit).toBeUndefined();
  });

  it('a stream of calls cannot keep the verdict waiting: past 5 s of deciding, a call that ends no longer starts the collections again', async () => {
    const memory = new LaggingMemory();
    const health = new WorkerHealth(64 * MIB, memory.probe);
    health.baseline();
    memory.held = 128 * MIB;
    const verdicts: Promise<Unfit | undefined>[] = [];
    const state = { decided: false };
    while (!state.decided) {
      verdicts.push(
        new Promise<Unfit | undefined>((resolve) =>
          health.afterCall((unfit) => {
            state.decided = true;
            resolve(unfit);
          }),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const unfit = await verdicts[0];
    expect(unfit).toEqual({ reason: 'memory', detail: expect.stringContaining('over its limit of 64 MiB') });
    // Every call that waited got the same verdict; the worker stays unfit.
    expect(await Promise.all(verdicts)).toEqual(verdicts.map(() => unfit));
    expect(health.beforeCall()).toBe(unfit);
  }, 30_000);
});

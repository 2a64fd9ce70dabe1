/**
 * A full garbage collection of a worker's isolate, made before the package loads: Buffers a call dropped
 * count as external memory until a collection frees them, so a worker over its memory limit is collected
 * before it is judged (worker-health.ts).
 *
 * V8's `--expose-gc` is one flag for the whole process, set only for the moment of making the function.
 * Two workers starting together each set it and set it back, and one made its context just after the
 * other had set it back: it got no collector (V8 even printed "Error installing extension 'v8/gc'"), so
 * its verdicts came from a count that had not caught up with what calls dropped, and it failed calls that
 * had only used memory for a moment (the flake of worker-health.test.ts seen on Node 22 and 24). So every
 * worker of the host takes `lock` (one SharedArrayBuffer the host hands them all) around it, and tries a
 * few times, in case code that ignores the lock (a package in another worker) sets the flag meanwhile.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A process-wide lock for the flag, one per host process, for every worker it starts. */
export function collectorLock(): Int32Array {
  return (shared ??= new Int32Array(new SharedArrayBuffer(4)));
}
let shared: Int32Array | undefined;

/** How long a worker waits for the lock before it goes on without it (a worker ended while holding it, or a package that set it, never lets go). */
const LOCK_WAIT_MS = 2000;
const TRIES = 5;

export function makeCollector(lock: Int32Array | undefined): (() => void) | undefined {
  const locked = lock !== undefined && acquire(lock);
  try {
    for (let attempt = 0; attempt < TRIES; attempt++) {
      try {
        setFlagsFromString('--expose-gc');
        const gc = runInNewContext('gc') as unknown;
        if (typeof gc === 'function') return gc as () => void;
      } catch {
        // the flag was set back before the context was made: again
      }
    }
    return undefined;
  } finally {
    try {
      setFlagsFromString('--no-expose-gc');
    } catch {
      // the flag stays; harmless
    }
    if (locked) {
      Atomics.store(lock, 0, 0);
      Atomics.notify(lock, 0);
    }
  }
}

function acquire(lock: Int32Array): boolean {
  const deadline = Date.now() + LOCK_WAIT_MS;
  while (Atomics.compareExchange(lock, 0, 0, 1) !== 0) {
    if (Date.now() >= deadline) return false;
    Atomics.wait(lock, 0, 1, 20);
  }
  return true;
}

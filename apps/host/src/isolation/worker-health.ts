/**
 * Whether an isolated worker is still fit to answer calls, checked in the worker itself: the built-ins
 * its protocol relies on are as they were once the package had loaded (see intrinsics.ts), and what it
 * holds outside the V8 heap (Buffers, ArrayBuffers, other external memory, which `resourceLimits` do
 * not bound) is under its limit. Checked around each call and once a second between calls; an unfit
 * worker answers no further call, and the host replaces it.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Intrinsics, probeIntrinsics } from './intrinsics.js';

export type Unfit = { readonly reason: 'polluted' | 'memory'; readonly detail: string };

/** How often the worker checks itself between calls. */
export const IDLE_CHECK_MS = 1000;
/** The full comparison of the built-ins runs after a call at most this often; the cheap probe runs around every call. */
const FULL_CHECK_EVERY_MS = 100;
const MIB = 1024 * 1024;

/**
 * A full garbage collection of this worker's isolate, taken before the package loads: Buffers a call
 * dropped count as external memory until a collection frees them, so a worker over its limit is
 * collected once before it is judged. V8's flag is set only for the moment of making the function.
 */
function collector(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  } finally {
    try {
      setFlagsFromString('--no-expose-gc');
    } catch {
      // the flag stays; harmless
    }
  }
}

export class WorkerHealth {
  readonly #gc = collector();
  readonly #memoryUsage = process.memoryUsage.bind(process);
  readonly #now = performance.now.bind(performance);
  #intrinsics: Intrinsics | undefined;
  #lastFull = 0;
  #unfit: Unfit | undefined;

  constructor(private readonly maxExternalBytes: number) {}

  /** The package has loaded: its built-ins from now on are the ones to keep. */
  baseline(): void {
    this.#intrinsics = new Intrinsics();
    this.#lastFull = this.#now();
  }

  /** Found unfit before: it stays so. */
  get unfit(): Unfit | undefined {
    return this.#unfit;
  }

  /** Before a call starts: the cheap probe. */
  beforeCall(): Unfit | undefined {
    return this.#unfit ?? this.#judge(probeIntrinsics, false);
  }

  /** After a call, before its result is sent: the probe, the full comparison now and then, and the memory held outside the heap. */
  afterCall(): Unfit | undefined {
    if (this.#unfit !== undefined) return this.#unfit;
    const full = this.#now() - this.#lastFull >= FULL_CHECK_EVERY_MS;
    return this.#judge(() => (full ? this.#full() : probeIntrinsics()), true);
  }

  /** Between calls: everything. */
  idle(): Unfit | undefined {
    return this.#unfit ?? this.#judge(() => this.#full(), true);
  }

  #full(): string | undefined {
    this.#lastFull = this.#now();
    return this.#intrinsics?.compare();
  }

  #judge(builtIns: () => string | undefined, memory: boolean): Unfit | undefined {
    let changed: string | undefined;
    try {
      changed = builtIns();
    } catch {
      changed = 'checking them threw';
    }
    if (changed !== undefined) return (this.#unfit = { reason: 'polluted', detail: changed });
    if (memory) {
      const over = this.#overLimit();
      if (over !== undefined) return (this.#unfit = { reason: 'memory', detail: over });
    }
    return undefined;
  }

  /**
   * Cheap first (V8's count of external memory); over the limit, collections and the full figures
   * decide. Two: V8 frees dropped ArrayBuffers and counts them off while it sweeps, which the next
   * collection finishes.
   */
  #overLimit(): string | undefined {
    if (getHeapStatistics().external_memory <= this.maxExternalBytes) return undefined;
    let usage = this.#memoryUsage();
    for (let i = 0; i < 2 && this.#gc !== undefined && usage.external > this.maxExternalBytes; i++) {
      this.#gc();
      usage = this.#memoryUsage();
    }
    const { external, arrayBuffers } = usage;
    if (external <= this.maxExternalBytes) return undefined;
    return (
      `it held ${Math.round(external / MIB)} MiB outside the JavaScript heap ` +
      `(${Math.round(arrayBuffers / MIB)} MiB of it in Buffers and ArrayBuffers), over its limit ` +
      `of ${Math.round(this.maxExternalBytes / MIB)} MiB`
    );
  }
}

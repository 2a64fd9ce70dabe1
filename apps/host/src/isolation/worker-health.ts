/**
 * Whether an isolated worker is still fit to answer calls, checked in the worker itself: the built-ins
 * its protocol relies on are as they were once the package had loaded (see intrinsics.ts), and what it
 * holds outside the V8 heap (Buffers, ArrayBuffers, other external memory, which `resourceLimits` do
 * not bound) is under its limit. Checked around each call and once a second between calls; an unfit
 * worker answers no further call, and the host replaces it.
 */
import { setImmediate, setTimeout } from 'node:timers';
import { getHeapStatistics } from 'node:v8';
import { makeCollector } from './collector.js';
import { Intrinsics, probeIntrinsics } from './intrinsics.js';

export type Unfit = { readonly reason: 'polluted' | 'memory'; readonly detail: string };
/** Gets a check's verdict: at once, or a moment later when the worker looked over its memory limit (see WorkerHealth). */
export type Verdict = (unfit: Unfit | undefined) => void;

/** How often the worker checks itself between calls. */
export const IDLE_CHECK_MS = 1000;
/** The full comparison of the built-ins runs after a call at most this often; the cheap probe runs around every call. */
const FULL_CHECK_EVERY_MS = 100;
const MIB = 1024 * 1024;

/**
 * The waits, in ms, before each collection that decides whether a worker over its memory limit really is:
 * the first two at once (usually enough), then a turn of the event loop, then longer, about 1.5 s in all,
 * taken only while the count is still over.
 */
const SETTLE_MS = [0, 0, -1, 5, 20, 50, 100, 200, 400, 700] as const;
/**
 * A check that joins collections already deciding starts their schedule again, so that what its own call
 * dropped gets every wait too; but not once they have gone on this long, or a stream of calls that each
 * use and drop more than the limit would keep every answer waiting.
 */
const RESTART_WITHIN_MS = 5000;

/** Where a worker reads what it holds outside the heap, and how it collects: this isolate's own, unless a test gives its own. */
export interface MemoryProbe {
  /** V8's count, cheap: read first. */
  readonly external: () => number;
  /** The full figures (`process.memoryUsage()`). */
  readonly usage: () => { readonly external: number; readonly arrayBuffers: number };
  /** A full garbage collection, when one could be made. */
  readonly gc: (() => void) | undefined;
}

/** This isolate's memory, and its collector, made under `lock` (see collector.ts). */
export function isolateMemory(lock: Int32Array | undefined): MemoryProbe {
  return {
    external: () => getHeapStatistics().external_memory,
    usage: process.memoryUsage.bind(process),
    gc: makeCollector(lock),
  };
}

export class WorkerHealth {
  readonly #gc: (() => void) | undefined;
  readonly #memoryUsage: MemoryProbe['usage'];
  readonly #external: MemoryProbe['external'];
  readonly #now = performance.now.bind(performance);
  #intrinsics: Intrinsics | undefined;
  #lastFull = 0;
  #unfit: Unfit | undefined;
  /** Checks waiting for collections to decide whether the worker is over its memory limit. */
  #waiting: Verdict[] = [];
  /** The collections deciding: the next step of SETTLE_MS, and when the first check started them. */
  #step = 0;
  #deciding = 0;

  constructor(
    private readonly maxExternalBytes: number,
    memory: MemoryProbe = isolateMemory(undefined),
  ) {
    this.#gc = memory.gc;
    this.#memoryUsage = memory.usage;
    this.#external = memory.external;
  }

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
    return this.#unfit ?? this.#builtIns(probeIntrinsics);
  }

  /**
   * After a call, before its result is sent: the probe, the full comparison now and then, and the memory
   * held outside the heap. `decided` is called at once, unless the worker looks over its memory limit:
   * then once collections have decided, a turn or two of the event loop later (see #overLimit).
   */
  afterCall(decided: Verdict): void {
    if (this.#unfit !== undefined) return decided(this.#unfit);
    const full = this.#now() - this.#lastFull >= FULL_CHECK_EVERY_MS;
    this.#judge(() => (full ? this.#full() : probeIntrinsics()), decided);
  }

  /** Between calls: everything; `decided` as for afterCall. */
  idle(decided: Verdict): void {
    if (this.#unfit !== undefined) return decided(this.#unfit);
    this.#judge(() => this.#full(), decided);
  }

  #full(): string | undefined {
    this.#lastFull = this.#now();
    return this.#intrinsics?.compare();
  }

  /** The built-ins, the probe's verdict for beforeCall. */
  #builtIns(check: () => string | undefined): Unfit | undefined {
    let changed: string | undefined;
    try {
      changed = check();
    } catch {
      changed = 'checking them threw';
    }
    return changed === undefined ? undefined : (this.#unfit = { reason: 'polluted', detail: changed });
  }

  /** The built-ins, then the memory held outside the heap: V8's count first, which is cheap; over the limit, #overLimit decides. */
  #judge(builtIns: () => string | undefined, decided: Verdict): void {
    const polluted = this.#builtIns(builtIns);
    if (polluted !== undefined) return decided(polluted);
    if (this.#external() <= this.maxExternalBytes) return decided(undefined);
    this.#waiting.push(decided);
    // Checks that find the worker over its limit while collections are deciding wait for the same verdict,
    // from the start of the schedule: joined near its end, a call that had just dropped a large Buffer
    // was judged on a count that had had no time to drop it (a flake of worker-health.test.ts on Node 22).
    if (this.#waiting.length > 1) {
      if (this.#now() - this.#deciding < RESTART_WITHIN_MS) this.#step = 0;
      return;
    }
    this.#step = 0;
    this.#deciding = this.#now();
    this.#overLimit();
  }

  readonly #next = () => this.#overLimit();

  #decided(over: string | undefined): void {
    if (over !== undefined) this.#unfit ??= { reason: 'memory', detail: over };
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const decided of waiting) decided(this.#unfit);
  }

  /**
   * Over the limit by V8's count, which still includes what a call dropped: collections and the full
   * figures decide. V8 frees a dropped ArrayBuffer's memory while it sweeps, which can run on another
   * thread, and counts it off on this one a task or more later. On a busy machine (2 cores, the test
   * suites of three projects beside it) four collections in two turns were not enough: a worker still
   * counted 131 MiB outside the heap with 0 MiB of it in Buffers (Node 24), and on Node 22 a call that had
   * dropped its Buffer was judged over the limit too. So while the count is over, collections go on
   * with the growing waits of SETTLE_MS (about 1.5 s in all) before the worker is judged: a call that
   * really holds more than the limit answers that much later, one that only used it is not failed.
   * Callbacks and the timers' own functions, bound before any package loads: no promise a package could
   * have replaced.
   */
  #overLimit(): void {
    const usage = this.#memoryUsage();
    if (usage.external <= this.maxExternalBytes) return this.#decided(undefined);
    if (this.#step < SETTLE_MS.length && this.#gc !== undefined) {
      this.#gc();
      const wait = ++this.#step < SETTLE_MS.length ? SETTLE_MS[this.#step]! : 0;
      if (wait === 0) return this.#overLimit();
      if (wait < 0) setImmediate(this.#next);
      else setTimeout(this.#next, wait);
      return;
    }
    const { external, arrayBuffers } = usage;
    this.#decided(
      `it held ${Math.round(external / MIB)} MiB outside the JavaScript heap ` +
        `(${Math.round(arrayBuffers / MIB)} MiB of it in Buffers and ArrayBuffers), over its limit ` +
        `of ${Math.round(this.maxExternalBytes / MIB)} MiB`,
    );
  }
}

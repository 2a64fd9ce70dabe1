/**
 * One worker thread of an isolated package, as the pool sees it: the calls it holds, whether it may be
 * stuck, and how its calls are answered when it ends under them (what it sends about a call is read in
 * worker-messages.ts).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { cancelledJson, ExecutionErrorCode, InvokeResult, type AgentToolExecutionContext } from '@aptix/tool-contract';
import { Outbox } from './outbox.js';
import type { HostMessage } from './protocol.js';

/** How long a worker thread may take to start before its package's own time limit begins. */
export const WORKER_BOOT_MS = 30_000;

/** The worker's entry: built next to this file; from the sources (tests, the bench) the built copy. */
export function workerEntry(): URL {
  const beside = new URL('./worker-main.js', import.meta.url);
  return existsSync(fileURLToPath(beside)) ? beside : new URL('../../dist/isolation/worker-main.js', import.meta.url);
}

export interface Pending {
  readonly name: string;
  /** Kept so a call a worker refused to start can go to another (see the 'unfit' message). */
  readonly args: string;
  readonly context: AgentToolExecutionContext;
  readonly resolve: (result: InvokeResult<string>) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
}

/** Why a worker ended, for the calls it still held. */
export type Ending =
  | { kind: 'stuck' }
  | { kind: 'memory' }
  | { kind: 'crash'; detail: string }
  /** The worker found itself unfit (worker-health.ts); `call` is the call whose end found it. */
  | { kind: 'unfit'; reason: 'polluted' | 'memory'; detail: string; call: number | undefined };

/** The limits a worker runs under, for the messages of calls it ended under. */
export interface WorkerLimits {
  readonly heapMb: number | undefined;
  readonly externalMb: number;
}

/** A worker's 'unfit' message as an Ending, or undefined when it is not one (nothing from a worker is trusted). */
export function unfitEnding(message: {
  reason?: unknown;
  detail?: unknown;
  call?: unknown;
}): Extract<Ending, { kind: 'unfit' }> | undefined {
  if (message.reason !== 'polluted' && message.reason !== 'memory') return undefined;
  const detail = typeof message.detail === 'string' ? message.detail.slice(0, 500) : 'no detail';
  return {
    kind: 'unfit',
    reason: message.reason,
    detail,
    call: typeof message.call === 'number' ? message.call : undefined,
  };
}

/**
 * The calls an unfit worker never started, taken from it to be sent to another; the rest stay. With
 * `running` (the calls it started and has not answered), every call it holds but `call` and those; in a
 * message without it, only those listed in `unstarted` (nothing from a worker is trusted).
 */
export function takeNeverStarted(
  entry: PoolWorker,
  message: { call?: unknown; unstarted?: unknown; running?: unknown },
): Pending[] {
  // Only the first report counts. By then every call the worker held was named in it (and stays until the
  // worker exits) or taken; a later report (each check waiting on the same verdict sends one) no longer
  // names the calls the first did, and taking them would run a started call a second time elsewhere.
  if (entry.reportedUnfit) return [];
  entry.reportedUnfit = true;
  if (!Array.isArray(message.running)) return takeUnstarted(entry, message.unstarted);
  const started = new Set<unknown>(message.running.slice(0, 10_000));
  if (typeof message.call === 'number') started.add(message.call);
  return takeUnstarted(
    entry,
    [...entry.pending.keys()].filter((id) => !started.has(id)),
  );
}

/** The calls a worker refused to start, taken from it to be sent to another; the rest stay. */
export function takeUnstarted(entry: PoolWorker, unstarted: unknown): Pending[] {
  if (!Array.isArray(unstarted)) return [];
  const taken: Pending[] = [];
  for (const id of unstarted.slice(0, 10_000)) {
    const pending = typeof id === 'number' ? entry.pending.get(id) : undefined;
    if (pending === undefined) continue;
    entry.pending.delete(id as number);
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
    taken.push(pending);
  }
  return taken;
}

export class PoolWorker {
  state: 'starting' | 'ready' | 'ended' = 'starting';
  readonly pending = new Map<number, Pending>();
  ending: Ending | undefined;
  /** The worker has said it is unfit: its later reports take no call (see takeNeverStarted). */
  reportedUnfit = false;
  /** Set while the pool waits for the package's close export to finish in this worker. */
  closed: (() => void) | undefined;
  #pings = 0;
  #stuckTimer: ReturnType<typeof setTimeout> | undefined;

  /** Calls' messages queued in one turn of the event loop go to the worker as one (see outbox.ts). */
  readonly #outbox: Outbox;

  constructor(readonly worker: Worker) {
    this.#outbox = new Outbox((message) => {
      try {
        worker.postMessage(message);
      } catch {
        // An ended worker: its calls are answered by its exit.
      }
    });
  }

  /** A call's message (a string) is batched; any other goes at once, after what is queued. */
  post(message: HostMessage | string): void {
    if (typeof message === 'string') this.#outbox.string(message);
    else this.#outbox.object(message);
  }

  /** Lets the package's close export run in this worker (bounded by its time limit), then ends the thread. */
  async close(limitMs: number): Promise<void> {
    if (this.state === 'ready' && !this.suspect) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, limitMs + 250);
        this.closed = () => {
          clearTimeout(timer);
          resolve();
        };
        this.worker.once('exit', this.closed);
        this.post({ type: 'close' });
      });
    }
    await this.worker.terminate();
  }

  /** Asks the worker to answer at once: if it cannot within `ms`, its thread is stuck in a call. */
  checkAlive(ms: number, onStuck: () => void): void {
    if (this.#stuckTimer !== undefined || this.state === 'ended') return;
    const seq = ++this.#pings;
    this.post({ type: 'ping', seq });
    this.#stuckTimer = setTimeout(onStuck, ms);
    this.#stuckTimer.unref();
  }

  pong(): void {
    if (this.#stuckTimer !== undefined) clearTimeout(this.#stuckTimer);
    this.#stuckTimer = undefined;
  }

  /** A ping is unanswered: the worker may be stuck, so no new call goes to it until it answers or is replaced. */
  get suspect(): boolean {
    return this.#stuckTimer !== undefined;
  }
}

/** The answer of a call whose worker ended under it. */
export function endedResult(
  pending: Pending,
  ending: Ending,
  pkg: string,
  limits: WorkerLimits,
  id: number,
): InvokeResult<string> {
  const { name } = pending;
  switch (ending.kind) {
    case 'memory':
      return InvokeResult.fromError(
        `${name} was stopped: its isolated worker ran out of memory (limit ${
          limits.heapMb ?? 'default'
        } MiB) and was replaced. Ask for less; if this much is expected, the host's operator can raise resourceLimits.maxOldGenerationSizeMb of ${pkg}.`,
        ExecutionErrorCode.RESOURCE_LIMIT,
      );
    case 'unfit':
      if (ending.reason === 'memory') {
        return InvokeResult.fromError(
          `${name} was stopped: its isolated worker ` +
            `${id === ending.call ? 'ended this call holding' : 'held'} more memory outside the ` +
            `JavaScript heap (Buffers, ArrayBuffers) than its limit of ${limits.externalMb} MiB, and ` +
            `was replaced. Ask for less; if this much is expected, the host's operator can raise ` +
            `resourceLimits.maxExternalMemoryMb of ${pkg}.`,
          ExecutionErrorCode.RESOURCE_LIMIT,
        );
      }
      if (id === ending.call) {
        return InvokeResult.fromError(
          `${name} changed JavaScript's built-ins in its isolated worker (${ending.detail}), so its result was dropped and the worker replaced. A tool must leave the built-ins alone.`,
          ExecutionErrorCode.TOOL_EXCEPTION,
        );
      }
      return InvokeResult.fromError(
        `${name} was stopped: its worker had to be replaced because another call changed JavaScript's built-ins in it. Calling again should work.`,
        ExecutionErrorCode.TOOL_UNAVAILABLE,
      );
    case 'stuck':
      // The call that was asked to stop (its time-out, or the caller) and kept the thread busy ended with its
      // worker, before it could have any further effect: the executor answers TIMEOUT or cancelled for it.
      if (pending.signal?.aborted) return InvokeResult.create(cancelledJson(name, pending.context));
      return InvokeResult.fromError(
        `${name} was stopped: its worker had to be replaced because a call on it kept its thread busy past its time-out. Calling again should work.`,
        ExecutionErrorCode.TOOL_UNAVAILABLE,
      );
    case 'crash':
      return InvokeResult.fromError(
        `${name} failed: its worker stopped (${ending.detail}) while running the call, and was replaced.`,
        ExecutionErrorCode.TOOL_EXCEPTION,
      );
  }
}

export function describeEnding(ending: Ending): string {
  switch (ending.kind) {
    case 'memory':
      return 'ran out of memory';
    case 'stuck':
      return 'stayed busy past a call’s time-out';
    case 'crash':
      return `stopped (${ending.detail})`;
    case 'unfit':
      return ending.reason === 'memory'
        ? `went over its limit outside the heap (${ending.detail})`
        : `had its JavaScript built-ins changed by the package (${ending.detail})`;
  }
}

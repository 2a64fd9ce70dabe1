/**
 * One worker thread of an isolated package, as the pool sees it: the calls it holds, whether it may be
 * stuck, and how its calls are answered when it ends under them.
 */
import type { Worker } from 'node:worker_threads';
import { cancelledJson, ExecutionErrorCode, InvokeResult, type AgentToolExecutionContext } from '@aptix/tool-contract';
import type { HostMessage } from './protocol.js';

export interface Pending {
  readonly name: string;
  readonly context: AgentToolExecutionContext;
  readonly resolve: (result: InvokeResult<string>) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
}

/** Why a worker ended, for the calls it still held. */
export type Ending = { kind: 'stuck' } | { kind: 'memory' } | { kind: 'crash'; detail: string };

export class PoolWorker {
  state: 'starting' | 'ready' | 'ended' = 'starting';
  readonly pending = new Map<number, Pending>();
  ending: Ending | undefined;
  /** Set while the pool waits for the package's close export to finish in this worker. */
  closed: (() => void) | undefined;
  #pings = 0;
  #stuckTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly worker: Worker) {}

  post(message: HostMessage | string): void {
    try {
      this.worker.postMessage(message);
    } catch {
      // An ended worker: its calls are answered by its exit.
    }
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
export function endedResult(pending: Pending, ending: Ending, pkg: string, heapLimitMb: number | undefined): InvokeResult<string> {
  const { name } = pending;
  switch (ending.kind) {
    case 'memory':
      return InvokeResult.fromError(
        `${name} was stopped: its isolated worker ran out of memory (limit ${
          heapLimitMb ?? 'default'
        } MiB) and was replaced. Ask for less; if this much is expected, the host's operator can raise resourceLimits.maxOldGenerationSizeMb of ${pkg}.`,
        ExecutionErrorCode.RESOURCE_LIMIT
      );
    case 'stuck':
      // The call that was asked to stop (its time-out, or the caller) and kept the thread busy ended with its
      // worker, before it could have any further effect: the executor answers TIMEOUT or cancelled for it.
      if (pending.signal?.aborted) return InvokeResult.create(cancelledJson(name, pending.context));
      return InvokeResult.fromError(
        `${name} was stopped: its worker had to be replaced because a call on it kept its thread busy past its time-out. Calling again should work.`,
        ExecutionErrorCode.TOOL_UNAVAILABLE
      );
    case 'crash':
      return InvokeResult.fromError(`${name} failed: its worker stopped (${ending.detail}) while running the call, and was replaced.`, ExecutionErrorCode.TOOL_EXCEPTION);
  }
}

export function describeEnding(ending: Ending): string {
  return ending.kind === 'memory' ? 'ran out of memory' : ending.kind === 'stuck' ? 'stayed busy past a call’s time-out' : `stopped (${ending.detail})`;
}

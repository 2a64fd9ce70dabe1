import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { ExecutionErrorCode, InvokeResult, type AgentToolExecutionContext } from '@aptix/tool-contract';
import type { WorkerResourceLimits } from '../tool-package-config.js';
import {
  describeEnding,
  endedResult,
  type PoolWorker,
  takeNeverStarted,
  unfitEnding,
  type Ending,
  type WorkerLimits,
} from './pool-worker.js';
import { contextData, encodeCall, type WorkerMessage, type WorkerSetup } from './protocol.js';
import { PolicyQuestions, type PolicyAnswer } from './worker-policy.js';
import { UnitRequests, WorkerUnitError, type UnitChannel } from './isolated-units.js';
import type { UnitRequest } from './unit-protocol.js';
import { countWorkerRestart } from '../telemetry/host-metrics.js';
import { startWorker, type ReadyMessage, type WorkerLife } from './worker-start.js';
import { readCallMessage } from './worker-messages.js';

export type { ReadyMessage } from './worker-start.js';

export interface WorkerPoolOptions {
  /** The package as the configuration names it, for messages. */
  readonly specifier: string;
  readonly setup: WorkerSetup;
  readonly size: number;
  readonly resourceLimits: WorkerResourceLimits;
  /** The most each worker may hold outside the V8 heap (MiB), checked by the worker itself. */
  readonly externalMemoryMb: number;
  readonly logger: Logger;
  /** How long a worker may take to answer a ping after a call of its was cancelled, before it is deemed stuck and ended. Default 500 ms. */
  readonly stuckAfterMs?: number;
}

/**
 * The worker threads of one isolated package. A call goes to the ready worker with the fewest calls
 * in flight. A cancelled or timed-out call is cancelled in its worker too; if the worker then does not
 * answer a ping, its thread is stuck (a busy loop) and it is ended and replaced. A worker that runs out
 * of memory, throws an uncaught exception or exits is replaced as well; only the calls it held fail.
 */
export class WorkerPool extends EventEmitter implements UnitChannel {
  readonly #options: WorkerPoolOptions;
  readonly #workers = new Set<PoolWorker>();
  readonly #waiting: Array<(worker: PoolWorker | undefined) => void> = [];
  #nextId = 0;
  readonly #policies = new PolicyQuestions();
  readonly #units = new UnitRequests();
  #closing = false;
  #retryMs = 500;
  /** Workers ended and replaced so far (a gauge for tests and the bench). */
  replacements = 0;

  private constructor(options: WorkerPoolOptions) {
    super();
    this.#options = options;
  }

  /** Starts every worker; resolves with what the first reported, or throws the first start-up failure. */
  static async start(options: WorkerPoolOptions): Promise<{ pool: WorkerPool; ready: ReadyMessage }> {
    const pool = new WorkerPool(options);
    try {
      const ready = await Promise.all(Array.from({ length: options.size }, () => pool.#spawn()));
      return { pool, ready: ready[0]! };
    } catch (error) {
      await pool.close();
      throw error;
    }
  }

  /** Runs one call in a worker; never rejects. */
  call(
    name: string,
    args: string,
    context: AgentToolExecutionContext,
    signal: AbortSignal | undefined,
  ): Promise<InvokeResult<string>> {
    const ready = this.#pick();
    if (ready !== undefined) return this.#send(ready, name, args, context, signal);
    if (this.#closing)
      return Promise.resolve(
        InvokeResult.fromError(
          `${name} is not available: the host is shutting down.`,
          ExecutionErrorCode.TOOL_UNAVAILABLE,
        ),
      );
    // Every worker is being replaced, or may be stuck: wait for the first that is ready (the caller's deadline still holds).
    return new Promise((resolve) => {
      const onAbort = () => {
        const index = this.#waiting.indexOf(take);
        if (index !== -1) this.#waiting.splice(index, 1);
        resolve(
          InvokeResult.fromError(
            `${name} did not start: no worker of its package became ready in time.`,
            ExecutionErrorCode.TIMEOUT,
          ),
        );
      };
      const take = (worker: PoolWorker | undefined) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(
          worker === undefined
            ? InvokeResult.fromError(
                `${name} is not available: the host is shutting down.`,
                ExecutionErrorCode.TOOL_UNAVAILABLE,
              )
            : this.#send(worker, name, args, context, signal),
        );
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(take);
    });
  }

  /** Evaluates a tool's approval policy in a worker (see worker-policy.ts); never rejects, fails closed. */
  evaluatePolicy(name: string, args: unknown, context: AgentToolExecutionContext): Promise<PolicyAnswer> {
    const entry = this.#pick();
    if (entry === undefined)
      return Promise.resolve({
        required: true,
        reason: `${name}'s approval policy could not be evaluated now (no worker of its package is ready), so a person must decide.`,
      });
    const id = ++this.#nextId;
    return this.#policies.ask(
      entry,
      id,
      name,
      () => entry.post({ type: 'policy', id, name, args: JSON.stringify(args), context: contextData(context) }),
      () => entry.checkAlive(this.#options.stuckAfterMs ?? 500, () => this.#end(entry, { kind: 'stuck' })),
    );
  }

  /**
   * Runs a prompt's render, a resource's read or a completion in a worker (see isolated-units.ts).
   * Its signal (the host's time limit, the caller) cancels it there, and a worker that then stays busy is
   * ended and replaced, as for a tool call. Rejects with what the package's function threw.
   */
  request(request: UnitRequest, signal: AbortSignal): Promise<unknown> {
    const entry = this.#pick();
    if (entry === undefined)
      return Promise.reject(
        new WorkerUnitError(
          this.#closing ? 'the host is shutting down' : 'no worker of its package is ready now; try again shortly',
        ),
      );
    const id = ++this.#nextId;
    const onAbort = () => {
      entry.post({ type: 'unit-cancel', id });
      entry.checkAlive(this.#options.stuckAfterMs ?? 500, () => this.#end(entry, { kind: 'stuck' }));
    };
    const answer = this.#units.open(id, { worker: entry, signal, onAbort });
    entry.post({ type: 'unit', id, ...request });
    return answer;
  }

  /** Watches a subscribable resource in every worker, a fresh one too: a change in any is a change. */
  watch(name: string, uri: string, changed: () => void): () => void {
    const id = ++this.#nextId;
    this.#units.addWatch(id, name, uri, changed);
    for (const entry of this.#workers) if (entry.state === 'ready') entry.post({ type: 'unit-watch', id, name, uri });
    return () => {
      if (!this.#units.removeWatch(id)) return;
      for (const entry of this.#workers) if (entry.state === 'ready') entry.post({ type: 'unit-unwatch', id });
    };
  }

  /** Lets each ready worker run the package's `close` export (bounded by its time limit), then ends every worker. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const take of this.#waiting.splice(0)) take(undefined);
    const limitMs = this.#options.setup.limitMs;
    await Promise.allSettled([...this.#workers].map((entry) => entry.close(limitMs)));
  }

  #pick(): PoolWorker | undefined {
    let best: PoolWorker | undefined;
    for (const entry of this.#workers) {
      if (entry.state !== 'ready' || entry.suspect || entry.ending !== undefined) continue;
      if (best === undefined || entry.pending.size < best.pending.size) best = entry;
      if (best.pending.size === 0) break;
    }
    return best;
  }

  #send(
    entry: PoolWorker,
    name: string,
    args: string,
    context: AgentToolExecutionContext,
    signal: AbortSignal | undefined,
  ): Promise<InvokeResult<string>> {
    const id = ++this.#nextId;
    return new Promise((resolve) => {
      const onAbort = signal
        ? () => {
            const timedOut = (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
            entry.post({ type: 'cancel', id, timedOut });
            // A worker that cannot answer a ping is stuck in this call: end it, and a fresh one takes its place.
            entry.checkAlive(this.#options.stuckAfterMs ?? 500, () => this.#end(entry, { kind: 'stuck' }));
          }
        : undefined;
      entry.pending.set(id, { name, args, context, resolve, signal, onAbort });
      if (signal && onAbort) {
        if (signal.aborted) queueMicrotask(onAbort);
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      entry.post(encodeCall(id, name, args, context));
    });
  }

  #settle(entry: PoolWorker, id: number, result: InvokeResult<string>): void {
    const pending = entry.pending.get(id);
    if (pending === undefined) return;
    entry.pending.delete(id);
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
    pending.resolve(result);
  }

  #end(entry: PoolWorker, ending: Ending): void {
    if (entry.state === 'ended') return;
    entry.ending ??= ending;
    void entry.worker.terminate();
  }

  #spawn(): Promise<ReadyMessage> {
    const { entry, ready } = startWorker(this.#options, {
      ready: (entry, message) => {
        this.#retryMs = 500;
        for (const watch of this.#units.watches()) entry.post({ type: 'unit-watch', ...watch });
        this.#drainWaiting();
        // A fresh worker of a package whose tools change may have started with another list.
        if (message.changing === true && Array.isArray(message.tools)) this.emit('tools', message.tools);
      },
      callMessage: (entry, wire) => this.#onCallMessage(entry, wire),
      message: (entry, message) => this.#onMessage(entry, message),
      exited: (entry, ending, wasReady) => this.#onExit(entry, ending, wasReady),
    });
    this.#workers.add(entry);
    return ready;
  }

  /** A started worker's message other than a call's (see worker-start.ts for the start-up's own). */
  #onMessage(entry: PoolWorker, message: Parameters<WorkerLife['message']>[1]): void {
    switch (message.type) {
      case 'tools':
        // The package's new list (toolsChanged), checked by the host as any tool list is.
        if (entry.state === 'ready' && Array.isArray(message.tools)) this.emit('tools', message.tools);
        return;
      case 'result':
        // Checked again by the host's executor (result text, content blocks, output schema).
        if (typeof message.id === 'number') this.#settle(entry, message.id, message.result);
        return;
      case 'policy':
        this.#policies.answer(entry, message);
        return;
      case 'pong':
        entry.pong();
        this.#drainWaiting();
        return;
      case 'closed':
        entry.closed?.();
        return;
      case 'unit':
        this.#units.answer(entry, message);
        return;
      case 'unit-changed':
        if (entry.state === 'ready') this.#units.changed(message);
        return;
      case 'unfit':
        this.#unfit(entry, message);
        return;
    }
  }

  /** A worker's thread exited: the calls, questions and requests it held fail, and a worker that was ready is replaced. */
  #onExit(entry: PoolWorker, ending: Ending, wasReady: boolean): void {
    const { logger, specifier } = this.#options;
    this.#workers.delete(entry);
    const replacing = wasReady && !this.#closing;
    // Said before the calls it ended are answered, so whoever reads the log learns of the
    // replacement no later than the callers learn of the crash.
    if (replacing)
      logger.warn(
        { toolPackage: specifier, reason: ending.kind },
        `isolated tool package ${specifier}: replacing a worker that ${describeEnding(ending)}`,
      );
    for (const [id, pending] of [...entry.pending])
      this.#settle(entry, id, endedResult(pending, ending, specifier, this.#limits, id));
    this.#policies.ended(entry);
    this.#units.ended(entry, describeEnding(ending));
    if (!replacing) return;
    this.replacements++;
    countWorkerRestart(specifier, ending.kind);
    this.#replace();
  }

  get #limits(): WorkerLimits {
    return { heapMb: this.#options.resourceLimits.maxOldGenerationSizeMb, externalMb: this.#options.externalMemoryMb };
  }

  /** A worker found itself unfit (worker-health.ts): the calls it never started go to another, and it is replaced. */
  #unfit(entry: PoolWorker, message: Extract<WorkerMessage, { type: 'unfit' }>): void {
    const ending = unfitEnding(message);
    if (ending === undefined) return;
    const unstarted = takeNeverStarted(entry, message);
    // Ended first, so that no call, these included, is sent to it again.
    this.#end(entry, ending);
    for (const retry of unstarted)
      void this.call(retry.name, retry.args, retry.context, retry.signal).then(retry.resolve);
  }

  /** Starts a worker in place of one that ended; retried with a growing pause while it cannot start. */
  #replace(): void {
    this.#spawn().then(
      () => {
        this.#options.logger.info(
          { toolPackage: this.#options.specifier },
          `isolated tool package ${this.#options.specifier}: a fresh worker is ready`,
        );
        this.emit('replaced');
      },
      (error: Error) => {
        this.#options.logger.error(
          { toolPackage: this.#options.specifier },
          `isolated tool package ${this.#options.specifier}: a replacement worker failed to start, retrying in ${this.#retryMs} ms: ${error.message}`,
        );
        const timer = setTimeout(() => {
          if (!this.#closing) this.#replace();
        }, this.#retryMs);
        timer.unref();
        this.#retryMs = Math.min(this.#retryMs * 2, 30_000);
      },
    );
  }

  #drainWaiting(): void {
    while (this.#waiting.length > 0) {
      const worker = this.#pick();
      if (worker === undefined) return;
      this.#waiting.shift()!(worker);
    }
  }

  /** A worker's message about one of its calls (see {@link readCallMessage}); its result settles the call. */
  #onCallMessage(entry: PoolWorker, wire: string): void {
    const answer = readCallMessage(entry, wire);
    if (answer !== undefined) this.#settle(entry, answer.id, answer.result);
  }
}

import { getEventListeners } from 'node:events';
import type { AdminLogger } from './admin-logger.js';
import type { JsonSchema } from './schema.js';
import type { AgentToolExecutionContext } from './agent-tool.js';
import { cancelledJson, isAbortError, reportsCancellation } from './cancellation.js';
import { deadlines, type Deadline, type DeadlineList } from './deadline-queue.js';
import { ExecutionErrorCode } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import type { SignalSource } from './typed-agent-tool.js';

const ONCE = Object.freeze({ once: true });

/** What a call needs of its executor once the tool has answered. */
export interface CallHooks {
  /** The tool's answer as the result the caller gets; `trusted` when it came through the fast path. */
  settle(
    name: string,
    output: unknown,
    context: AgentToolExecutionContext,
    trusted: boolean,
    logger: AdminLogger,
    outputSchema: JsonSchema | undefined,
  ): InvokeResult<string>;
  exception(
    name: string,
    error: unknown,
    context: AgentToolExecutionContext,
    logger: AdminLogger,
  ): InvokeResult<string>;
  timedOut(name: string, timeoutMs: number, context: AgentToolExecutionContext, logger: AdminLogger): void;
  /** The tool settled after its call was answered without it (OUTCOME_UNKNOWN, or a read-only tool's cut). */
  settledLate(name: string, outcome: string, context: AgentToolExecutionContext, logger: AdminLogger): void;
  readonly cancelGraceMs: number;
}

/** Why a call's signal was aborted. */
type Stop = 'cancel' | 'timeout';

/**
 * A call's AbortSignal, made only if the tool asks for it: what the tool is handed while it starts.
 * Small, because every call makes one; the {@link Call} that races a promise is made only for a tool
 * that answers with one.
 */
export class CallSignal implements SignalSource {
  controller: AbortController | undefined = undefined;
  checkedAgainst: JsonSchema | undefined = undefined;
  /** The controller came from {@link idle} and goes back there if the call ends without aborting it. */
  #leased = false;

  signal(): AbortSignal {
    if (this.controller === undefined) this.controller = new AbortController();
    else this.#leased = false; // handed out as the call's own too: never reused
    return this.controller.signal;
  }

  /** The call's signal for a tool that lets go of it when it settles (`ReleasesSignal`): a reused one when there is one. */
  lease(): AbortSignal {
    if (this.controller !== undefined) return this.signal();
    this.controller = idle.pop() ?? new AbortController();
    this.#leased = true;
    return this.controller.signal;
  }

  /**
   * The tool has settled: a leased signal that was never aborted, and that the tool left no listener
   * on, is kept for another call. Anything else is dropped.
   */
  release(): void {
    const controller = this.controller;
    if (!this.#leased || controller === undefined) return;
    this.#leased = false;
    this.controller = undefined;
    if (
      !controller.signal.aborted &&
      idle.length < MAX_IDLE &&
      getEventListeners(controller.signal, 'abort').length === 0
    )
      idle.push(controller);
  }
}

/** Controllers of settled calls, never aborted, with no listener left: reused by the next calls that lease one. */
const idle: AbortController[] = [];
const MAX_IDLE = 64;

/**
 * The race of one call whose tool answered with a promise: that promise against the deadline and the
 * caller's cancellation, which abort the call's signal (see {@link CallSignal}).
 *
 * A cancelled or TIMEOUT answer promises that the call's effect did not happen and will not happen.
 * So after an abort (the caller's, or the deadline's) the call waits up to the grace period for the
 * tool to settle, and answers with what the tool reports: a success is the effect that happened; an
 * AbortError or the cancelled shape means it stopped. A tool that does not settle in time may still
 * act: the answer is then OUTCOME_UNKNOWN, unless the tool is declared read-only (`readOnlyHint`).
 */
export class Call implements Deadline {
  at = 0;
  prev: Deadline | undefined = undefined;
  next: Deadline | undefined = undefined;
  queue: DeadlineList | undefined = undefined;
  #resolve: ((result: InvokeResult<string>) => void) | undefined;
  #settled = false;
  #started = 0;
  #timeoutMs = 0;
  #graceTimer: ReturnType<typeof setTimeout> | undefined;
  #callerSignal: AbortSignal | undefined;
  #stop: Stop | undefined;

  constructor(
    private readonly hooks: CallHooks,
    private readonly name: string,
    private readonly context: AgentToolExecutionContext,
    private readonly caller: AbortSignal | (() => AbortSignal) | undefined,
    private readonly trusted: boolean,
    private readonly readOnly: boolean,
    private readonly logger: AdminLogger,
    private readonly outputSchema: JsonSchema | undefined,
    private readonly signals: CallSignal,
  ) {}

  /** Waits for the tool, at most `timeoutMs` (plus the grace period), and for the caller's cancellation. */
  race(pending: PromiseLike<unknown>, timeoutMs: number): Promise<InvokeResult<string>> {
    return new Promise<InvokeResult<string>>((resolve) => {
      this.#resolve = resolve;
      this.#timeoutMs = timeoutMs;
      this.#started = performance.now();
      this.at = this.#started + timeoutMs;
      deadlines.add(this, timeoutMs);
      // Through Promise.resolve: a foreign thenable whose `then` throws becomes a rejection here.
      Promise.resolve(pending).then(
        (output) => this.#answered(output),
        (error: unknown) => this.#failed(error),
      );
      let signal: AbortSignal | undefined;
      try {
        signal = typeof this.caller === 'function' ? this.caller() : this.caller;
      } catch {
        signal = undefined; // a caller whose signal cannot be made cannot cancel; the deadline still holds
      }
      this.#callerSignal = signal;
      // A signal made on demand may come already aborted (the caller left while the call started).
      if (signal?.aborted) this.handleEvent();
      else signal?.addEventListener('abort', this, ONCE);
    });
  }

  /** The deadline passed: stop the tool, and wait for it to say it stopped. */
  expire(): void {
    if (this.#settled || this.#stop !== undefined) return;
    this.hooks.timedOut(this.name, this.#timeoutMs, this.context, this.logger);
    this.#stopTool('timeout', new DOMException(`${this.name} timed out after ${this.#timeoutMs} ms`, 'TimeoutError'));
  }

  /** The caller cancelled (an EventListener object, so no closure is made per call). */
  handleEvent(): void {
    if (this.#settled || this.#stop !== undefined) return;
    deadlines.remove(this);
    this.#stopTool('cancel', this.#callerSignal?.reason);
  }

  #stopTool(stop: Stop, reason: unknown): void {
    this.#stop = stop;
    this.signals.controller?.abort(reason);
    this.#graceTimer = setTimeout(() => this.#graceOver(), this.hooks.cancelGraceMs);
  }

  /** The tool did not settle within the grace period: only a read-only tool's silence is harmless. */
  #graceOver(): void {
    if (this.readOnly) this.#finish(this.#stopped());
    else this.#finish(this.#unknown());
  }

  #answered(output: unknown): void {
    // The tool settled: a signal it leased and no one aborted may serve another call.
    if (this.#stop === undefined) this.signals.release();
    if (this.#settled) return this.#late(output);
    const result = this.hooks.settle(this.name, output, this.context, this.trusted, this.logger, this.outputSchema);
    // After an abort, the cancelled shape means the tool stopped; any other result is what it did.
    if (this.#stop !== undefined && result.successful && reportsCancellation(result.result)) {
      return this.#finish(this.#stop === 'cancel' ? result : this.#stopped());
    }
    this.#finish(result);
  }

  #failed(error: unknown): void {
    if (this.#stop === undefined) this.signals.release();
    if (this.#settled) return this.#late(error, true);
    if (this.#stop !== undefined && isAbortError(error, this.signals.controller?.signal))
      return this.#finish(this.#stopped());
    this.#finish(this.hooks.exception(this.name, error, this.context, this.logger));
  }

  /** The answer for a tool that stopped, or never started, before it had any effect. */
  #stopped(): InvokeResult<string> {
    if (this.#stop === 'timeout') {
      return InvokeResult.fromError(
        `${this.name} did not finish within ${this.#timeoutMs} ms and was stopped; it made no change. Try a smaller request, or raise the tool's time-out.`,
        ExecutionErrorCode.TIMEOUT,
      );
    }
    return InvokeResult.create(cancelledJson(this.name, this.context, performance.now() - this.#started));
  }

  #unknown(): InvokeResult<string> {
    const what =
      this.#stop === 'timeout'
        ? `did not finish within ${this.#timeoutMs} ms`
        : `was cancelled by the caller after ${Math.round(performance.now() - this.#started)} ms`;
    return InvokeResult.fromError(
      `${this.name} ${what} and was asked to stop, but did not confirm within ${this.hooks.cancelGraceMs} ms that it stopped: its effect may have happened or may still happen. ` +
        'Check the state it changes (read it back) before calling it again; calling it again may apply the change twice.',
      ExecutionErrorCode.OUTCOME_UNKNOWN,
    );
  }

  #late(outcome: unknown, rejected = false): void {
    let text: string;
    if (rejected) text = 'failed with an exception';
    else {
      const result = InvokeResult.isInvokeResult(outcome)
        ? outcome
        : typeof outcome === 'string'
          ? InvokeResult.create(outcome)
          : undefined;
      text =
        result === undefined
          ? 'answered with a malformed result'
          : !result.successful
            ? `failed (${result.errors[0]?.code ?? 'no code'})`
            : typeof result.result === 'string' && reportsCancellation(result.result)
              ? 'stopped without effect'
              : 'succeeded: its effect happened';
    }
    this.hooks.settledLate(this.name, text, this.context, this.logger);
  }

  #finish(result: InvokeResult<string>): void {
    if (this.#settled) return;
    this.#settled = true;
    deadlines.remove(this);
    if (this.#graceTimer !== undefined) clearTimeout(this.#graceTimer);
    this.#callerSignal?.removeEventListener('abort', this);
    this.#resolve!(result);
  }
}

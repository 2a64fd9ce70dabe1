/**
 * The worker's side of a call: runs it through the worker's executor and sends the result back, with the
 * tool's progress reports and log entries on the way when the caller listens to them. The context's
 * functions cannot cross threads, so the worker rebuilds them: each report or entry goes to the host as a
 * message naming the call, and the host hands it to the caller's own function.
 *
 * What crosses is bounded here already, so a tool that floods cannot flood the channel: progress through
 * the same gate every surface uses (checked, at most a burst then a rate, the newest kept), log entries
 * through the log gate (cut in size, bounded in rate). Nothing of a call is sent after its result.
 *
 * A call that may ask the user arrives with its input channel as data (whether the caller can ask, the
 * answers, the tool's state); a tool's questions go back with its failed result, as in process.
 */
import { logGate, progressGate, type AgentToolExecutionContext, type AgentToolExecutor } from '@aptix/tool-contract';
import {
  decodeCall,
  encodeCallMessage,
  encodeFailure,
  WANTS_LOG,
  WANTS_PROGRESS,
  type WorkerMessage,
} from './protocol.js';
import type { Unfit, WorkerHealth } from './worker-health.js';

interface RunningCall {
  controller: AbortController | undefined;
}

/** The reason a call's signal aborts with, when it is cancelled or its time-out passed. */
function abortReason(timedOut: boolean): DOMException {
  return timedOut
    ? new DOMException('The call timed out.', 'TimeoutError')
    : new DOMException('The caller cancelled the call.', 'AbortError');
}

/**
 * What an unfit worker tells the host of its calls: `call`, the one whose end found it; `unstarted`, those
 * it refused to start; `running`, those started and still running. Every other call the host sent it has
 * not started and never will (an unfit worker starts nothing), so the host sends them to another worker.
 */
export interface UnfitCalls {
  readonly call?: number;
  readonly unstarted?: number[];
  readonly running: number[];
}

export class WorkerCalls {
  readonly #inFlight = new Map<number, RunningCall>();
  /** Calls that have ended and wait for the health check's verdict before they answer: started, all the same. */
  readonly #judging = new Set<number>();
  /** Calls of a batch not started yet, by id; the value says whether a cancellation came for it first (and if it timed out). */
  readonly #queued = new Map<number, { timedOut: boolean } | undefined>();

  constructor(
    private readonly executor: AgentToolExecutor,
    /** Sends a call's message (a string, see protocol.ts). */
    private readonly send: (message: string) => void,
    /** Sends a result with content blocks, as an object. */
    private readonly sendObject: (message: WorkerMessage) => void,
    /** Checks around each call that the worker is still fit to answer (see worker-health.ts). */
    private readonly health: WorkerHealth,
    /** The worker is unfit: tells the host, which replaces it. */
    private readonly onUnfit: (unfit: Unfit, calls: UnfitCalls) => void,
  ) {}

  /** The calls started here and not answered yet: any other the host sent, this worker never starts. */
  running(): number[] {
    return [...this.#inFlight.keys(), ...this.#judging];
  }

  /**
   * Runs the calls of a batch (several sent in one message), each in its own turn of the event loop, as if
   * each had come in a message of its own: a call starts only once everything the one before it queued
   * has run and its answer has gone, so a call that then loops forever cannot hold back the answers of
   * the calls before it. A cancellation that arrives for a call still waiting its turn is kept for it.
   * (A call after which the worker looked over its memory limit answers once collections have decided,
   * a few turns later: by then the next call may have started.)
   */
  runBatch(batch: readonly unknown[]): void {
    const wires = batch.filter((item): item is string => typeof item === 'string');
    for (const wire of wires.slice(1)) this.#queued.set(callId(wire), undefined);
    let next = 0;
    const step = (): void => {
      const wire = wires[next++];
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      if (wire === undefined) return;
      this.run(wire);
      if (next < wires.length) setImmediate(step);
    };
    step();
  }

  /** Runs the call a host message asks for. */
  run(wire: string): void {
    const { id, flags, name, context, args } = decodeCall(wire);
    // A worker whose built-ins a package changed runs nothing more: the host sends the call elsewhere.
    const unfit = this.health.beforeCall();
    if (unfit !== undefined) return this.onUnfit(unfit, { unstarted: [id], running: this.running() });
    const cancelledFirst = this.#queued.get(id);
    this.#queued.delete(id);
    // The signal is made only if the call is still running after its synchronous start, or is cancelled.
    const call: RunningCall = { controller: undefined };
    if (cancelledFirst !== undefined) {
      call.controller = new AbortController();
      call.controller.abort(abortReason(cancelledFirst.timedOut));
    }
    this.#inFlight.set(id, call);
    const progress =
      flags & WANTS_PROGRESS
        ? progressGate((report) => this.send(encodeCallMessage('P', id, JSON.stringify(report))))
        : undefined;
    const logs =
      flags & WANTS_LOG
        ? logGate((entry) => this.send(encodeCallMessage('L', id, JSON.stringify(entry))), { perSecond: 50, burst: 64 })
        : undefined;
    const callContext: AgentToolExecutionContext =
      progress === undefined && logs === undefined
        ? context
        : {
            ...context,
            ...(progress ? { reportProgress: progress.report } : {}),
            ...(logs ? { log: logs.log } : {}),
          };
    void this.executor
      .execute(name, args, callContext, {
        // A call cancelled before its turn is never started: the executor answers it cancelled.
        signal: call.controller?.signal ?? (() => (call.controller ??= new AbortController()).signal),
      })
      .then((result) => {
        this.#inFlight.delete(id);
        progress?.end();
        logs?.end();
        // Checked before the result is sent: a call that broke the worker gets no answer from it. Decided at
        // once, unless the worker looks over its memory limit (then collections decide, a moment later;
        // meanwhile the call counts as running, so that no other report of this worker's lets the host
        // send it elsewhere to run again).
        this.#judging.add(id);
        this.health.afterCall((unfit) => {
          this.#judging.delete(id);
          if (unfit !== undefined) return this.onUnfit(unfit, { call: id, running: this.running() });
          if (result.successful && result.content !== undefined) {
            // Content blocks cross as they are (plain data the executor built); the host checks them again.
            this.sendObject({
              type: 'result',
              id,
              result: { successful: true, result: result.result, errors: [], content: result.content },
            });
          } else if (result.successful) {
            this.send(encodeCallMessage('R', id, result.result));
          } else {
            const { kind, payload } = encodeFailure(result);
            this.send(encodeCallMessage(kind, id, payload));
          }
        });
      });
  }

  /** The host cancelled the call, or its time-out passed. */
  cancel(id: number, timedOut: boolean): void {
    const call = this.#inFlight.get(id);
    if (call === undefined) {
      if (this.#queued.has(id)) this.#queued.set(id, { timedOut });
      return;
    }
    call.controller ??= new AbortController();
    call.controller.abort(abortReason(timedOut));
  }
}

/** A call message's id (the host wrote it: `C<id>\0…`). */
function callId(wire: string): number {
  return Number(wire.slice(1, wire.indexOf('\0')));
}

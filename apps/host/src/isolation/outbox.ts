/**
 * Batches the string messages of calls (see protocol.ts) between the host and a worker: those queued in
 * one turn of the event loop cross as one message, an array of strings in order. A thread hand-off costs
 * far more than the message in it (the receiving thread is woken, its event loop turns, a message
 * event is dispatched), so calls that start together, or answers ready together, share one. (The worker
 * still starts each call of a batch in its own turn: see WorkerCalls.runBatch.)
 *
 * One message alone still goes as a plain string. An object message (a cancellation, a ping, a result
 * with content blocks) first sends what is queued, so the other side sees everything in the order it
 * was sent: a call is never cancelled before it arrived, and nothing of a call follows its result.
 */
/** Taken when this module loads, before an isolated package does: a package that replaces it cannot stall the channel. */
const schedule = queueMicrotask;

export class Outbox {
  #queued: string[] = [];
  #scheduled = false;

  constructor(private readonly postMessage: (message: unknown) => void) {}

  /** Queues a call's message; it is sent at the end of this turn of the event loop, with the others queued in it. */
  string(message: string): void {
    // Not push: in a worker, a package may have replaced Array.prototype.push (the worker then reports it and is replaced).
    this.#queued[this.#queued.length] = message;
    if (this.#scheduled) return;
    this.#scheduled = true;
    schedule(this.#flush);
  }

  /** Sends what is queued, then `message`. */
  object(message: unknown): void {
    this.flush();
    this.postMessage(message);
  }

  /** Sends what is queued now. */
  flush(): void {
    const queued = this.#queued;
    if (queued.length === 0) return;
    this.#queued = [];
    this.postMessage(queued.length === 1 ? queued[0] : queued);
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    this.flush();
  };
}

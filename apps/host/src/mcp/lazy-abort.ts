import type { ServerResponse } from 'node:http';

/**
 * A request's cancellation, made only when something asks for its signal: an AbortSignal costs about
 * 3 µs to make on Node 20 (more than a small tool call), and a call that answers at once never looks
 * at it (the invoke route does the same). It aborts when the client goes away before the answer (if
 * a response is given) or when `abort` is called (`notifications/cancelled`), whichever comes first,
 * whether or not the signal was made yet.
 */
export class LazyAbort {
  readonly #response: ServerResponse | undefined;
  #controller: AbortController | undefined;
  #aborted = false;

  constructor(response?: ServerResponse) {
    this.#response = response;
  }

  get signal(): AbortSignal {
    if (this.#controller !== undefined) return this.#controller.signal;
    const controller = (this.#controller = new AbortController());
    const response = this.#response;
    // Already gone (the client hung up while the session was read, say): aborted before the call starts.
    if (this.#aborted || (response !== undefined && response.destroyed && !response.writableFinished))
      controller.abort();
    else response?.once('close', () => !response.writableFinished && controller.abort());
    return controller.signal;
  }

  abort(): void {
    this.#aborted = true;
    this.#controller?.abort();
  }
}

/**
 * The in-flight calls (their LazyAbort or AbortController) a 2025 client cancelled with
 * `notifications/cancelled`: such a request gets no response, as the specification says. A call the
 * host stopped as it shuts down is not in it, and still answers with what its tool reported.
 */
export const cancelledByClient = new WeakSet<object>();

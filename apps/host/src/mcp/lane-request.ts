import type { ServerContext } from '@modelcontextprotocol/server';

/** A notification a call sends on its request's stream (progress, log messages, list changes). */
export type Notification = Parameters<ServerContext['mcpReq']['notify']>[0];

/**
 * What a call uses of the SDK's request context (`ctx.mcpReq`). The lane takes no request with
 * requestState or input responses, and none from a client that could be asked a question, so `send`
 * is never reached. The signal is made only when read (see lazy-abort.ts).
 *
 * A class, not an object literal with a getter: V8 makes such a literal a dictionary-mode object with
 * an accessor pair of its own, and with one per request, finished requests (their response, request
 * and the call's frames) survived young-generation collections until the next full one (measured, the
 * path V8 keeps them by was not pinned down): about 2 MB promoted to the old generation per scavenge
 * under the bench's load, and over 20 µs of CPU per call (bench section 3, MCP rows).
 */
export class LaneRequest {
  readonly id: string | number;
  readonly method: 'tools/call' | 'tools/list';
  readonly envelope: Record<string, unknown> | undefined;
  readonly notify: (notification: Notification) => Promise<void>;
  readonly #cancel: { readonly signal: AbortSignal };

  constructor(message: { readonly id: string | number; readonly method: 'tools/call' | 'tools/list'; readonly envelope?: Record<string, unknown> }, cancel: { readonly signal: AbortSignal }, notify: (notification: Notification) => Promise<void>) {
    this.id = message.id;
    this.method = message.method;
    this.envelope = message.envelope;
    this.notify = notify;
    this.#cancel = cancel;
  }

  get signal(): AbortSignal {
    return this.#cancel.signal;
  }

  requestState(): undefined {
    return undefined;
  }

  send(): Promise<never> {
    return Promise.reject(new Error('The MCP fast lane cannot send a request to the client.'));
  }
}

import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { ServerContext } from '@modelcontextprotocol/server';
import type { ResumableAnswer } from './lane-answer.js';

/** A notification a call sends on its request's stream (progress, log messages, list changes). */
export type Notification = Parameters<ServerContext['mcpReq']['notify']>[0];

/** Where a fast-lane call's notifications and answer go. */
export interface LaneOutput {
  /** Response headers known once the answer is ready (the agent session the call ended in). */
  headers(): Record<string, string>;
  /** The same with the event-stream headers (SSE_HEADERS of sse-events.ts), for an answer sent as SSE. */
  sseHeaders(): Readonly<Record<string, string>>;
}

const frame = (json: string) => `event: message\ndata: ${json}\n\n`;

/**
 * What a call uses of the SDK's request context (`ctx.mcpReq`), and the response it answers on. The
 * lane takes no request with requestState or input responses, and none from a client that could be
 * asked a question, so `send` is never reached. The signal is made only when read (see lazy-abort.ts).
 *
 * Notifications before the answer open an SSE stream (a resumable stream keeps what its client missed,
 * for a resume); after it they are dropped, as the SDK's transports do.
 *
 * A class with methods, not an object literal with a getter or closures: V8 makes such a literal a
 * dictionary-mode object with an accessor pair of its own, and with one per request, finished requests
 * (their response, request and the call's frames) survived young-generation collections until the next
 * full one (measured, the path V8 keeps them by was not pinned down): about 2 MB promoted to the old
 * generation per scavenge under the bench's load, and over 20 µs of CPU per call (bench section 3, MCP
 * rows). One object per call, as few as possible: what a call allocates is what the collector costs.
 */
export class LaneRequest {
  readonly id: string | number;
  readonly method: 'tools/call' | 'tools/list';
  readonly envelope: Record<string, unknown> | undefined;
  readonly #cancel: { readonly signal: AbortSignal };
  readonly #reply: FastifyReply;
  readonly #output: LaneOutput;
  /** SSE (a 2025 session) or JSON (2026-07-28, until a notification opens a stream). */
  readonly #sse: boolean;
  readonly #resumable: ResumableAnswer | undefined;
  #stream: PassThrough | undefined;
  #answered = false;

  constructor(
    message: {
      readonly era: 'legacy' | 'modern';
      readonly id: string | number;
      readonly method: 'tools/call' | 'tools/list';
      readonly envelope?: Record<string, unknown>;
    },
    cancel: { readonly signal: AbortSignal },
    reply: FastifyReply,
    output: LaneOutput,
    resumable: ResumableAnswer | undefined,
  ) {
    this.id = message.id;
    this.method = message.method;
    this.envelope = message.envelope;
    this.#cancel = cancel;
    this.#reply = reply;
    this.#output = output;
    this.#sse = message.era === 'legacy';
    this.#resumable = resumable;
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

  async notify(notification: Notification): Promise<void> {
    if (this.#answered) return;
    const json = JSON.stringify({ jsonrpc: '2.0', ...notification });
    if (this.#resumable) return this.#resumable.event(json);
    const reply = this.#reply;
    if (reply.raw.destroyed) return;
    if (this.#stream === undefined) {
      this.#stream = new PassThrough();
      void reply.code(200).headers(this.#output.sseHeaders()).send(this.#stream);
    }
    this.#stream.write(frame(json));
  }

  /**
   * Sends the answer (one serialized JSON-RPC message): the stream's last event, or the whole response,
   * with `status` when it is a JSON body (the SDK's 400 for a 2026-07-28 -32021 error).
   */
  answer(json: string, status = 200): void {
    this.#answered = true;
    if (this.#resumable) this.#resumable.end(json);
    else if (this.#stream !== undefined) this.#stream.end(frame(json));
    else if (!this.#reply.raw.destroyed) sendAnswer(this.#reply, this.#sse, json, this.#output, status);
  }

  /** Ends a 2025 request without its answer: the client cancelled it, and the specification says a cancelled request gets no response. */
  drop(): void {
    this.#answered = true;
    if (this.#resumable) this.#resumable.drop();
    else if (this.#stream !== undefined) this.#stream.end();
    else if (!this.#reply.raw.destroyed) void this.#reply.code(200).headers(this.#output.sseHeaders()).send('');
  }
}

/** A whole answer: one SSE event (a 2025 session) or a JSON body. */
export function sendAnswer(reply: FastifyReply, sse: boolean, json: string, output: LaneOutput, status = 200): void {
  if (sse) void reply.code(200).headers(output.sseHeaders()).send(frame(json));
  else
    void reply
      .code(status)
      .headers({ 'content-type': 'application/json', ...output.headers() })
      .send(json);
}

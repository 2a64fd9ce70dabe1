import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { frame, type Listener } from './sse-events.js';
import type { Stream, StreamTable } from './stream-table.js';

/**
 * A fast-lane answer recorded as a resumable stream (see {@link LaneAnswer}): each message is framed
 * once, as it is made, never parsed back.
 */
export interface ResumableAnswer {
  /** One serialized JSON-RPC message (a notification) as the stream's next event. */
  event(json: string): void;
  /** The request's answer: the stream's last event. */
  end(json: string): void;
  /** No answer: the client cancelled the request (`notifications/cancelled`), which the specification says not to answer. The stream ends. */
  drop(): void;
}

/** Where an answer's response headers come from: the SSE ones and the agent session's (http-scopes.ts). */
export interface AnswerHeaders {
  sseHeaders(): Readonly<Record<string, string>>;
}

/** held: events wait for the first bytes; open: they go to the connection; gone: the client left before any byte (it holds no id); sent: the whole answer went out as one body. */
type State = 'held' | 'open' | 'gone' | 'sent';

/**
 * A resumable answer the fast lane writes itself (the SDK path's answers are recorded by
 * ResumableStreams.record). Events are held until the call's synchronous part is over (the next
 * `setImmediate`, one per loop turn for every answer held: see ResumableStreams.answer): an answer
 * ready by then goes out as one body, the priming event first, and nothing is kept (its client read
 * it, or never received an id to resume from). A call still running then opens the stream (priming
 * event and the events so far), and the stream lives on as one from the SDK path: the connection
 * dropping detaches the client only, `holdMs` closes it, `GET` with `Last-Event-ID` resumes it.
 *
 * The answer is its own stream record, and a class: one object per call, no closures (see the
 * comment on LaneRequest for what per-request closures cost the collector).
 */
export class LaneAnswer implements Stream, ResumableAnswer {
  readonly id: string;
  readonly sessionId: string;
  readonly frames: string[] = [];
  bytes = 0;
  overflowed = false;
  ended = false;
  listener: Listener | undefined = undefined;
  expiry: NodeJS.Timeout | undefined = undefined;
  readonly #table: StreamTable;
  readonly #reply: FastifyReply;
  readonly #headers: AnswerHeaders;
  #state: State = 'held';

  constructor(table: StreamTable, sessionId: string, reply: FastifyReply, headers: AnswerHeaders) {
    this.id = table.newId();
    this.sessionId = sessionId;
    this.#table = table;
    this.#reply = reply;
    this.#headers = headers;
  }

  /** Whether its events still wait for the end of the loop turn. */
  get held(): boolean {
    return this.#state === 'held';
  }

  event(json: string): void {
    const text = this.#frame(json);
    // Held events past the replay bound would be dropped from the one body: the stream opens first, and they go out live.
    if (this.#state === 'held' && this.bytes + text.length > this.#table.options.maxStreamBytes) this.open();
    this.#table.emit(this, text);
  }

  end(json: string): void {
    const state = this.#state;
    if (state === 'held' && this.frames.length === 0) {
      // The common answer: ready within the turn, with no event before it. One body whatever its size
      // (nothing is kept, so the replay bound does not apply), its two events in one template.
      this.#state = 'sent';
      this.ended = true;
      const reply = this.#reply;
      if (reply.raw.destroyed) return;
      const id = this.id;
      const body = json.includes('\n')
        ? this.#table.priming(this) + this.#frame(json)
        : `id: ${id}.0${this.#table.primingTail}id: ${id}.1\nevent: message\ndata: ${json}\n\n`;
      void reply.code(200).headers(this.#headers.sseHeaders()).send(body);
      return;
    }
    const text = this.#frame(json);
    if (state === 'held' && this.bytes + text.length <= this.#table.options.maxStreamBytes) {
      // Ready within the turn after events of its own: one body, and nothing is kept.
      this.#state = 'sent';
      this.ended = true;
      const reply = this.#reply;
      if (!reply.raw.destroyed)
        void reply
          .code(200)
          .headers(this.#headers.sseHeaders())
          .send(this.#table.priming(this) + this.frames.join('') + text);
      return;
    }
    if (state === 'held') this.open();
    this.#table.emit(this, text);
    if (this.#state === 'open') this.#table.finish(this);
    else this.ended = true;
  }

  drop(): void {
    if (this.#state === 'held') {
      // Nothing went out yet: the events so far (if any, with the ids to resume from) and no answer.
      this.#state = 'sent';
      this.ended = true;
      const reply = this.#reply;
      if (!reply.raw.destroyed)
        void reply
          .code(200)
          .headers(this.#headers.sseHeaders())
          .send(this.frames.length === 0 ? '' : this.#table.priming(this) + this.frames.join(''));
      return;
    }
    if (this.#state === 'open') this.#table.finish(this);
    else this.ended = true;
  }

  /** The call runs on past the turn (or its events outgrew the bound): its stream opens, and is kept for a resume. */
  open(): void {
    if (this.#state !== 'held') return;
    const reply = this.#reply;
    const raw = reply.raw;
    if (raw.destroyed) {
      this.#state = 'gone';
      return;
    }
    this.#state = 'open';
    const table = this.#table;
    const body = new PassThrough();
    const listener: Listener = {
      write: (text) => void (body.writableEnded || body.write(text)),
      close: () => void body.end(),
    };
    table.streams.set(this.id, this);
    this.listener = listener;
    body.write(table.priming(this) + this.frames.join(''));
    raw.once('close', () => !raw.writableFinished && this.listener === listener && table.detach(this));
    table.hold(this);
    void reply.code(200).headers(this.#headers.sseHeaders()).send(body);
  }

  #frame(json: string): string {
    const id = `${this.id}.${this.frames.length + 1}`;
    // Serialized JSON holds no line break (JSON.stringify escapes them): one data line.
    return json.includes('\n') ? frame(id, 'message', json) : `id: ${id}\nevent: message\ndata: ${json}\n\n`;
  }
}

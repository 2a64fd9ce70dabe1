import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { answers, encoder, errorAnswer, frame, SSE_HEADERS, webListener, type Listener } from './sse-events.js';

/**
 * Resumable response streams for 2025-11-25 sessions (SEP-1699): a request answered as
 * `text/event-stream` starts with a priming event (an id, a `retry` field, no data), and every event
 * after it carries an id. When the connection drops, or the host closes it because the call runs longer
 * than `holdMs` (so that proxies with idle limits never cut it), the call goes on; the client reconnects
 * with `GET` and `Last-Event-ID` and receives what it missed, then the rest. A dropped connection is not
 * a cancellation: `notifications/cancelled` is.
 *
 * A stream read to its end is forgotten at once; one whose client had gone lives on the host that runs
 * the call for `keepMs` after it ends: resuming on another host, or after a restart, is answered 404
 * with what happened and how to route a session to one host.
 */
export interface ResumableStreamsOptions {
  /** The `retry` the priming event asks clients to wait before reconnecting, in ms. */
  readonly retryMs: number;
  /** Close a client's connection after this long while the call still runs (0: never); the client resumes. */
  readonly holdMs: number;
  /** How long an ended stream can still be resumed. */
  readonly keepMs: number;
  /** Streams held at once on this host; past it, new responses are served without resumption. */
  readonly maxStreams: number;
  /** The most event bytes one stream holds for replay; past it, the stream can no longer be resumed. */
  readonly maxStreamBytes: number;
}

export const DEFAULT_RESUMABLE_STREAMS: ResumableStreamsOptions = { retryMs: 1000, holdMs: 0, keepMs: 5 * 60_000, maxStreams: 1000, maxStreamBytes: 8 * 1024 * 1024 };

interface Stream {
  readonly id: string;
  readonly sessionId: string;
  /** Every event after the priming one, in order: its frame as sent. */
  readonly frames: string[];
  bytes: number;
  /** Set when the frames no longer fit maxStreamBytes: a resume could miss events, so it is refused. */
  overflowed: boolean;
  ended: boolean;
  /** The connection events go to now, if any. */
  listener: Listener | undefined;
  expiry: NodeJS.Timeout | undefined;
}

/** Event ids are `<stream id>.<sequence>`; the priming event is sequence 0. */
const EVENT_ID = /^([0-9a-f]{32})\.(\d{1,9})$/;

/**
 * A fast-lane answer recorded as a resumable stream (see {@link ResumableStreams.answer}): each message
 * is framed once, as it is made, never parsed back.
 */
export interface ResumableAnswer {
  /** One serialized JSON-RPC message (a notification) as the stream's next event. */
  event(json: string): void;
  /** The request's answer: the stream's last event. */
  end(json: string): void;
}

export class ResumableStreams {
  readonly #options: ResumableStreamsOptions;
  readonly #streams = new Map<string, Stream>();
  /**
   * Stream ids: a random prefix for this host, then a counter (cheaper than 16 random bytes a stream).
   * Guessing one gains nothing: a stream is only resumed on the MCP session it belongs to.
   */
  readonly #idPrefix = randomBytes(8).toString('hex');
  #idCounter = 0;

  constructor(options: Partial<ResumableStreamsOptions> = {}) {
    this.#options = { ...DEFAULT_RESUMABLE_STREAMS, ...options };
  }

  get size(): number {
    return this.#streams.size;
  }

  /**
   * Whether the answer to this request can be made resumable: a request (it has an id) from a client
   * of 2025-11-25 or later (earlier clients cannot take a priming event's empty data) that accepts
   * an event stream, with room on this host.
   */
  accepts(request: Request, hasId: boolean): boolean {
    return this.acceptsHeaders(request.headers.get('mcp-protocol-version'), request.headers.get('accept'), hasId);
  }

  /** {@link accepts}, from the request's `MCP-Protocol-Version` and `Accept` headers. */
  acceptsHeaders(protocolVersion: string | null | undefined, accept: string | null | undefined, hasId: boolean): boolean {
    return hasId && (protocolVersion ?? '') >= '2025-11-25' && (accept ?? '').includes('text/event-stream') && this.#room();
  }

  #newStream(sessionId: string): Stream {
    const id = this.#idPrefix + (this.#idCounter++).toString(16).padStart(16, '0');
    return { id, sessionId, frames: [], bytes: 0, overflowed: false, ended: false, listener: undefined, expiry: undefined };
  }

  #priming(stream: Stream, position = 0): string {
    return `id: ${stream.id}.${position}\nretry: ${this.#options.retryMs}\ndata: \n\n`;
  }

  /**
   * A resumable answer the fast lane writes itself (the SDK path's answers go through {@link record}).
   * Events are held until the call's synchronous part is over (the next `setImmediate`): an answer
   * ready by then goes out as one body, the priming event first, and nothing is kept (its client read
   * it, or never received an id to resume from). A call still running then opens the stream (priming
   * event and the events so far), and the stream lives on as one from the SDK path: the connection
   * dropping detaches the client only, `holdMs` closes it, `GET` with `Last-Event-ID` resumes it.
   * Call only after {@link acceptsHeaders} said yes. `headers` gives the response's whole headers, the SSE ones included.
   */
  answer(sessionId: string, reply: FastifyReply, headers: () => Readonly<Record<string, string>>): ResumableAnswer {
    const stream = this.#newStream(sessionId);
    // held: events wait for the first bytes; open: they go to the connection; gone: the client left before any byte (it holds no id).
    let state: 'held' | 'open' | 'gone' = 'held';
    const openStream = () => {
      clearImmediate(timer);
      if (reply.raw.destroyed) {
        state = 'gone';
        return;
      }
      state = 'open';
      const body = new PassThrough();
      const listener: Listener = { write: (text) => void (body.writableEnded || body.write(text)), close: () => void body.end() };
      this.#streams.set(stream.id, stream);
      stream.listener = listener;
      body.write(this.#priming(stream) + stream.frames.join(''));
      const raw = reply.raw;
      raw.once('close', () => !raw.writableFinished && stream.listener === listener && this.#detach(stream));
      this.#hold(stream);
      void reply.code(200).headers(headers()).send(body);
    };
    const timer = setImmediate(openStream);
    const emit = (json: string) => {
      const id = `${stream.id}.${stream.frames.length + 1}`;
      // Serialized JSON holds no line break (JSON.stringify escapes them): one data line.
      const text = json.includes('\n') ? frame(id, 'message', json) : `id: ${id}\nevent: message\ndata: ${json}\n\n`;
      // Held events past the replay bound would be dropped from the one body: the stream opens first, and they go out live.
      if (state === 'held' && stream.bytes + text.length > this.#options.maxStreamBytes) openStream();
      this.#emit(stream, text);
    };
    return {
      event: emit,
      end: (json) => {
        emit(json);
        if (state === 'open') return this.#finish(stream);
        clearImmediate(timer);
        stream.ended = true;
        if (state === 'held' && !reply.raw.destroyed) void reply.code(200).headers(headers()).send(this.#priming(stream) + stream.frames.join(''));
      },
    };
  }

  /**
   * Makes `response` resumable when it is an event stream: a priming event first, ids on every event,
   * and the events kept so that a later `resume` can replay them. The SDK's body is read to its end
   * whatever the client does: `clientGone` (the connection closed) only detaches the client.
   */
  record(sessionId: string, response: Response, clientGone: AbortSignal, requestId: string | number | null = null): Response {
    if (response.body === null || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return response;
    const stream = this.#newStream(sessionId);
    this.#streams.set(stream.id, stream);
    const headers = new Headers(response.headers);
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        stream.listener = webListener(controller);
        controller.enqueue(encoder.encode(this.#priming(stream)));
      },
      cancel: () => this.#detach(stream),
    });
    const listener = stream.listener;
    clientGone.addEventListener('abort', () => stream.listener === listener && this.#detach(stream), { once: true });
    this.#hold(stream);
    void this.#drain(stream, response.body, requestId);
    return new Response(body, { status: response.status, headers });
  }

  /**
   * `GET` with `Last-Event-ID` on session `sessionId`: the events after that id, then the rest live,
   * or an answer that says why not. A stream of another session is as unknown as one never opened.
   */
  resume(sessionId: string, lastEventId: string): Response {
    const match = EVENT_ID.exec(lastEventId.trim());
    const stream = match ? this.#streams.get(match[1]!) : undefined;
    if (stream === undefined || stream.sessionId !== sessionId) {
      return errorAnswer({
        status: 404,
        code: -32001,
        message: `No stream with event ${JSON.stringify(lastEventId.slice(0, 80))} is held on this host for this MCP session: it ended more than ${Math.round(this.#options.keepMs / 1000)} s ago, the host restarted, or the call runs on another host. Send every request of an MCP session to one host (affinity on Mcp-Session-Id) to resume streams; to learn a call's outcome, read the agent session.`,
      });
    }
    if (stream.overflowed) return errorAnswer({ status: 410, code: -32000, message: `Stream ${stream.id} sent more than ${this.#options.maxStreamBytes} bytes, so this host no longer holds all of it and cannot resume it without gaps. The call was not cancelled; read the agent session for its outcome.` });
    // A client that reconnects may beat the host to noticing its old connection dropped: the newer
    // reader takes over (only this session's client holds the stream's id), and the older is closed.
    if (stream.listener !== undefined) this.#detach(stream, true);
    const after = Number(match![2]);
    if (after > stream.frames.length) return errorAnswer({ status: 400, code: -32000, message: `Event ${lastEventId} was never sent on stream ${stream.id}. Send the id of the last event you received.` });
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        // A priming event again, so that a client whose resumed connection closes before any new event
        // still holds an id to resume from.
        controller.enqueue(encoder.encode(this.#priming(stream, after)));
        for (const sent of stream.frames.slice(after)) controller.enqueue(encoder.encode(sent));
        if (stream.ended) controller.close();
        else stream.listener = webListener(controller);
      },
      cancel: () => this.#detach(stream),
    });
    if (!stream.ended) this.#hold(stream);
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  }

  /** Forgets every stream (the host is stopping). */
  clear(): void {
    for (const stream of this.#streams.values()) {
      clearTimeout(stream.expiry);
      this.#detach(stream, true);
    }
    this.#streams.clear();
  }

  async #drain(stream: Stream, source: ReadableStream<Uint8Array>, requestId: string | number | null): Promise<void> {
    // Comments (the SDK's keep-alives) go to the connection, if any, and are not kept.
    const onComment = (comment: string) => this.#send(stream, `:${comment}\n\n`);
    const reader = source.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream({ onComment })).getReader();
    let answered = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        answered ||= answers(value.data, requestId);
        this.#emit(stream, frame(`${stream.id}.${stream.frames.length + 1}`, value.event ?? 'message', value.data));
      }
    } catch {
      // The SDK's stream failed: what was sent stays resumable, and the answer below says what is known.
    } finally {
      // A stream that ends without the request's answer would have its client resume it forever: it
      // gets an answer that says the outcome is unknown, never one that claims the call did or did not run.
      if (!answered && requestId !== null) {
        const lost = { jsonrpc: '2.0', id: requestId, error: { code: -32603, message: 'The host lost the answer to this request before it was sent, so whether the call ran, and what it did, is unknown. Read the agent session (GET /v1/sessions/:id) before calling again.' } };
        this.#emit(stream, frame(`${stream.id}.${stream.frames.length + 1}`, 'message', JSON.stringify(lost)));
      }
      this.#finish(stream);
    }
  }

  /**
   * The stream's last event was sent. A client still reading got everything: nothing is kept for it
   * (most answers end so). Only a stream whose client had gone stays resumable, for keepMs.
   */
  #finish(stream: Stream): void {
    stream.ended = true;
    const delivered = stream.listener !== undefined;
    this.#detach(stream, true);
    if (delivered) this.#streams.delete(stream.id);
    else this.#keep(stream);
  }

  /** Keeps an ended stream its client may resume for keepMs. */
  #keep(stream: Stream): void {
    stream.expiry = setTimeout(() => this.#streams.delete(stream.id), this.#options.keepMs);
    stream.expiry.unref();
  }

  #emit(stream: Stream, sent: string): void {
    stream.bytes += sent.length;
    if (stream.bytes > this.#options.maxStreamBytes) stream.overflowed = true;
    else stream.frames.push(sent);
    this.#send(stream, sent);
  }

  #send(stream: Stream, text: string): void {
    try {
      stream.listener?.write(text);
    } catch {
      stream.listener = undefined;
    }
  }

  /** Lets the client go, closing its connection when `close`; the call and the recording go on. */
  #detach(stream: Stream, close = false): void {
    const listener = stream.listener;
    stream.listener = undefined;
    if (close && listener !== undefined) {
      try {
        listener.close();
      } catch {
        // already closed by the client
      }
    }
  }

  /** After holdMs, closes the connection reading the stream now, unless another has taken over since. */
  #hold(stream: Stream): void {
    if (this.#options.holdMs <= 0) return;
    const listener = stream.listener;
    setTimeout(() => {
      if (stream.listener === listener) this.#detach(stream, true);
    }, this.#options.holdMs).unref();
  }

  #room(): boolean {
    if (this.#streams.size < this.#options.maxStreams) return true;
    for (const [id, stream] of this.#streams) {
      if (stream.ended) {
        clearTimeout(stream.expiry);
        this.#streams.delete(id);
        return true;
      }
    }
    return false;
  }
}


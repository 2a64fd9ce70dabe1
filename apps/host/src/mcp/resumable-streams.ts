import { randomBytes } from 'node:crypto';
import { EventSourceParserStream } from 'eventsource-parser/stream';

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

type Answer = { readonly status: number; readonly code: number; readonly message: string };

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
  listener: ReadableStreamDefaultController<Uint8Array> | undefined;
  expiry: NodeJS.Timeout | undefined;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' };
const encoder = new TextEncoder();
/** Event ids are `<stream id>.<sequence>`; the priming event is sequence 0. */
const EVENT_ID = /^([0-9a-f]{32})\.(\d{1,9})$/;

function frame(id: string, event: string, data: string): string {
  return `id: ${id}\nevent: ${event}\n${data.split('\n').map((line) => `data: ${line}`).join('\n')}\n\n`;
}

export class ResumableStreams {
  readonly #options: ResumableStreamsOptions;
  readonly #streams = new Map<string, Stream>();

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
    const version = request.headers.get('mcp-protocol-version') ?? '';
    return hasId && version >= '2025-11-25' && (request.headers.get('accept') ?? '').includes('text/event-stream') && this.#room();
  }

  /**
   * Makes `response` resumable when it is an event stream: a priming event first, ids on every event,
   * and the events kept so that a later `resume` can replay them. The SDK's body is read to its end
   * whatever the client does: `clientGone` (the connection closed) only detaches the client.
   */
  record(sessionId: string, response: Response, clientGone: AbortSignal, requestId: string | number | null = null): Response {
    if (response.body === null || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return response;
    const stream: Stream = { id: randomBytes(16).toString('hex'), sessionId, frames: [], bytes: 0, overflowed: false, ended: false, listener: undefined, expiry: undefined };
    this.#streams.set(stream.id, stream);
    const headers = new Headers(response.headers);
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        stream.listener = controller;
        controller.enqueue(encoder.encode(`id: ${stream.id}.0\nretry: ${this.#options.retryMs}\ndata: \n\n`));
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
      return answer({
        status: 404,
        code: -32001,
        message: `No stream with event ${JSON.stringify(lastEventId.slice(0, 80))} is held on this host for this MCP session: it ended more than ${Math.round(this.#options.keepMs / 1000)} s ago, the host restarted, or the call runs on another host. Send every request of an MCP session to one host (affinity on Mcp-Session-Id) to resume streams; to learn a call's outcome, read the agent session.`,
      });
    }
    if (stream.overflowed) return answer({ status: 410, code: -32000, message: `Stream ${stream.id} sent more than ${this.#options.maxStreamBytes} bytes, so this host no longer holds all of it and cannot resume it without gaps. The call was not cancelled; read the agent session for its outcome.` });
    // A client that reconnects may beat the host to noticing its old connection dropped: the newer
    // reader takes over (only this session's client holds the stream's id), and the older is closed.
    if (stream.listener !== undefined) this.#detach(stream, true);
    const after = Number(match![2]);
    if (after > stream.frames.length) return answer({ status: 400, code: -32000, message: `Event ${lastEventId} was never sent on stream ${stream.id}. Send the id of the last event you received.` });
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        // A priming event again, so that a client whose resumed connection closes before any new event
        // still holds an id to resume from.
        controller.enqueue(encoder.encode(`id: ${stream.id}.${after}\nretry: ${this.#options.retryMs}\ndata: \n\n`));
        for (const sent of stream.frames.slice(after)) controller.enqueue(encoder.encode(sent));
        if (stream.ended) controller.close();
        else stream.listener = controller;
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
      stream.ended = true;
      // A client still reading at the end got everything: nothing is kept for it (most answers end so).
      // Only a stream whose client had gone stays resumable, for keepMs.
      const delivered = stream.listener !== undefined;
      this.#detach(stream, true);
      if (delivered) this.#streams.delete(stream.id);
      else {
        stream.expiry = setTimeout(() => this.#streams.delete(stream.id), this.#options.keepMs);
        stream.expiry.unref();
      }
    }
  }

  #emit(stream: Stream, sent: string): void {
    stream.bytes += sent.length;
    if (stream.bytes > this.#options.maxStreamBytes) stream.overflowed = true;
    else stream.frames.push(sent);
    this.#send(stream, sent);
  }

  #send(stream: Stream, text: string): void {
    try {
      stream.listener?.enqueue(encoder.encode(text));
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

/** Whether an event's data is the JSON-RPC response (result or error) to request `id`. */
function answers(data: string, id: string | number | null): boolean {
  if (id === null || data === '') return false;
  try {
    const message = JSON.parse(data) as { id?: unknown; result?: unknown; error?: unknown };
    return message.id === id && (message.result !== undefined || message.error !== undefined);
  } catch {
    return false;
  }
}

function answer({ status, code, message }: Answer): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), { status, headers: { 'content-type': 'application/json' } });
}

import { randomBytes } from 'node:crypto';
import type { Listener } from './sse-events.js';

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

/** 000 to fff: the low three hex digits of a stream id. */
const HEX3 = Array.from({ length: 4096 }, (_, value) => value.toString(16).padStart(3, '0'));

export const DEFAULT_RESUMABLE_STREAMS: ResumableStreamsOptions = {
  retryMs: 1000,
  holdMs: 0,
  keepMs: 5 * 60_000,
  maxStreams: 1000,
  maxStreamBytes: 8 * 1024 * 1024,
};

export interface Stream {
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

/**
 * The streams a host holds for resumption, and what happens to one as its events are sent: kept for
 * replay up to maxStreamBytes, sent to the connection reading it, let go when it ends or its client
 * goes. Shared by the SDK path's recorded streams and the fast lane's answers (resumable-streams.ts,
 * lane-answer.ts).
 */
export class StreamTable {
  readonly options: ResumableStreamsOptions;
  readonly streams = new Map<string, Stream>();
  /**
   * Stream ids: a random prefix for this host, then a counter (cheaper than 16 random bytes a stream).
   * Guessing one gains nothing: a stream is only resumed on the MCP session it belongs to.
   */
  readonly #idPrefix = randomBytes(8).toString('hex');
  #idCounter = 0;
  /** The id prefix and the counter's high digits, made once per 4096 ids: an id is then one concatenation. */
  #idBase = '';
  /** What follows a priming event's id, the same for every stream. */
  readonly primingTail: string;

  constructor(options: ResumableStreamsOptions) {
    this.options = options;
    this.primingTail = `\nretry: ${options.retryMs}\ndata: \n\n`;
  }

  /** `<16 hex digits of this host><16 hex digits of the counter>`: 32 lower-case hex digits, as EVENT_ID reads them. */
  newId(): string {
    const counter = this.#idCounter++;
    const low = counter % 4096;
    if (low === 0)
      this.#idBase =
        this.#idPrefix +
        Math.floor(counter / 4096)
          .toString(16)
          .padStart(13, '0');
    return this.#idBase + HEX3[low]!;
  }

  newStream(sessionId: string): Stream {
    return {
      id: this.newId(),
      sessionId,
      frames: [],
      bytes: 0,
      overflowed: false,
      ended: false,
      listener: undefined,
      expiry: undefined,
    };
  }

  priming(stream: Stream, position = 0): string {
    return `id: ${stream.id}.${position}${this.primingTail}`;
  }

  /** Keeps the event for replay (within maxStreamBytes) and sends it to the connection, if any. */
  emit(stream: Stream, sent: string): void {
    stream.bytes += sent.length;
    if (stream.bytes > this.options.maxStreamBytes) stream.overflowed = true;
    else stream.frames.push(sent);
    this.send(stream, sent);
  }

  send(stream: Stream, text: string): void {
    try {
      stream.listener?.write(text);
    } catch {
      stream.listener = undefined;
    }
  }

  /**
   * The stream's last event was sent. A client still reading got everything: nothing is kept for it
   * (most answers end so). Only a stream whose client had gone stays resumable, for keepMs.
   */
  finish(stream: Stream): void {
    stream.ended = true;
    const delivered = stream.listener !== undefined;
    this.detach(stream, true);
    if (delivered) this.streams.delete(stream.id);
    else this.#keep(stream);
  }

  /** Keeps an ended stream its client may resume for keepMs. */
  #keep(stream: Stream): void {
    stream.expiry = setTimeout(() => this.streams.delete(stream.id), this.options.keepMs);
    stream.expiry.unref();
  }

  /** Lets the client go, closing its connection when `close`; the call and the recording go on. */
  detach(stream: Stream, close = false): void {
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
  hold(stream: Stream): void {
    if (this.options.holdMs <= 0) return;
    const listener = stream.listener;
    setTimeout(() => {
      if (stream.listener === listener) this.detach(stream, true);
    }, this.options.holdMs).unref();
  }

  /** Whether another stream may be held, forgetting the oldest ended one to make room if needed. */
  room(): boolean {
    if (this.streams.size < this.options.maxStreams) return true;
    for (const [id, stream] of this.streams) {
      if (stream.ended) {
        clearTimeout(stream.expiry);
        this.streams.delete(id);
        return true;
      }
    }
    return false;
  }

  /** Forgets every stream (the host is stopping). */
  clear(): void {
    for (const stream of this.streams.values()) {
      clearTimeout(stream.expiry);
      this.detach(stream, true);
    }
    this.streams.clear();
  }
}

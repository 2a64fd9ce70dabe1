import type { FastifyReply } from 'fastify';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { answers, encoder, errorAnswer, frame, SSE_HEADERS, webListener } from './sse-events.js';
import { DEFAULT_RESUMABLE_STREAMS, StreamTable, type ResumableStreamsOptions, type Stream } from './stream-table.js';
import { LaneAnswer, type AnswerHeaders, type ResumableAnswer } from './lane-answer.js';

/** Event ids are `<stream id>.<sequence>`; the priming event is sequence 0. */
const EVENT_ID = /^([0-9a-f]{32})\.(\d{1,9})$/;

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
export class ResumableStreams {
  readonly #table: StreamTable;
  /** Fast-lane answers made this loop turn, and the one `setImmediate` that opens those still running at its end. */
  #held: LaneAnswer[] = [];
  #heldTimer: NodeJS.Immediate | undefined;
  readonly #openHeld = (): void => {
    const held = this.#held;
    this.#held = [];
    this.#heldTimer = undefined;
    // One answer failing to open must not leave the others of its turn unanswered; the failure still surfaces as before.
    let failed = false;
    let failure: unknown;
    for (const answer of held) {
      try {
        answer.open();
      } catch (error) {
        if (!failed) failure = error;
        failed = true;
      }
    }
    if (failed) throw failure;
  };

  constructor(options: Partial<ResumableStreamsOptions> = {}) {
    this.#table = new StreamTable({ ...DEFAULT_RESUMABLE_STREAMS, ...options });
  }

  get size(): number {
    return this.#table.streams.size;
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
  acceptsHeaders(
    protocolVersion: string | null | undefined,
    accept: string | null | undefined,
    hasId: boolean,
  ): boolean {
    return (
      hasId &&
      (protocolVersion ?? '') >= '2025-11-25' &&
      (accept ?? '').includes('text/event-stream') &&
      this.#table.room()
    );
  }

  /**
   * A resumable answer the fast lane writes itself (see lane-answer.ts). Call only after
   * {@link acceptsHeaders} said yes. `headers` gives the response's whole headers, the SSE ones included.
   * Every answer made in a loop turn waits for the same `setImmediate`: one per turn, not one made and
   * cleared per call (each of those starts and stops the loop's idle handle).
   */
  answer(sessionId: string, reply: FastifyReply, headers: AnswerHeaders): ResumableAnswer {
    const answer = new LaneAnswer(this.#table, sessionId, reply, headers);
    this.#held.push(answer);
    this.#heldTimer ??= setImmediate(this.#openHeld);
    return answer;
  }

  /**
   * Makes `response` resumable when it is an event stream: a priming event first, ids on every event,
   * and the events kept so that a later `resume` can replay them. The SDK's body is read to its end
   * whatever the client does: `clientGone` (the connection closed) only detaches the client.
   */
  record(
    sessionId: string,
    response: Response,
    clientGone: AbortSignal,
    requestId: string | number | null = null,
    cancelledByClient: () => boolean = () => false,
  ): Response {
    if (response.body === null || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
      return response;
    const stream = this.#table.newStream(sessionId);
    this.#table.streams.set(stream.id, stream);
    const headers = new Headers(response.headers);
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        stream.listener = webListener(controller);
        controller.enqueue(encoder.encode(this.#table.priming(stream)));
      },
      cancel: () => this.#table.detach(stream),
    });
    const listener = stream.listener;
    clientGone.addEventListener('abort', () => stream.listener === listener && this.#table.detach(stream), {
      once: true,
    });
    this.#table.hold(stream);
    void this.#drain(stream, response.body, requestId, cancelledByClient);
    return new Response(body, { status: response.status, headers });
  }

  /**
   * `GET` with `Last-Event-ID` on session `sessionId`: the events after that id, then the rest live,
   * or an answer that says why not. A stream of another session is as unknown as one never opened.
   */
  resume(sessionId: string, lastEventId: string): Response {
    const match = EVENT_ID.exec(lastEventId.trim());
    const stream = match ? this.#table.streams.get(match[1]!) : undefined;
    if (stream === undefined || stream.sessionId !== sessionId) {
      return errorAnswer({
        status: 404,
        code: -32001,
        message:
          `No stream with event ${JSON.stringify(lastEventId.slice(0, 80))} is held on this host for ` +
          `this MCP session: it ended more than ${Math.round(this.#table.options.keepMs / 1000)} s ` +
          `ago, the host restarted, or the call runs on another host. Send every request of an MCP ` +
          `session to one host (affinity on Mcp-Session-Id) to resume streams; to learn a call's ` +
          `outcome, read the agent session.`,
      });
    }
    if (stream.overflowed)
      return errorAnswer({
        status: 410,
        code: -32000,
        message:
          `Stream ${stream.id} sent more than ${this.#table.options.maxStreamBytes} bytes, so this ` +
          `host no longer holds all of it and cannot resume it without gaps. The call was not ` +
          `cancelled; read the agent session for its outcome.`,
      });
    // A client that reconnects may beat the host to noticing its old connection dropped: the newer
    // reader takes over (only this session's client holds the stream's id), and the older is closed.
    if (stream.listener !== undefined) this.#table.detach(stream, true);
    const after = Number(match![2]);
    if (after > stream.frames.length)
      return errorAnswer({
        status: 400,
        code: -32000,
        message: `Event ${lastEventId} was never sent on stream ${stream.id}. Send the id of the last event you received.`,
      });
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        // A priming event again, so that a client whose resumed connection closes before any new event
        // still holds an id to resume from.
        controller.enqueue(encoder.encode(this.#table.priming(stream, after)));
        for (const sent of stream.frames.slice(after)) controller.enqueue(encoder.encode(sent));
        if (stream.ended) controller.close();
        else stream.listener = webListener(controller);
      },
      cancel: () => this.#table.detach(stream),
    });
    if (!stream.ended) this.#table.hold(stream);
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  }

  /** Forgets every stream (the host is stopping). */
  clear(): void {
    this.#table.clear();
  }

  async #drain(
    stream: Stream,
    source: ReadableStream<Uint8Array>,
    requestId: string | number | null,
    cancelledByClient: () => boolean,
  ): Promise<void> {
    // Comments (the SDK's keep-alives) go to the connection, if any, and are not kept.
    const onComment = (comment: string) => this.#table.send(stream, `:${comment}\n\n`);
    const reader = source
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream({ onComment }))
      .getReader();
    let answered = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const answer = answers(value.data, requestId);
        // A request its client cancelled gets no response (notifications/cancelled): its answer is not sent.
        if (answer && cancelledByClient()) continue;
        answered ||= answer;
        this.#table.emit(
          stream,
          frame(`${stream.id}.${stream.frames.length + 1}`, value.event ?? 'message', value.data),
        );
      }
    } catch {
      // The SDK's stream failed: what was sent stays resumable, and the answer below says what is known.
    } finally {
      // A stream that ends without the request's answer would have its client resume it forever: it
      // gets an answer that says the outcome is unknown, never one that claims the call did or did not run.
      // A request its client cancelled gets none: the client stopped waiting, and the specification says not to answer it.
      if (!answered && requestId !== null && !cancelledByClient()) {
        const lost = {
          jsonrpc: '2.0',
          id: requestId,
          error: {
            code: -32603,
            message:
              'The host lost the answer to this request before it was sent, so whether the call ran, and what it did, is unknown. Read the agent session (GET /v1/sessions/:id) before calling again.',
          },
        };
        this.#table.emit(stream, frame(`${stream.id}.${stream.frames.length + 1}`, 'message', JSON.stringify(lost)));
      }
      this.#table.finish(stream);
    }
  }
}

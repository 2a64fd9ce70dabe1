/**
 * `POST /v1/tools/:name/invoke` for a client that asks for `text/event-stream`: the tool's progress
 * reports and log entries as server-sent events while it runs, then one `result` event whose data is the
 * body the JSON reply would carry. The JSON route (tool-routes.ts) hands such requests over here, so its
 * own path stays as it is. Everything else about a call holds as on the JSON path: the API key and the
 * rate limit (route hooks, before this runs), the tool's time-out and the result-size bound (the
 * executor), and a client that hangs up cancels the call.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { logGate, progressGate, reportsCancellation, type ToolProgress } from '@aptix/tool-contract';
import type { AptixHost, CallOptions } from '../aptix-host.js';
import { pendingApprovalView } from '../approvals/present.js';
import { invokeEnvelope } from './invoke-envelope.js';

/** True when the Accept header names `text/event-stream` (without `q=0`). */
export function wantsEventStream(accept: string | undefined): boolean {
  if (accept === undefined || !accept.includes('text/event-stream')) return false;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';');
    if (type!.trim().toLowerCase() !== 'text/event-stream') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

export interface InvokeStreamInput {
  readonly name: string;
  readonly args: unknown;
  readonly sessionId: string | undefined;
  readonly conversationId: string | undefined;
}

/** The event format, for the OpenAPI description of the route. */
export const INVOKE_EVENT_STREAM_DESCRIPTION =
  'Server-sent events. `event: progress` with data `{"progress":n,"total"?:n,"message"?:s}` (progress grows; bounded in rate, the newest kept); ' +
  '`event: log` with data `{"level","message","data"?}` for entries the tool addresses to the caller (info and above); ' +
  'then exactly one `event: result` whose data is the body the JSON reply would carry (`{"successful","result","errors","content"?}`), and the stream ends. ' +
  'A data text may span several `data:` lines (join them with a line break). A call refused before the tool runs (404, 403, 202) answers as plain JSON with that status, as without this header.';

/** How long a finished stream waits for a client that stopped reading, before its connection is cut. */
export const STALLED_READER_MS = 30_000;

/** One event; a data text with line breaks (JSON whitespace) goes as several `data:` lines, which the client joins. */
export function sseFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data.replace(/\r\n|\r|\n/g, '\ndata: ')}\n\n`;
}

/**
 * The response as a stream, opened on its first event, so a call refused before any tool runs keeps the
 * plain HTTP answer (404, 403, 202) it has on the JSON path. Progress never queues behind a client that
 * reads slowly: while the socket's buffer is full, only the newest report waits.
 */
class EventStream {
  #open = false;
  #progressWaiting: ToolProgress | undefined;
  #drainArmed = false;

  constructor(
    private readonly reply: FastifyReply,
    private readonly requestId: string,
  ) {}

  get opened(): boolean {
    return this.#open;
  }

  get #writable(): boolean {
    const raw = this.reply.raw;
    return !raw.destroyed && !raw.writableEnded;
  }

  #ensureOpen(): void {
    if (this.#open) return;
    this.#open = true;
    this.reply.hijack();
    this.reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      'x-request-id': this.requestId,
    });
  }

  progress(progress: ToolProgress): void {
    if (!this.#writable) return;
    this.#ensureOpen();
    const raw = this.reply.raw;
    if (raw.writableNeedDrain) {
      this.#progressWaiting = progress;
      if (!this.#drainArmed) {
        this.#drainArmed = true;
        raw.once('drain', () => {
          this.#drainArmed = false;
          const next = this.#progressWaiting;
          this.#progressWaiting = undefined;
          if (next !== undefined) this.progress(next);
        });
      }
      return;
    }
    raw.write(sseFrame('progress', JSON.stringify(progress)));
  }

  /** A log entry; dropped (not queued) while the client is not reading. */
  log(text: string): void {
    if (!this.#writable) return;
    this.#ensureOpen();
    if (this.reply.raw.writableNeedDrain) return;
    this.reply.raw.write(sseFrame('log', text));
  }

  /** The last event, then the end of the response; a client that stops reading is cut off after {@link STALLED_READER_MS}. */
  finish(event: string, data: string): void {
    if (!this.#writable) return;
    this.#ensureOpen();
    this.#progressWaiting = undefined;
    const raw = this.reply.raw;
    const flushed = raw.write(sseFrame(event, data));
    raw.end();
    if (!flushed) {
      const timer = setTimeout(() => raw.destroy(), STALLED_READER_MS);
      timer.unref();
      raw.once('close', () => clearTimeout(timer));
    }
  }
}

/** Runs the call and answers as a stream; never rejects past what the JSON path would (a store failure goes to the error handler). */
export async function invokeAsEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  host: AptixHost,
  input: InvokeStreamInput,
): Promise<unknown> {
  const stream = new EventStream(reply, request.id);
  // A client that hangs up before the answer cancels the call, as on the JSON path.
  const abort = new AbortController();
  let answered = false;
  reply.raw.once('close', () => {
    if (!answered) abort.abort();
  });
  // A client already gone (its close came before this handler listened) cancels the call before it starts.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- kept for callers in plain JavaScript and tool packages, which can pass what the type rules out
  if (request.raw.socket?.destroyed === true) abort.abort();
  const progress = progressGate((report) => stream.progress(report));
  const logs = logGate((entry) => stream.log(JSON.stringify(entry)), {
    minLevel: 'info',
  });
  const options: CallOptions = {
    ...(input.sessionId === undefined ? {} : { sessionId: input.sessionId }),
    ...(input.conversationId === undefined ? {} : { conversationId: input.conversationId }),
    ...(request.actor === undefined ? {} : { actor: request.actor }),
    logger: request.log,
    signal: abort.signal,
    onProgress: progress.report,
    onLog: logs.log,
  };
  let outcome: Awaited<ReturnType<AptixHost['call']>>;
  try {
    outcome = await host.call(input.name, input.args, options);
  } catch (error) {
    answered = true;
    progress.end();
    logs.end();
    if (!stream.opened) throw error;
    request.log.error({ err: error }, 'a streamed tool call failed in the host');
    stream.finish(
      'error',
      JSON.stringify({
        error: {
          code: 'INTERNAL',
          message: 'The host failed to finish the call; see its logs.',
        },
      }),
    );
    return reply;
  }
  // The last progress report still waiting goes out before the result; none after it.
  progress.end();
  logs.end();
  answered = true;
  if (abort.signal.aborted) {
    // Nobody is left to read it; the operator's log says how the call ended.
    const how =
      outcome.kind !== 'result'
        ? outcome.kind
        : !outcome.result.successful
          ? (outcome.result.errors[0]?.code ?? 'failed')
          : reportsCancellation(outcome.result.result)
            ? 'cancelled'
            : 'succeeded';
    request.log.info({ tool: input.name, outcome: how }, 'the client hung up before a streamed call answered');
    if (stream.opened) return reply;
  }
  if (outcome.kind !== 'result') {
    // Refusals come before a tool runs, so before any event: they keep their plain HTTP answers.
    if (outcome.kind === 'not_found')
      return reply.code(404).send({ error: { code: 'TOOL_NOT_FOUND', message: outcome.message } });
    if (outcome.kind === 'refused')
      return reply
        .code(outcome.code === 'SESSION_NOT_FOUND' ? 404 : 403)
        .send({ error: { code: outcome.code, message: outcome.message } });
    return reply.code(202).send(pendingApprovalView(outcome.approval));
  }
  // A client gone before any event gets the plain answer Fastify sends to a closed socket, which ends the request as the JSON path does.
  if (!stream.opened && abort.signal.aborted)
    return reply
      .code(200)
      .type('application/json; charset=utf-8')
      .serializer((payload) => payload as string)
      .send(invokeEnvelope(outcome.result));
  stream.finish('result', invokeEnvelope(outcome.result));
  return reply;
}

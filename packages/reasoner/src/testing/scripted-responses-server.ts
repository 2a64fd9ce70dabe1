import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A function call the scripted model makes. */
export interface ScriptedCall {
  readonly name: string;
  /** An object is sent as its JSON text; a string is sent as it is (to script malformed arguments). */
  readonly arguments: object | string;
  readonly callId: string;
}

/** What the scripted model does for one request, in order. */
export type ScriptStep =
  /** A response: optional text first, then the calls. */
  | { readonly kind: 'respond'; readonly text?: string; readonly calls?: readonly ScriptedCall[] }
  /** An HTTP error with an OpenAI-style error body. */
  | { readonly kind: 'http_error'; readonly status: number; readonly message: string }
  /** A stream that ends with `response.failed` (streaming requests only). */
  | { readonly kind: 'response_failed'; readonly message: string }
  /** Never answers; the request stays open until the client goes away. */
  | { readonly kind: 'hang' };

/** One request the SDK sent, as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The parsed JSON body: exactly what the SDK sent. */
  readonly body: RequestBody;
  /** Resolves when the client closed the connection before the server finished answering (an abort). */
  readonly abandoned: Promise<void>;
}

/** The fields of a Responses request the tests read. */
export interface RequestBody {
  readonly model: string;
  readonly instructions: string;
  readonly input: Array<Record<string, unknown>>;
  readonly tools: Array<{
    type: string;
    name: string;
    description: string;
    parameters: Record<string, unknown>;
    strict: boolean;
  }>;
  readonly store?: boolean;
  readonly stream?: boolean;
  readonly [key: string]: unknown;
}

export const respond = (text?: string, ...calls: ScriptedCall[]): ScriptStep => ({
  kind: 'respond',
  ...(text === undefined ? {} : { text }),
  calls,
});
export const call = (callId: string, name: string, args: object | string): ScriptedCall => ({
  callId,
  name,
  arguments: args,
});

/**
 * An OpenAI-compatible Responses endpoint on loopback that answers from a script: real HTTP, so the
 * real `openai` SDK talks to it. It records every request body, and streams with the event sequence
 * the Responses API uses (`response.created`, `response.output_item.added`, `response.output_text.delta`,
 * …, `response.completed`), or answers with a plain JSON response when the request does not stream.
 */
export class ScriptedResponsesServer {
  readonly requests: RecordedRequest[] = [];
  /**
   * Called for each request once its body is read, before it is answered. A promise it returns is
   * awaited first, so a test can change the world while the model call is in flight.
   */
  onRequest: ((request: RecordedRequest) => void | Promise<void>) | undefined;
  readonly #script: ScriptStep[] = [];
  readonly #server: Server;
  #port = 0;
  #responses = 0;

  private constructor() {
    this.#server = createServer((req, res) => void this.#handle(req, res));
  }

  static async start(): Promise<ScriptedResponsesServer> {
    const server = new ScriptedResponsesServer();
    await new Promise<void>((resolve) => server.#server.listen(0, '127.0.0.1', resolve));
    server.#port = (server.#server.address() as AddressInfo).port;
    return server;
  }

  /** The base URL to give the SDK. */
  get baseURL(): string {
    return `http://127.0.0.1:${this.#port}/v1`;
  }

  /** Appends steps to the script. */
  script(...steps: ScriptStep[]): void {
    this.#script.push(...steps);
  }

  /** Steps not consumed yet. */
  get remaining(): number {
    return this.#script.length;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RequestBody;
    let markAbandoned!: () => void;
    const abandoned = new Promise<void>((resolve) => (markAbandoned = resolve));
    res.on('close', () => {
      if (!res.writableFinished) markAbandoned();
    });
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      abandoned,
    };
    this.requests.push(recorded);
    await this.onRequest?.(recorded);

    if (req.method !== 'POST' || req.url !== '/v1/responses') {
      return sendJson(res, 404, {
        error: {
          message: `The scripted server serves POST /v1/responses only, not ${req.method} ${req.url}.`,
          type: 'invalid_request_error',
        },
      });
    }
    const step = this.#script.shift();
    if (step === undefined) {
      return sendJson(res, 500, {
        error: { message: `The script has no step for request ${this.requests.length}.`, type: 'server_error' },
      });
    }
    switch (step.kind) {
      case 'hang':
        return;
      case 'http_error':
        return sendJson(res, step.status, {
          error: { message: step.message, type: 'invalid_request_error', param: null, code: null },
        });
      case 'response_failed': {
        const response = this.#response(body, [], 'failed', { code: 'server_error', message: step.message });
        return this.#stream(res, [
          { type: 'response.created', response: { ...response, status: 'in_progress', error: null } },
          { type: 'response.failed', response },
        ]);
      }
      case 'respond': {
        const output = this.#output(step);
        const response = this.#response(body, output, 'completed', null);
        if (body.stream === true) return this.#stream(res, streamEvents(response, output));
        return sendJson(res, 200, response);
      }
    }
  }

  #output(step: Extract<ScriptStep, { kind: 'respond' }>): Array<Record<string, unknown>> {
    const n = ++this.#responses;
    const output: Array<Record<string, unknown>> = [];
    if (step.text !== undefined) {
      output.push({
        id: `msg_${n}`,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: step.text, annotations: [], logprobs: [] }],
      });
    }
    for (const scripted of step.calls ?? []) {
      output.push({
        id: `fc_${n}_${scripted.callId}`,
        type: 'function_call',
        call_id: scripted.callId,
        name: scripted.name,
        arguments: typeof scripted.arguments === 'string' ? scripted.arguments : JSON.stringify(scripted.arguments),
        status: 'completed',
      });
    }
    return output;
  }

  #response(
    body: RequestBody,
    output: Array<Record<string, unknown>>,
    status: string,
    error: { code: string; message: string } | null,
  ): Record<string, unknown> {
    return {
      id: `resp_${this.requests.length}`,
      object: 'response',
      created_at: 1_700_000_000 + this.requests.length,
      status,
      error,
      incomplete_details: null,
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      instructions: body.instructions ?? null,
      metadata: {},
      model: body.model,
      output,
      parallel_tool_calls: true,
      temperature: 1,
      tool_choice: 'auto',
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      tools: body.tools ?? [],
      top_p: 1,
      store: body.store ?? true,
      text: { format: { type: 'text' } },
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 15,
      },
    };
  }

  #stream(res: ServerResponse, events: Array<Record<string, unknown>>): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    events.forEach((event, index) =>
      res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`),
    );
    res.end();
  }
}

/** The Responses API's streaming sequence for a finished response. */
function streamEvents(
  response: Record<string, unknown>,
  output: Array<Record<string, unknown>>,
): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [
    { type: 'response.created', response: { ...response, status: 'in_progress', output: [], usage: null } },
    { type: 'response.in_progress', response: { ...response, status: 'in_progress', output: [], usage: null } },
  ];
  output.forEach((item, outputIndex) => {
    const itemId = item.id;
    if (item.type === 'message') {
      const text = ((item.content as Array<{ text: string }>)[0] ?? { text: '' }).text;
      const emptyPart = { type: 'output_text', text: '', annotations: [], logprobs: [] };
      events.push({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', content: [] },
      });
      events.push({
        type: 'response.content_part.added',
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        part: emptyPart,
      });
      for (const delta of splitText(text)) {
        events.push({
          type: 'response.output_text.delta',
          item_id: itemId,
          output_index: outputIndex,
          content_index: 0,
          delta,
          logprobs: [],
        });
      }
      events.push({
        type: 'response.output_text.done',
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        text,
        logprobs: [],
      });
      events.push({
        type: 'response.content_part.done',
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        part: { ...emptyPart, text },
      });
      events.push({ type: 'response.output_item.done', output_index: outputIndex, item });
    } else {
      const args = String(item.arguments);
      const half = Math.ceil(args.length / 2);
      events.push({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...item, arguments: '', status: 'in_progress' },
      });
      for (const delta of [args.slice(0, half), args.slice(half)].filter((part) => part !== '')) {
        events.push({
          type: 'response.function_call_arguments.delta',
          item_id: itemId,
          output_index: outputIndex,
          delta,
        });
      }
      events.push({
        type: 'response.function_call_arguments.done',
        item_id: itemId,
        output_index: outputIndex,
        name: item.name,
        arguments: args,
      });
      events.push({ type: 'response.output_item.done', output_index: outputIndex, item });
    }
  });
  events.push({ type: 'response.completed', response });
  return events;
}

/** Splits text into word-sized deltas, keeping the spaces, so the pieces join back to the text. */
function splitText(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

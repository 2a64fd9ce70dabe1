import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server answered: which API, the tools it was offered, and the tool output it read back (if any). */
export interface ModelCall {
  readonly api: 'responses' | 'chat.completions';
  readonly model: string;
  readonly tools: string[];
  /** The system prompt / instructions the client sent. */
  readonly system: string;
  readonly toolOutput?: string;
  readonly answer: string;
}

/** A model server on loopback that speaks OpenAI's Responses and Chat Completions APIs (non-streaming). */
export interface OpenAiCompatibleServer {
  /** The base URL a client takes as OPENAI_BASE_URL / baseURL: `http://127.0.0.1:<port>/v1`. */
  readonly baseURL: string;
  readonly calls: readonly ModelCall[];
  close(): Promise<void>;
}

const TOOL = 'testing_calculator';
const ARGUMENTS = JSON.stringify({ operation: 'multiply', a: 6, b: 7 });

/**
 * What a model would do with "What is 6 times 7?": call the calculator when there is no tool output yet,
 * then answer from the output it reads back. The answer quotes the tool's `expression`, so it holds the
 * tool's real result only if the client ran the tool and sent its output.
 */
function decide({ tools, toolOutput }: Read): Decision {
  if (toolOutput === undefined) {
    if (!tools.includes(TOOL))
      throw new BadRequest(`The request offers no ${TOOL} tool (offered: ${tools.join(', ')})`);
    return { call: true };
  }
  let expression: unknown;
  try {
    expression = (JSON.parse(toolOutput) as { expression?: unknown }).expression;
  } catch {
    // not JSON: quote it as it came
  }
  return { call: false, text: `The calculator says ${typeof expression === 'string' ? expression : toolOutput}.` };
}

class BadRequest extends Error {}

/** The text of a tool output item's content: a string, or an array of text parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) => (typeof part === 'object' && part && 'text' in part ? String(part.text) : ''))
      .join('');
  return JSON.stringify(content);
}

type Body = Record<string, unknown>;

/** What one API's request says: the tools offered, the system prompt, the last tool output. */
interface Read {
  readonly tools: string[];
  readonly system: string;
  readonly toolOutput: string | undefined;
}

type Decision = { call: true } | { call: false; text: string };

/** One API: how to read its request, and how to write its answer. */
interface Api {
  read(body: Body): Read;
  write(decision: Decision, model: string): Body;
}

const systemText = (items: Body[]): string[] =>
  items.filter((item) => item.role === 'system' || item.role === 'developer').map((item) => textOf(item.content));

const responsesApi: Api = {
  read(body) {
    const input = Array.isArray(body.input) ? (body.input as Body[]) : [];
    const output = input.filter((item) => item.type === 'function_call_output').at(-1);
    return {
      tools: ((body.tools as Array<{ name?: string }> | undefined) ?? []).map((tool) => String(tool.name)),
      system: [typeof body.instructions === 'string' ? body.instructions : '', ...systemText(input)].join('\n'),
      toolOutput: output === undefined ? undefined : textOf(output.output),
    };
  },
  write(decision, model) {
    const id = `resp_${Date.now()}`;
    const item = decision.call
      ? { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name: TOOL, arguments: ARGUMENTS }
      : {
          type: 'message',
          id: `msg_${id}`,
          role: 'assistant',
          content: [{ type: 'output_text', text: decision.text, annotations: [] }],
        };
    return {
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      model,
      output: [{ ...item, status: 'completed' }],
      incomplete_details: null,
      error: null,
      parallel_tool_calls: true,
      tools: [],
      usage: {
        input_tokens: 1,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 1,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 2,
      },
    };
  },
};

const chatCompletionsApi: Api = {
  read(body) {
    const messages = Array.isArray(body.messages) ? (body.messages as Body[]) : [];
    const last = messages.at(-1);
    const tools = (body.tools as Array<{ function?: { name?: string } }> | undefined) ?? [];
    return {
      tools: tools.map((tool) => String(tool.function?.name)),
      system: systemText(messages).join('\n'),
      toolOutput: last?.role === 'tool' ? textOf(last.content) : undefined,
    };
  },
  write(decision, model) {
    const id = `chatcmpl_${Date.now()}`;
    const message = decision.call
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `call_${id}`, type: 'function', function: { name: TOOL, arguments: ARGUMENTS } }],
        }
      : { role: 'assistant', content: decision.text };
    return {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message, finish_reason: decision.call ? 'tool_calls' : 'stop', logprobs: null }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
  },
};

const ROUTES: Record<string, { name: ModelCall['api']; api: Api }> = {
  '/v1/responses': { name: 'responses', api: responsesApi },
  '/v1/chat/completions': { name: 'chat.completions', api: chatCompletionsApi },
};

async function readBody(request: IncomingMessage): Promise<Body> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return JSON.parse(text) as Body;
}

function send(response: ServerResponse, status: number, body: Body): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Starts the server on a free loopback port. */
export async function startOpenAiCompatibleServer(): Promise<OpenAiCompatibleServer> {
  const calls: ModelCall[] = [];
  const server: Server = createServer((request, response) => {
    const route = ROUTES[(request.url ?? '').split('?')[0]!];
    if (request.method !== 'POST' || route === undefined) {
      send(response, 404, { error: { message: `No route ${request.method} ${request.url}`, type: 'not_found' } });
      return;
    }
    readBody(request)
      .then((body) => {
        if (body.stream === true) throw new BadRequest('This test server does not stream: call without stream');
        const read = route.api.read(body);
        const decision = decide(read);
        const model = String(body.model);
        const { toolOutput, ...rest } = read;
        calls.push({
          api: route.name,
          model,
          ...rest,
          ...(toolOutput === undefined ? {} : { toolOutput }),
          answer: decision.call ? `call ${TOOL}` : decision.text,
        });
        send(response, 200, route.api.write(decision, model));
      })
      .catch((error: unknown) =>
        send(response, 400, { error: { message: (error as Error).message, type: 'invalid_request_error' } }),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

import {
  setTracingDisabled,
  Usage,
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
} from '@openai/agents';

setTracingDisabled(true);

export type Turn = (request: ModelRequest) => AgentOutputItem[];

/** A model written against the Agents SDK's public `Model` interface: it plays `turns` in order and records what each turn was offered. */
export class ScriptedModel implements Model {
  readonly offered: string[][] = [];
  readonly requests: ModelRequest[] = [];
  constructor(private readonly turns: Turn[]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    request.signal?.throwIfAborted(); // as a real provider's fetch would
    this.requests.push(request);
    this.offered.push(request.tools.map((tool) => tool.name));
    const turn = this.turns[this.requests.length - 1];
    if (turn === undefined) throw new Error(`the script has no turn ${this.requests.length}`);
    return { usage: new Usage(), output: turn(request) };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<StreamEvent> {
    throw new Error('this test model does not stream');
  }
}

export const call = (name: string, args: unknown, callId = `call-${name}`): AgentOutputItem => ({
  type: 'function_call',
  callId,
  name,
  arguments: JSON.stringify(args),
  status: 'completed',
});
export const say = (text: string): AgentOutputItem => ({
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text }],
});

/** What the model read back for its last tool call, from the input of the turn after it. */
export function lastToolOutput(request: ModelRequest): string {
  const items = request.input as Array<{ type: string; output?: unknown }>;
  const result = items.filter((item) => item.type === 'function_call_result').at(-1);
  if (result === undefined) throw new Error('no tool result in the input');
  const output = result.output as string | { type: string; text: string };
  return typeof output === 'string' ? output : output.text;
}

// The OpenAI Agents SDK with a model of your own: the SDK has no public mock, so this one implements its
// `Model` interface. The Aptix sample tools as function tools, no API key, no network.
// Run it: npx tsx docs/examples/openai-agents-mock.ts
import { createAgentsTools } from '@aptix/openai-agents';
import * as samples from '@aptix/tool-samples';
import {
  Agent,
  run,
  setTracingDisabled,
  Usage,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents';

setTracingDisabled(true); // the SDK sends traces of every run to OpenAI unless told not to

/** Calls the calculator, then answers with what the tool returned. */
class CalculatorModel implements Model {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = typeof request.input === 'string' ? [] : request.input;
    const result = input.findLast((item) => item.type === 'function_call_result');
    if (result === undefined)
      return {
        usage: new Usage(),
        output: [
          {
            type: 'function_call',
            callId: 'call-1',
            name: 'testing_calculator',
            arguments: JSON.stringify({ operation: 'multiply', a: 6, b: 7 }),
            status: 'completed',
          },
        ],
      };
    const text = typeof result.output === 'string' ? result.output : 'text' in result.output ? result.output.text : '';
    const { expression } = JSON.parse(text) as { expression: string };
    return {
      usage: new Usage(),
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: `The calculator says ${expression}.` }],
        },
      ],
    };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('This model does not stream: run without { stream: true }.');
  }
}

const aptix = await createAgentsTools({ tools: [samples], timeoutMs: 30_000 });
const agent = new Agent({
  name: 'Assistant',
  instructions: async () => `You are a helpful assistant.\n\n${await aptix.guidance()}`,
  tools: aptix.tools,
  model: new CalculatorModel(),
});
const result = await run(agent, 'What is 6 times 7?');
for (const item of result.newItems)
  if (item.type === 'tool_call_output_item' && item.rawItem.type === 'function_call_result')
    console.log(
      `tool ${item.rawItem.name}: ${typeof item.output === 'string' ? item.output : JSON.stringify(item.output)}`,
    );
console.log(`answer: ${String(result.finalOutput)}`);

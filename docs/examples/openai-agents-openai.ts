// The OpenAI Agents SDK with its own OpenAI provider: set OPENAI_API_KEY (and OPENAI_BASE_URL for any
// server that speaks the Responses API; OPENAI_MODEL to choose the model).
// Run it: npx tsx docs/examples/openai-agents-openai.ts
import { createAgentsTools } from '@aptix/openai-agents';
import * as samples from '@aptix/tool-samples';
import { Agent, run, setTracingDisabled } from '@openai/agents';

setTracingDisabled(true); // the SDK sends traces of every run to OpenAI unless told not to: delete to send them

const aptix = await createAgentsTools({ tools: [samples], timeoutMs: 30_000 });
const agent = new Agent({
  name: 'Assistant',
  instructions: async () => `You are a helpful assistant.\n\n${await aptix.guidance()}`,
  tools: aptix.tools,
  model: process.env.OPENAI_MODEL ?? 'gpt-5-mini', // the Responses API
});
const result = await run(agent, 'What is 6 times 7? Use the calculator.');
for (const item of result.newItems)
  if (item.type === 'tool_call_output_item' && item.rawItem.type === 'function_call_result')
    console.log(
      `tool ${item.rawItem.name}: ${typeof item.output === 'string' ? item.output : JSON.stringify(item.output)}`,
    );
console.log(`answer: ${String(result.finalOutput)}`);

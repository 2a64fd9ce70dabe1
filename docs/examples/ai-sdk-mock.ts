// The AI SDK with its own mock model: the Aptix sample tools as an AI SDK ToolSet, no API key, no network.
// Run it: npx tsx docs/examples/ai-sdk-mock.ts
import { createAiSdkTools } from '@aptix/ai-sdk';
import * as samples from '@aptix/tool-samples';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

// The mock plays a model: it first calls the calculator, then answers with what the tool returned.
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    const last = prompt.at(-1)!;
    if (last.role !== 'tool') {
      const input = JSON.stringify({ operation: 'multiply', a: 6, b: 7 });
      return {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'testing_calculator', input }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    }
    const result = last.content.find((part) => part.type === 'tool-result')!;
    if (result.output.type !== 'json') throw new Error(`The tool answered ${result.output.type}, not JSON`);
    const { expression } = result.output.value as { expression: string };
    return {
      content: [{ type: 'text', text: `The calculator says ${expression}.` }],
      finishReason: { unified: 'stop', raw: undefined },
      usage,
      warnings: [],
    };
  },
});

const aptix = await createAiSdkTools({ tools: [samples] });
const { text, steps } = await generateText({
  model,
  system: `You are a helpful assistant.\n\n${await aptix.guidance()}`,
  tools: aptix.tools,
  stopWhen: stepCountIs(5),
  prompt: 'What is 6 times 7?',
});
for (const { toolName, output } of steps.flatMap((step) => step.toolResults))
  console.log(`tool ${toolName}: ${JSON.stringify(output)}`);
console.log(`answer: ${text}`);

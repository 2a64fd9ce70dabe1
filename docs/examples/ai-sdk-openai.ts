// The AI SDK with a real model from @ai-sdk/openai: set OPENAI_API_KEY (and OPENAI_BASE_URL for any
// OpenAI-compatible server; OPENAI_MODEL to choose the model).
// Run it: npx tsx docs/examples/ai-sdk-openai.ts
import { createAiSdkTools } from '@aptix/ai-sdk';
import * as samples from '@aptix/tool-samples';
import { openai } from '@ai-sdk/openai';
import { generateText, stepCountIs } from 'ai';

const aptix = await createAiSdkTools({ tools: [samples] });
const { text, steps } = await generateText({
  model: openai(process.env.OPENAI_MODEL ?? 'gpt-5-mini'), // the Responses API
  system: `You are a helpful assistant.\n\n${await aptix.guidance()}`,
  tools: aptix.tools,
  stopWhen: stepCountIs(5),
  prompt: 'What is 6 times 7? Use the calculator.',
});
for (const { toolName, output } of steps.flatMap((step) => step.toolResults))
  console.log(`tool ${toolName}: ${JSON.stringify(output)}`);
console.log(`answer: ${text}`);

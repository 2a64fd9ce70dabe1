// LangChain with a real model from @langchain/openai: set OPENAI_API_KEY (and OPENAI_BASE_URL for any
// OpenAI-compatible server; OPENAI_MODEL to choose the model).
// Run it: npx tsx docs/examples/langchain-openai.ts
import { createLangChainTools } from '@aptix/langchain';
import * as samples from '@aptix/tool-samples';
import { ToolMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, createMiddleware } from 'langchain';

const aptix = await createLangChainTools({ tools: [samples] });
const agent = createAgent({
  model: new ChatOpenAI({ model: process.env.OPENAI_MODEL ?? 'gpt-5-mini' }), // Chat Completions
  tools: aptix.tools,
  systemPrompt: `You are a helpful assistant.\n\n${await aptix.guidance()}`,
  middleware: [createMiddleware({ name: 'AptixModes', wrapModelCall: aptix.wrapModelCall })],
});
const { messages } = await agent.invoke({
  messages: [{ role: 'user', content: 'What is 6 times 7? Use the calculator.' }],
});
for (const message of messages.filter(ToolMessage.isInstance)) console.log(`tool ${message.name}: ${message.content}`);
console.log(`answer: ${String(messages.at(-1)!.content)}`);

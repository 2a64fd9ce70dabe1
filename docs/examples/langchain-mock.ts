// LangChain with its own mock model: the Aptix sample tools as LangChain StructuredTools, no API key, no network.
// Run it: npx tsx docs/examples/langchain-mock.ts
import { createLangChainTools } from '@aptix/langchain';
import * as samples from '@aptix/tool-samples';
import { ToolMessage } from '@langchain/core/messages';
import { createAgent, FakeToolCallingModel } from 'langchain';

// The mock's first answer calls the calculator; its second calls nothing and, as this mock does, echoes
// the conversation it read, which ends with the tool's output.
const model = new FakeToolCallingModel({
  toolCalls: [[{ name: 'testing_calculator', args: { operation: 'multiply', a: 6, b: 7 }, id: 'call-1' }], []],
});

const aptix = await createLangChainTools({ tools: [samples] });
const agent = createAgent({ model, tools: aptix.tools });
const { messages } = await agent.invoke({ messages: [{ role: 'user', content: 'What is 6 times 7?' }] });
for (const message of messages.filter(ToolMessage.isInstance)) console.log(`tool ${message.name}: ${message.content}`);
console.log(`answer: ${String(messages.at(-1)!.content)}`);

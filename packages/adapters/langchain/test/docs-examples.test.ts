import { fileURLToPath } from 'node:url';
import { importDocsExample } from '@aptix/adapter-core/testing';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { BaseMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { call, lastToolMessage, say, scriptedModel } from './scripted-model.js';

const GUIDE = fileURLToPath(new URL('../../../../docs/frameworks.md', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));

describe('docs/frameworks.md, the LangChain example, run as written', () => {
  it('langchain: the model calls the calculator and answers from its result', async () => {
    const { ask } = await importDocsExample<{ ask: (model: BaseChatModel, question: string) => Promise<string> }>(
      GUIDE,
      'langchain',
      HERE,
    );
    let system = '';
    const { model } = scriptedModel([
      (messages: BaseMessage[]) => {
        system = messages[0]!.text;
        return call('testing_calculator', { operation: 'multiply', a: 6, b: 7 })();
      },
      (messages) => say((JSON.parse(lastToolMessage(messages).content as string) as { expression: string }).expression),
    ]);
    expect(await ask(model, 'What is 6 times 7?')).toBe('6 * 7 = 42');
    expect(system).toContain('<tool_guidance name="testing_calculator">');
  });
});

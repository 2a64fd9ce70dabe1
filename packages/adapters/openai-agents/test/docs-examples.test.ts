import { fileURLToPath } from 'node:url';
import { importDocsExample } from '@aptix/adapter-core/testing';
import type { Model } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { call, lastToolOutput, say, ScriptedModel } from './scripted-model.js';

const GUIDE = fileURLToPath(new URL('../../../../docs/frameworks.md', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));

describe('docs/frameworks.md, the Agents SDK example, run as written', () => {
  it('openai-agents: the model calls the calculator and answers from its result', async () => {
    const { ask } = await importDocsExample<{ ask: (model: Model, question: string) => Promise<string> }>(
      GUIDE,
      'openai-agents',
      HERE,
    );
    const model = new ScriptedModel([
      () => [call('testing_calculator', { operation: 'multiply', a: 6, b: 7 })],
      (request) => [say((JSON.parse(lastToolOutput(request)) as { expression: string }).expression)],
    ]);
    expect(await ask(model, 'What is 6 times 7?')).toBe('6 * 7 = 42');
    expect(model.requests[0]!.systemInstructions).toContain('<tool_guidance name="testing_calculator">');
  });
});

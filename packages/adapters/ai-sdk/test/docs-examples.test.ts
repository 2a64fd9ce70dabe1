import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importDocsExample } from '@aptix/adapter-core/testing';
import type { LanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { call, lastToolOutput, scriptedModel, text } from './scripted-model.js';

const GUIDE = fileURLToPath(new URL('../../../../docs/frameworks.md', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));

describe('docs/frameworks.md, the AI SDK examples, run as written', () => {
  it('ai-sdk: the model calls the calculator and answers from its result', async () => {
    const { ask } = await importDocsExample<{ ask: (model: LanguageModel, question: string) => Promise<string> }>(
      GUIDE,
      'ai-sdk',
      HERE,
    );
    let system = '';
    const { model } = scriptedModel([
      (options) => {
        system = JSON.stringify(options.prompt[0]);
        return [call('testing_calculator', { operation: 'multiply', a: 6, b: 7 })];
      },
      (options) => [text((lastToolOutput(options).value as { expression: string }).expression)],
    ]);
    expect(await ask(model, 'What is 6 times 7?')).toBe('6 * 7 = 42');
    expect(system).toContain('<tool_guidance name=\\"testing_calculator\\">');
  });

  it("ai-sdk-modes: after agent_change_mode, the next step is offered the new mode's tools and guidance", async () => {
    const { chatInSession } = await importDocsExample<{
      chatInSession: (
        model: LanguageModel,
        dbFile: string,
        question: string,
      ) => Promise<{ text: string; mode: string }>;
    }>(GUIDE, 'ai-sdk-modes', HERE);
    const dir = mkdtempSync(join(tmpdir(), 'aptix-docs-'));
    try {
      const systems: string[] = [];
      const { model, offered } = scriptedModel([
        (options) => {
          systems.push(JSON.stringify(options.prompt[0]));
          return [
            call('agent_change_mode', {
              mode: 'tool_diagnostics',
              branch: false,
              reason: 'The user wants to test the tools.',
            }),
          ];
        },
        (options) => {
          systems.push(JSON.stringify(options.prompt[0]));
          return [call('testing_ping_pong', { message: 'hi', count: null })];
        },
        (options) => [text((lastToolOutput(options).value as { reply: string }).reply)],
      ]);
      expect(await chatInSession(model, join(dir, 'aptix.db'), 'Switch to diagnostics and ping.')).toEqual({
        text: 'pong: hi',
        mode: 'tool_diagnostics',
      });
      expect(offered[0]).not.toContain('testing_ping_pong');
      expect(offered[1]).toContain('testing_ping_pong');
      expect(systems[0]).not.toContain('testing_ping_pong');
      expect(systems[1]).toContain('<tool_guidance name=\\"testing_ping_pong\\">');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Aptix prompts and resources in the AI SDK (issue 37): a rendered prompt is `ModelMessage[]` and a read
 * resource the parts of a user message, and `generateText` sends them to the model as given. Failures
 * are results with a code and a message naming the problem, never a throw.
 */
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { openScratchSessions, RED_PIXEL_PNG, unitsPackage } from '@aptix/adapter-core/testing';
import { generateText, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createAiSdkTools } from '../src/index.js';
import { scriptedModel, text } from './scripted-model.js';

/** Runs one step of generateText on `messages` and answers what the model was sent. */
async function sentToModel(messages: ModelMessage[]): Promise<LanguageModelV4Prompt> {
  let prompt: LanguageModelV4Prompt | undefined;
  const { model } = scriptedModel([
    (options) => {
      prompt = options.prompt;
      return [text('ok')];
    },
  ]);
  await generateText({ model, messages });
  return prompt!;
}

describe('@aptix/ai-sdk prompts and resources', () => {
  it('renders a prompt as ModelMessage[] that generateText sends to the model as they are', async () => {
    const { units } = await createAiSdkTools({ tools: [unitsPackage] });
    const rendered = await units.messages('acme_greeting', { name: 'Ada', style: 'formal' });
    expect(rendered).toEqual({
      ok: true,
      value: [
        { role: 'user', content: [{ type: 'text', text: 'Greet Ada in a formal style.' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Understood.' }] },
      ],
    });
    const prompt = await sentToModel([...(rendered.ok ? rendered.value : []), { role: 'user', content: 'Go on.' }]);
    expect(
      prompt.map((message) => ({
        role: message.role,
        texts: (message.content as Array<{ text?: string }>).map((part) => part.text),
      })),
    ).toEqual([
      { role: 'user', texts: ['Greet Ada in a formal style.'] },
      { role: 'assistant', texts: ['Understood.'] },
      { role: 'user', texts: ['Go on.'] },
    ]);
  });

  it('sends an image of a prompt and a read image resource to the model as image files (the image part is deprecated)', async () => {
    const { units } = await createAiSdkTools({ tools: [unitsPackage] });
    const picture = await units.messages('acme_picture');
    const logo = await units.parts('acme://logo.png');
    const readme = await units.parts('acme://docs/readme');
    expect(logo).toEqual({
      ok: true,
      value: [{ type: 'file', data: { type: 'data', data: RED_PIXEL_PNG }, mediaType: 'image/png' }],
    });
    expect(readme).toEqual({
      ok: true,
      value: [{ type: 'text', text: 'Document acme://docs/readme (text/markdown):\n# Readme\n\nHello.' }],
    });
    const prompt = await sentToModel([
      ...(picture.ok ? picture.value : []),
      { role: 'user', content: [...(logo.ok ? logo.value : []), ...(readme.ok ? readme.value : [])] },
    ]);
    const userParts = prompt.flatMap((message) =>
      message.role === 'user' ? (message.content as Array<{ type: string; mediaType?: string; text?: string }>) : [],
    );
    expect(userParts.filter((part) => part.type === 'file').map((part) => part.mediaType)).toEqual([
      'image/png',
      'image/png',
    ]);
    expect(userParts.filter((part) => part.type === 'text').map((part) => part.text)).toEqual([
      'Document acme://docs/readme (text/markdown):\n# Readme',
      'Document acme://docs/readme (text/markdown):\n# Readme\n\nHello.',
    ]);
  });

  it('answers bad arguments, unknown prompts, failing renders and bad URIs with a code and a clear message', async () => {
    const { units } = await createAiSdkTools({ tools: [unitsPackage] });
    const missing = await units.messages('acme_greeting', { style: 'formal' });
    expect(missing).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS', message: expect.stringContaining("'name'") });
    expect(await units.messages('acme_nope')).toMatchObject({ ok: false, code: 'PROMPT_NOT_FOUND' });
    const thrown = await units.messages('acme_throws');
    expect(thrown).toEqual({
      ok: false,
      code: 'RENDER_FAILED',
      message: 'Prompt "acme_throws" failed: Error: the template store is down',
    });
    expect(await units.parts('acme://docs/../x')).toMatchObject({ ok: false, code: 'INVALID_URI' });
  });

  it("offers the session mode's prompts only", async () => {
    const sessions = await openScratchSessions();
    try {
      const { units } = await createAiSdkTools({
        tools: [samples, unitsPackage, modeCatalogPackage, modeChangePackage],
        session: await sessions.newSession('general'),
      });
      expect((await units.units.listPrompts()).map((prompt) => prompt.name)).not.toContain('acme_diagnostics_only');
      expect(await units.messages('acme_diagnostics_only')).toMatchObject({ ok: false, code: 'PROMPT_NOT_FOUND' });
    } finally {
      await sessions.close();
    }
  });
});

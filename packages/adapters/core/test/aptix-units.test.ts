/**
 * Prompts and resources through adapter-core (issue 37): the packages' and the caller's, checked by the
 * contract's registries, offered in the session's current mode, rendered and read by the contract's
 * checks. Every failure is a result with a code and a message naming what is wrong; nothing throws.
 */
import { definePrompt, ToolContractError } from '@aptix/tool-contract';
import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openScratchSessions, RED_PIXEL_PNG, unitsPackage, type ScratchSessions } from '../src/testing/index.js';
import { createAptixTools, promptMessageParts, resourceParts } from '../src/index.js';

describe('prompts and resources in adapter-core', () => {
  let sessions: ScratchSessions;
  beforeAll(async () => void (sessions = await openScratchSessions()));
  afterAll(() => sessions.close());

  it("lists, renders, reads and completes a package's prompts and resources", async () => {
    const { units } = await createAptixTools({ tools: [unitsPackage] });
    expect((await units.listPrompts()).map((prompt) => prompt.name)).toEqual([
      'acme_greeting',
      'acme_picture',
      'acme_diagnostics_only',
      'acme_throws',
    ]);
    expect((await units.listPrompts())[0]).toEqual({
      name: 'acme_greeting',
      title: 'Greeting',
      description: 'Asks for a greeting of someone, in a style.',
      arguments: [
        { name: 'name', description: 'Who to greet.', required: true },
        { name: 'style', description: 'The style.', required: false, values: ['formal', 'casual'] },
      ],
    });
    expect(await units.render('acme_greeting', { name: 'Ada', style: 'formal' })).toEqual({
      ok: true,
      value: {
        description: 'Asks for a greeting of someone, in a style.',
        messages: [
          { role: 'user', content: { type: 'text', text: 'Greet Ada in a formal style.' } },
          { role: 'assistant', content: { type: 'text', text: 'Understood.' } },
        ],
      },
    });
    expect(await units.listResources()).toEqual([
      expect.objectContaining({ name: 'acme_readme', uri: 'acme://docs/readme', mimeType: 'text/markdown' }),
      expect.objectContaining({ name: 'acme_logo', uri: 'acme://logo.png' }),
      expect.objectContaining({ name: 'acme_user', uriTemplate: 'acme://users/{id}' }),
    ]);
    expect(await units.read('acme://logo.png')).toEqual({
      ok: true,
      value: [{ uri: 'acme://logo.png', mimeType: 'image/png', blob: RED_PIXEL_PNG }],
    });
    expect(await units.read('acme://users/ada')).toEqual({
      ok: true,
      value: [{ uri: 'acme://users/ada', mimeType: 'application/json', text: '{"id":"ada"}' }],
    });
    expect(await units.complete({ resource: 'acme://users/{id}' }, 'id', 'a')).toEqual({
      ok: true,
      value: { values: ['ada', 'alan'], total: 2, hasMore: false },
    });
    expect(await units.complete({ prompt: 'acme_greeting' }, 'style', 'f')).toMatchObject({
      ok: true,
      value: { values: ['formal'] },
    });
  });

  it('answers every bad request with a code and a message naming what is wrong', async () => {
    const { units } = await createAptixTools({ tools: [unitsPackage] });
    const missing = await units.render('acme_greeting', { style: 'formal' });
    expect(missing).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
    expect(!missing.ok && missing.message).toMatch(/'name'/);
    expect(await units.render('acme_greeting', { name: 7 })).toMatchObject({
      ok: false,
      code: 'INVALID_ARGUMENTS',
      message: expect.stringContaining("argument 'name' must be a string"),
    });
    expect(await units.render('acme_greting', {})).toMatchObject({
      ok: false,
      code: 'PROMPT_NOT_FOUND',
      message: expect.stringContaining('Prompts: acme_greeting, acme_picture'),
    });
    const thrown = await units.render('acme_throws');
    expect(thrown).toMatchObject({ ok: false, code: 'RENDER_FAILED' });
    expect(!thrown.ok && thrown.message).toBe('Prompt "acme_throws" failed: Error: the template store is down');
    expect(await units.read('acme://docs/../secrets')).toMatchObject({ ok: false, code: 'INVALID_URI' });
    expect(await units.read('acme://nothing')).toMatchObject({ ok: false, code: 'RESOURCE_NOT_FOUND' });
    expect(await units.complete({ prompt: 'acme_greeting' }, 'mood', '')).toMatchObject({
      ok: false,
      code: 'INVALID_ARGUMENTS',
      message: expect.stringContaining('It has: name, style'),
    });
  });

  it('bounds a render in time, and stops it on the signal', async () => {
    const hangs = definePrompt({
      name: 'acme_hangs',
      description: 'Never answers.',
      render: () => new Promise(() => {}),
    });
    const { units } = await createAptixTools({ tools: [], prompts: [hangs], unitTimeoutMs: 50 });
    expect(await units.render('acme_hangs')).toMatchObject({
      ok: false,
      code: 'TIMEOUT',
      message: expect.stringContaining('did not answer within 50 ms'),
    });
  });

  it('refuses a prompt that breaks the contract when the adapter is made', async () => {
    const broken = definePrompt({ name: 'Bad Name', description: 'x', render: () => 'x' });
    await expect(createAptixTools({ tools: [], prompts: [broken] })).rejects.toThrow(ToolContractError);
    await expect(createAptixTools({ tools: [{ tools: [], resources: 'x' } as never] })).rejects.toThrow(
      /resources .* must be an array/,
    );
  });

  it("offers the session's current mode's prompts, and follows agent_change_mode", async () => {
    const session = await sessions.newSession('general');
    const aptix = await createAptixTools({
      tools: [samples, unitsPackage, modeCatalogPackage, modeChangePackage],
      session,
    });
    expect((await aptix.units.listPrompts()).map((prompt) => prompt.name)).not.toContain('acme_diagnostics_only');
    expect(await aptix.units.render('acme_diagnostics_only')).toMatchObject({
      ok: false,
      code: 'PROMPT_NOT_FOUND',
      message: expect.stringContaining('in mode "general"'),
    });
    const changed = await aptix.call('agent_change_mode', {
      mode: 'tool_diagnostics',
      branch: false,
      reason: 'The user asked for diagnostics.',
    });
    expect(changed.successful).toBe(true);
    expect(await aptix.units.render('acme_diagnostics_only')).toMatchObject({
      ok: true,
      value: { messages: [{ role: 'user', content: { type: 'text', text: 'Diagnose the tools.' } }] },
    });
    const gone = await createAptixTools({
      tools: [samples, unitsPackage, modeCatalogPackage, modeChangePackage],
      session: { ...session, sessionId: 'no-such-session' },
    });
    expect(await gone.units.read('acme://docs/readme')).toMatchObject({ ok: false, code: 'SESSION_NOT_FOUND' });
  });

  it('turns messages and contents into the parts frameworks take', async () => {
    const { units } = await createAptixTools({ tools: [unitsPackage] });
    const picture = await units.render('acme_picture');
    expect(picture.ok && promptMessageParts(picture.value.messages)).toEqual([
      { role: 'user', parts: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }] },
      { role: 'user', parts: [{ type: 'text', text: 'Document acme://docs/readme (text/markdown):\n# Readme' }] },
    ]);
    const logo = await units.read('acme://logo.png');
    expect(logo.ok && resourceParts(logo.value)).toEqual([
      { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
    ]);
  });
});

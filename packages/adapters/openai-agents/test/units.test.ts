/**
 * Aptix prompts and resources in the OpenAI Agents SDK (issue 37). The SDK has no prompt template of
 * its own, so a rendered prompt is given as a run's input items, which `run()` hands the model as they
 * are; resources answer through the SDK's MCP resource methods and as an input item. Failures are
 * results with a code and a message naming the problem (a read through the MCP methods rejects, as an
 * MCP server's does, with an AptixUnitError).
 */
import { openScratchSessions, RED_PIXEL_PNG, unitsPackage } from '@aptix/adapter-core/testing';
import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { Agent, run, type AgentInputItem } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { AptixUnitError, createAgentsTools } from '../src/index.js';
import { say, ScriptedModel } from './scripted-model.js';

/** Runs an agent on `input` and answers the input its model was sent. */
async function sentToModel(input: AgentInputItem[]): Promise<unknown[]> {
  const model = new ScriptedModel([() => [say('ok')]]);
  const agent = new Agent({ name: 'Assistant', instructions: 'Be brief.', model });
  await run(agent, input);
  return model.requests[0]!.input as unknown[];
}

describe('@aptix/openai-agents prompts and resources', () => {
  it("renders a prompt as input items that run() hands the agent's model", async () => {
    const { units } = await createAgentsTools({ tools: [unitsPackage] });
    const rendered = await units.input('acme_greeting', { name: 'Ada', style: 'formal' });
    expect(rendered).toEqual({
      ok: true,
      value: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Greet Ada in a formal style.' }] },
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Understood.' }],
        },
      ],
    });
    const sent = await sentToModel(rendered.ok ? rendered.value : []);
    expect(sent).toEqual([
      expect.objectContaining({
        role: 'user',
        content: [{ type: 'input_text', text: 'Greet Ada in a formal style.' }],
      }),
      expect.objectContaining({ role: 'assistant', content: [{ type: 'output_text', text: 'Understood.' }] }),
    ]);
  });

  it('gives images of a prompt and a read resource as input images, and documents as input text', async () => {
    const { units } = await createAgentsTools({ tools: [unitsPackage] });
    const picture = await units.input('acme_picture');
    const logo = await units.resourceInput('acme://logo.png');
    expect(logo).toEqual({
      ok: true,
      value: {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_image', image: `data:image/png;base64,${RED_PIXEL_PNG}` }],
      },
    });
    const sent = await sentToModel([...(picture.ok ? picture.value : []), ...(logo.ok ? [logo.value] : [])]);
    expect(
      sent.flatMap((item) => (item as { content: Array<{ type: string }> }).content.map((part) => part.type)),
    ).toEqual(['input_image', 'input_text', 'input_image']);
  });

  it("answers the SDK's MCP resource methods with its own types", async () => {
    const { units } = await createAgentsTools({ tools: [unitsPackage] });
    expect(await units.resources.listResources()).toEqual({
      resources: [
        { uri: 'acme://docs/readme', name: 'acme_readme', mimeType: 'text/markdown', description: 'The readme.' },
        { uri: 'acme://logo.png', name: 'acme_logo', mimeType: 'image/png' },
      ],
    });
    expect(await units.resources.listResourceTemplates()).toEqual({
      resourceTemplates: [{ uriTemplate: 'acme://users/{id}', name: 'acme_user', mimeType: 'application/json' }],
    });
    expect(await units.resources.readResource('acme://users/ada')).toEqual({
      contents: [{ uri: 'acme://users/ada', mimeType: 'application/json', text: '{"id":"ada"}' }],
    });
    const failed = await units.resources.readResource('acme://nothing').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(AptixUnitError);
    expect(failed).toMatchObject({
      code: 'RESOURCE_NOT_FOUND',
      message: expect.stringContaining('acme://docs/readme'),
    });
  });

  it('answers bad arguments and failing renders with a code and a clear message', async () => {
    const { units } = await createAgentsTools({ tools: [unitsPackage] });
    expect(await units.input('acme_greeting', { style: 'formal' })).toMatchObject({
      ok: false,
      code: 'INVALID_ARGUMENTS',
      message: expect.stringContaining("'name'"),
    });
    expect(await units.input('acme_throws')).toEqual({
      ok: false,
      code: 'RENDER_FAILED',
      message: 'Prompt "acme_throws" failed: Error: the template store is down',
    });
  });

  it("offers the session mode's prompts only", async () => {
    const sessions = await openScratchSessions();
    try {
      const { units } = await createAgentsTools({
        tools: [samples, unitsPackage, modeCatalogPackage, modeChangePackage],
        session: await sessions.newSession('general'),
      });
      expect(await units.input('acme_diagnostics_only')).toMatchObject({ ok: false, code: 'PROMPT_NOT_FOUND' });
    } finally {
      await sessions.close();
    }
  });
});

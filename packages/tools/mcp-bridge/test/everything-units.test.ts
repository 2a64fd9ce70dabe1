/**
 * A bridged server's prompts and resources (createUnits): the real @modelcontextprotocol/server-everything
 * over stdio, its units wrapped under the bridge's prefix and modes, registered in the contract's real
 * registries and served through the contract's own render, read and completion calls, as a host serves them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CapturingAdminLogger,
  completeUnit,
  PromptRegistry,
  readResource,
  renderPrompt,
  ResourceRegistry,
  type PackageUnits,
} from '@aptix/tool-contract';
import { createTools, createUnits, close } from '../src/index.js';
import { EVERYTHING } from './servers.js';

let units: PackageUnits;
const prompts = new PromptRegistry();
const resources = new ResourceRegistry();
const logger = new CapturingAdminLogger();
beforeAll(async () => {
  const host = {
    logger,
    options: {
      name: 'everything',
      modes: ['general'],
      stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    },
  };
  await createTools(host as never);
  units = await createUnits(host as never);
  for (const prompt of units.prompts ?? []) prompts.register(prompt);
  for (const resource of units.resources ?? []) resources.register(resource);
}, 60_000);
afterAll(() => close());

describe("server-everything's prompts and resources through the bridge", () => {
  it('offers its prompts and resources under the prefix and the modes of its tools, all passing the contract', () => {
    expect(prompts.list().map((prompt) => prompt.name)).toEqual([
      'everything_simple_prompt',
      'everything_args_prompt',
      'everything_completable_prompt',
      'everything_resource_prompt',
    ]);
    for (const unit of [...(units.prompts ?? []), ...(units.resources ?? [])]) {
      expect(unit.name).toMatch(/^everything_[a-z0-9]+(_[a-z0-9]+)*$/);
      expect(unit.modes).toEqual(['general']);
    }
    expect(resources.resolve('demo://resource/static/document/architecture.md')?.resource.name).toBe(
      'everything_architecture_md',
    );
    expect(resources.resolve('demo://resource/dynamic/text/7')?.variables).toEqual({ resourceId: '7' });
  });

  it('renders a remote prompt with its arguments, and refuses arguments its schema refuses before the server is asked', async () => {
    const prompt = prompts.get('everything_args_prompt')!;
    const rendered = await renderPrompt(prompt, { city: 'Lyon', state: 'Rhône' });
    expect(rendered.ok).toBe(true);
    expect(JSON.stringify(rendered.ok && rendered.value.messages)).toContain('Lyon');
    const refused = await renderPrompt(prompt, {});
    expect(refused).toMatchObject({ ok: false, code: 'INVALID_ARGUMENTS' });
    expect(!refused.ok && refused.message).toContain('city');
  });

  it('reads a fixed resource and a template resource from the server, and completes a prompt argument there', async () => {
    const fixed = resources.resolve('demo://resource/static/document/architecture.md')!;
    const doc = await readResource(fixed.resource, 'demo://resource/static/document/architecture.md', fixed.variables);
    expect(doc.ok && doc.value[0]).toMatchObject({
      uri: 'demo://resource/static/document/architecture.md',
      mimeType: 'text/markdown',
    });
    const dynamic = resources.resolve('demo://resource/dynamic/text/7')!;
    const text = await readResource(dynamic.resource, 'demo://resource/dynamic/text/7', dynamic.variables);
    expect(text.ok && text.value[0]!.uri).toBe('demo://resource/dynamic/text/7');
    const completion = await completeUnit(prompts.get('everything_completable_prompt')!, 'department', 'E', {});
    expect(completion.ok && completion.value.values).toContain('Engineering');
  });
});

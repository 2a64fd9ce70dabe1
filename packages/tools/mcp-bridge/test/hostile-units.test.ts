/**
 * A server whose prompts and resources break the contract: the bridge offers the good ones, leaves the
 * others out with a warning naming each (the host never stops for them), and a render or read that
 * answers garbage fails that request only.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  CapturingAdminLogger,
  PromptRegistry,
  readResource,
  renderPrompt,
  ResourceRegistry,
  type PackageUnits,
} from '@aptix/tool-contract';
import { close, createTools, createUnits, MAX_BRIDGED_UNITS } from '../src/index.js';
import { HOSTILE_UNITS } from './servers.js';

async function bridged(args: string[] = []): Promise<{ units: PackageUnits; logger: CapturingAdminLogger }> {
  const logger = new CapturingAdminLogger();
  const host = {
    logger,
    options: { name: 'hostile', stdio: { command: process.execPath, args: [HOSTILE_UNITS, ...args] } },
  };
  await createTools(host as never);
  return { units: await createUnits(host as never), logger };
}
afterAll(() => close());

describe("a hostile server's prompts and resources", () => {
  it('offers the good ones and leaves out, with a warning each, a URI with dot segments, a relative URI and a template past level 1', async () => {
    const { units, logger } = await bridged();
    expect((units.prompts ?? []).map((prompt) => prompt.name)).toEqual([
      'hostile_greet',
      'hostile_undescribed',
      'hostile_system_role',
    ]);
    expect((units.resources ?? []).map((resource) => resource.name)).toEqual([
      'hostile_notes',
      'hostile_untyped',
      'hostile_empty',
      'hostile_item',
    ]);
    const warnings = logger.entries
      .filter((entry) => entry.tag === '[McpBridge_UnitSkipped]')
      .map((entry) => entry.message);
    for (const skipped of ['climb', 'relative', 'search'])
      expect(
        warnings.some((warning) => warning.includes(`its resource "${skipped}" is not offered`)),
        skipped,
      ).toBe(true);
    // An argument the server did not describe gets a description saying whose it is; a missing media type, the generic one.
    const undescribed = new PromptRegistry().register(units.prompts![1]!);
    expect(undescribed.arguments).toEqual([
      { name: 'topic', description: "The topic argument of hostile's prompt undescribed.", required: false },
    ]);
    expect(units.resources![1]!.mimeType).toBe('application/octet-stream');
  });

  it('a render with a role MCP prompts do not have (the SDK refuses the answer), and a read with no contents, fail that request only', async () => {
    const { units } = await bridged();
    const prompts = new PromptRegistry();
    for (const prompt of units.prompts ?? []) prompts.register(prompt);
    expect(await renderPrompt(prompts.get('hostile_system_role')!, {})).toMatchObject({
      ok: false,
      code: 'RENDER_FAILED',
    });
    const greeted = await renderPrompt(prompts.get('hostile_greet')!, { who: 'Ada' });
    expect(greeted.ok && greeted.value.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Hello, Ada!' } },
    ]);
    const resources = new ResourceRegistry();
    for (const resource of units.resources ?? []) resources.register(resource);
    const empty = resources.resolve('hostile://empty')!;
    expect(await readResource(empty.resource, 'hostile://empty', empty.variables)).toMatchObject({
      ok: false,
      code: 'READ_FAILED',
    });
    const item = resources.resolve('hostile://items/42')!;
    const read = await readResource(item.resource, 'hostile://items/42', item.variables);
    expect(read.ok && read.value).toEqual([
      { uri: 'hostile://items/42', mimeType: 'text/plain', text: 'read hostile://items/42' },
    ]);
  });

  it(`offers at most ${MAX_BRIDGED_UNITS} prompts of a server that lists more, saying so`, async () => {
    const { units, logger } = await bridged(['--many']);
    expect(units.prompts).toHaveLength(MAX_BRIDGED_UNITS);
    expect(
      logger.entries.some((entry) => entry.message.includes(`only the first ${MAX_BRIDGED_UNITS} are offered`)),
    ).toBe(true);
  });
});

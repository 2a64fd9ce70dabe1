import { describe, expect, it } from 'vitest';
import { FIRST_PARTY_TOOL_NAMES, registryWith, sampleModes } from '../test/modes.fixture.js';
import {
  ALWAYS_OFFERED_TOOLS,
  checkCatalogAgainstRegistry,
  loadModeCatalog,
  ModeCatalog,
  ModeCatalogError,
  ModeCatalogErrorCode,
  tools,
  toolNamesForMode,
  toolNotInModeMessage,
} from './index.js';

const everything = registryWith([
  'testing_calculator',
  'agent_hello_world',
  'agent_change_mode',
  'agent_list_modes',
  'testing_delay',
]);

function thrown(fn: () => unknown): ModeCatalogError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ModeCatalogError);
    return error as ModeCatalogError;
  }
  throw new Error('expected a ModeCatalogError');
}

describe('toolNamesForMode', () => {
  it("offers the mode's tools in catalog order, then agent_list_modes and agent_change_mode", () => {
    const catalog = ModeCatalog.fromModes(sampleModes());
    expect(toolNamesForMode(everything, catalog, 'general')).toEqual([
      'agent_hello_world',
      'agent_list_modes',
      'agent_change_mode',
    ]);
    expect(toolNamesForMode(everything, catalog, 'ddr_authoring')).toEqual([
      'testing_calculator',
      'agent_hello_world',
      'agent_list_modes',
      'agent_change_mode',
    ]);
  });

  it('offers the always-on tools in a mode that names no tools', () => {
    const modes = sampleModes();
    modes[1]!.tools = [];
    expect(toolNamesForMode(everything, modes, 'ddr_authoring')).toEqual([...ALWAYS_OFFERED_TOOLS]);
  });

  it('lists an always-on tool once when the mode names it too, where the mode puts it', () => {
    const modes = sampleModes();
    modes[0]!.tools = ['agent_change_mode', 'agent_hello_world'];
    expect(toolNamesForMode(everything, ModeCatalog.fromModes(modes), 'general')).toEqual([
      'agent_change_mode',
      'agent_hello_world',
      'agent_list_modes',
    ]);
  });

  it('regression: repeated selection never accumulates duplicates, even when a caller changes the result', () => {
    const catalog = ModeCatalog.fromModes(sampleModes());
    const first = toolNamesForMode(everything, catalog, 'general');
    for (let turn = 0; turn < 50; turn++) {
      const names = toolNamesForMode(everything, catalog, 'general');
      expect(names).toEqual(first);
      expect(new Set(names).size).toBe(names.length);
      names.push('agent_change_mode', 'agent_list_modes');
    }
    // Nothing leaked into the catalog either.
    expect(catalog.requireMode('general').tools).toEqual(['agent_hello_world']);
    // A plain array of modes (e.g. from another catalog service) is not changed either.
    const modes = sampleModes();
    for (let turn = 0; turn < 5; turn++) toolNamesForMode(everything, modes, 'general');
    expect(modes[0]!.tools).toEqual(['agent_hello_world']);
  });

  it('gives names the registry can turn into definitions', () => {
    const names = toolNamesForMode(everything, ModeCatalog.fromModes(sampleModes()), 'general');
    expect(everything.definitions('responses', names).map((definition) => definition.name)).toEqual(names);
  });

  it('refuses an unknown mode key with an error listing the valid keys', () => {
    const error = thrown(() => toolNamesForMode(everything, ModeCatalog.fromModes(sampleModes()), 'ddr-authoring'));
    expect(error.code).toBe(ModeCatalogErrorCode.UNKNOWN_MODE);
    expect(error.message).toBe(
      'Unknown mode "ddr-authoring": mode catalog (in-memory catalog) has no mode with that key. Valid modes: general, ddr_authoring.',
    );
  });

  it('refuses a mode whose tool is not registered, naming the mode and the tool', () => {
    const error = thrown(() =>
      toolNamesForMode(
        registryWith(['agent_hello_world', 'agent_change_mode', 'agent_list_modes']),
        sampleModes(),
        'ddr_authoring',
      ),
    );
    expect(error.code).toBe(ModeCatalogErrorCode.UNREGISTERED_TOOL);
    expect(error.message).toContain('mode "ddr_authoring" offers "testing_calculator", which is not registered');
    expect(error.issues.map((issue) => issue.path)).toEqual(['$.modes[1].tools[0]']);
  });
});

describe('toolNotInModeMessage', () => {
  it("names the tool, the mode and the session, lists the mode's tools, and says to list tools again", () => {
    expect(
      toolNotInModeMessage({
        tool: 'testing_delay',
        mode: 'general',
        sessionId: 's-1',
        offered: ['agent_hello_world', 'agent_list_modes'],
      }),
    ).toBe(
      'Tool "testing_delay" is not offered in mode "general" (session s-1); it was not run. Tools in this mode: agent_hello_world, agent_list_modes. ' +
        "The session's mode may have changed since the tools were listed: list the tools again before calling one. " +
        'To use "testing_delay", switch to a mode that offers it with agent_change_mode.',
    );
  });
});

describe('checkCatalogAgainstRegistry', () => {
  it('passes when every tool a mode names and every always-on tool is registered', () => {
    expect(() => checkCatalogAgainstRegistry(everything, ModeCatalog.fromModes(sampleModes()))).not.toThrow();
  });

  it('fails naming every mode and tool that is missing, and the catalog file', async () => {
    const catalog = await loadModeCatalog();
    const registry = registryWith([
      'agent_hello_world',
      'testing_calculator',
      'testing_ping_pong',
      'agent_change_mode',
      'agent_list_modes',
    ]);
    const error = thrown(() => checkCatalogAgainstRegistry(registry, catalog));
    expect(error.code).toBe(ModeCatalogErrorCode.UNREGISTERED_TOOL);
    expect(error.source).toBe(catalog.source);
    expect(error.message).toContain(catalog.source);
    expect(error.message).toContain('mode "tool_diagnostics" offers "testing_delay", which is not registered');
    expect(error.message).toContain(
      'mode "tool_diagnostics" offers "testing_failure_injection", which is not registered',
    );
    expect(error.message).toContain('mode "tool_diagnostics" offers "testing_issue_refund", which is not registered');
    expect(error.message).toContain(
      'Registered tools: agent_hello_world, testing_calculator, testing_ping_pong, agent_change_mode, agent_list_modes.',
    );
    expect(error.issues).toHaveLength(3);
  });

  it('fails when an always-on tool is not registered, since every mode must offer it', () => {
    const error = thrown(() =>
      checkCatalogAgainstRegistry(
        registryWith(['agent_hello_world', 'testing_calculator', 'agent_list_modes']),
        sampleModes(),
      ),
    );
    expect(error.message).toContain(
      '"agent_change_mode" is offered in every mode, so the model can always see and change modes, but it is not registered (it comes from @aptix/tool-mode-change)',
    );
    expect(error.message).toContain(
      'Every mode also offers agent_list_modes (from @aptix/tool-mode-catalog) and agent_change_mode (from @aptix/tool-mode-change): keep both packages in toolPackages.',
    );
    expect(error.message).not.toMatch(/(TUL|AGN)-\d{3}/);
  });

  it('accepts the shipped catalog against the first-party tools', async () => {
    const registry = registryWith(FIRST_PARTY_TOOL_NAMES);
    const catalog = await loadModeCatalog();
    expect(() => checkCatalogAgainstRegistry(registry, catalog)).not.toThrow();
    for (const key of catalog.keys)
      expect(toolNamesForMode(registry, catalog, key)).toEqual(expect.arrayContaining([...ALWAYS_OFFERED_TOOLS]));
  });

  it('agrees with the tool this package ships: agent_list_modes is always offered', () => {
    expect(ALWAYS_OFFERED_TOOLS).toContain(tools[0].ToolName);
  });
});

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, scratch } from './support.js';

const FIRST_PARTY = ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'];

/** A plain-JavaScript tool class source: a valid tool that echoes, with optional extra statics. */
function toolSource(className: string, toolName: string, statics = ''): string {
  return `export class ${className} {
  static ToolName = '${toolName}';
  static ToolUsageMetadata = '${toolName} — Usage Guide\\n\\nPrimary purpose:\\n- Echo a text.';
  ${statics}
  static getSchema() {
    return { type: 'function', name: '${toolName}', description: 'Echoes a text.', parameters: { type: 'object', properties: { text: { type: 'string', description: 'The text.' } }, required: ['text'], additionalProperties: false } };
  }
  name = '${toolName}';
  isToolFullyExecutedOnServer = true;
  async execute(json) { return { successful: true, result: json, errors: [] }; }
}
`;
}

describe('composable modes: tool packages and the configuration add to the shipped catalog, through the aptix CLI', () => {
  const space = scratch();
  const env = { APTIX_DB: space.db };
  const acme = join(space.dir, 'acme-tools');
  const config = (name: string, content: object) => {
    const file = join(space.dir, name);
    writeFileSync(file, JSON.stringify({ toolPackages: [...FIRST_PARTY, acme], ...content }));
    return file;
  };

  beforeAll(() => {
    mkdirSync(acme, { recursive: true });
    writeFileSync(
      join(acme, 'package.json'),
      JSON.stringify({ name: 'acme-tools', version: '1.0.0', type: 'module', main: 'index.js' }),
    );
    writeFileSync(
      join(acme, 'index.js'),
      toolSource('JoiningTool', 'acme_joining', "static Modes = ['general', 'research'];") +
        toolSource('ConfiguredTool', 'acme_configured') +
        toolSource('AddedTool', 'acme_added') +
        toolSource('IdleTool', 'acme_idle') +
        'export const tools = [JoiningTool, ConfiguredTool, AddedTool, IdleTool];\n',
    );
  });
  afterAll(() => space.cleanup());

  const composed = () =>
    config('composed.json', {
      modes: {
        extend: { tool_diagnostics: ['acme_configured'] },
        add: [
          { key: 'weather', displayName: 'Weather', description: 'Forecasts and conversions.', tools: ['acme_added'] },
        ],
      },
    });

  it('aptix check passes and warns, on stderr and in the report, about a tool in no mode and a mode this host lacks', async () => {
    const run = await runCli(['--config', composed(), 'check'], { env });
    expect(run.code).toBe(0);
    const report = run.json<{ ok: boolean; modes: string[]; warnings: string[] }>();
    expect(report.ok).toBe(true);
    expect(report.modes).toEqual(['general', 'ddr_authoring', 'tool_diagnostics', 'weather']);
    expect(report.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          String.raw`^tool package "acme-tools" adds "acme_joining" to mode "research", which this host's ` +
            String.raw`catalog does not have \(modes: general, ddr_authoring, tool_diagnostics, weather\), so it ` +
            String.raw`joins no mode there\. Fix: `,
        ),
      ),
      'Tool "acme_idle" from "acme-tools" is offered in no mode, so no session\'s model is offered it (HTTP, MCP and the CLI still serve it). ' +
        'Fix: add static readonly Modes = [\'general\'] to its class, or "modes": { "extend": { "general": ["acme_idle"] } } to aptix.config.json.',
    ]);
    expect(run.stderr).toContain('aptix: warning: Tool "acme_idle" from "acme-tools" is offered in no mode');
  });

  it('offers each tool in the modes it joined, after the shipped tools, without a copy of the catalog', async () => {
    const file = composed();
    type Modes = { modes: Array<{ key: string; tools: string[]; isDefault: boolean }> };
    const [shipped, { modes }] = await Promise.all([
      runCli(['modes', 'list'], { env }).then((run) => run.json<Modes>().modes),
      runCli(['--config', file, 'modes', 'list'], { env }).then((run) => run.json<Modes>()),
    ]);
    const tools = (key: string) => shipped.find((mode) => mode.key === key)!.tools;
    expect(modes.map((mode) => [mode.key, mode.tools])).toEqual([
      ['general', [...tools('general'), 'acme_joining']],
      ['ddr_authoring', tools('ddr_authoring')],
      ['tool_diagnostics', [...tools('tool_diagnostics'), 'acme_configured']],
      ['weather', ['acme_added']],
    ]);
    expect(modes.filter((mode) => mode.isDefault).map((mode) => mode.key)).toEqual(['general']);
    const weather = (await runCli(['--config', file, 'tools', 'list', '--mode', 'weather'], { env })).json<{
      tools: Array<{ name: string }>;
    }>();
    expect(weather.tools.map((tool) => tool.name)).toEqual(['acme_added', 'agent_list_modes', 'agent_change_mode']);
  });

  it('agent_list_modes lists the added mode and agent_change_mode moves a session into it', async () => {
    const file = composed();
    const listed = (await runCli(['--config', file, 'tools', 'call', 'agent_list_modes', '{}'], { env })).json<{
      successful: boolean;
      result: { modes: Array<{ key: string }> };
    }>();
    expect(listed.successful).toBe(true);
    expect(listed.result.modes.map((mode) => mode.key)).toEqual([
      'general',
      'ddr_authoring',
      'tool_diagnostics',
      'weather',
    ]);
    const session = (await runCli(['--config', file, 'sessions', 'create'], { env })).json<{
      id: string;
      mode: string;
    }>();
    expect(session.mode).toBe('general');
    const changed = await runCli(
      [
        '--config',
        file,
        'tools',
        'call',
        '--session',
        session.id,
        'agent_change_mode',
        JSON.stringify({ mode: 'weather', branch: false, reason: 'The user asks for a forecast.' }),
      ],
      { env },
    );
    expect(changed.json<{ successful: boolean }>().successful, changed.stdout).toBe(true);
    expect(
      (await runCli(['--config', file, 'sessions', 'show', session.id], { env })).json<{ mode: string }>().mode,
    ).toBe('weather');
  });

  it('refuses a configured extension of a mode the catalog lacks, listing the modes', async () => {
    const run = await runCli(
      ['--config', config('typo.json', { modes: { extend: { genral: ['acme_configured'] } } }), 'check'],
      { env },
    );
    expect(run.code).toBe(1);
    expect(run.json<{ error: { message: string } }>().error.message).toContain(
      'adds tools to mode "genral", which the catalog does not have. Valid modes: general, ddr_authoring, tool_diagnostics.',
    );
  });

  it('refuses a mode naming a tool no package provides, naming the packages of the always-on tools', async () => {
    const run = await runCli(
      ['--config', config('unknown-tool.json', { modes: { extend: { general: ['acme_nowhere'] } } }), 'check'],
      { env },
    );
    expect(run.code).toBe(1);
    const message = run.json<{ error: { message: string } }>().error.message;
    expect(message).toContain('mode "general" offers "acme_nowhere", which is not registered');
    expect(message).toContain(
      'Every mode also offers agent_list_modes (from @aptix/tool-mode-catalog) and agent_change_mode (from @aptix/tool-mode-change): keep both packages in toolPackages.',
    );
    const withoutModeChange = await runCli(['check'], {
      env: { ...env, APTIX_TOOL_PACKAGES: '@aptix/tool-samples,@aptix/tool-mode-catalog' },
    });
    expect(withoutModeChange.code).toBe(1);
    expect(withoutModeChange.json<{ error: { message: string } }>().error.message).toContain(
      '"agent_change_mode" is offered in every mode, so the model can always see and change modes, but it is not registered (it comes from @aptix/tool-mode-change)',
    );
  });

  it('still takes the path form of "modes", and refuses an unknown field of the object form', async () => {
    const catalog = join(space.dir, 'modes.json');
    writeFileSync(
      catalog,
      JSON.stringify({
        modes: [
          {
            id: '33333333333333333333333333333333',
            key: 'only',
            displayName: 'Only',
            description: 'The one mode.',
            systemPromptSummary: '',
            isDefault: true,
            tools: ['acme_joining'],
          },
        ],
      }),
    );
    const path = await runCli(['--config', config('path.json', { modes: catalog }), 'modes', 'list'], { env });
    expect(path.json<{ modes: Array<{ key: string }> }>().modes.map((mode) => mode.key)).toEqual(['only']);
    const typo = await runCli(['--config', config('bad-field.json', { modes: { extends: {} } }), 'check'], { env });
    expect(typo.code).toBe(2);
    expect(typo.json<{ error: { message: string } }>().error.message).toContain('unknown field "extends" in modes');
  });
});

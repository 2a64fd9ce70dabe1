import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, scratch } from './support.js';
import { writeBrokenToolPackage } from './suites.js';

const FIRST_PARTY = [
  'agent_hello_world',
  'testing_ping_pong',
  'testing_calculator',
  'testing_delay',
  'testing_failure_injection',
  'testing_issue_refund',
  'agent_list_modes',
  'agent_change_mode',
];

describe('the aptix CLI, as a child process', () => {
  const space = scratch();
  const env = { APTIX_DB: space.db };
  afterAll(() => space.cleanup());

  it.each([
    [[]],
    [['serve']],
    [['mcp']],
    [['check']],
    [['tools']],
    [['tools', 'list']],
    [['tools', 'call']],
    [['sessions', 'create']],
    [['sessions', 'show']],
    [['modes', 'list']],
  ])('%j --help explains itself and exits 0', async (args) => {
    const run = await runCli([...args, '--help'], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: aptix/m);
  });

  it('exits 2 on a usage error', async () => {
    expect((await runCli(['frobnicate'], { env })).code).toBe(2);
    expect((await runCli(['tools', 'list', '--format', 'xml'], { env })).code).toBe(2);
    const both = await runCli(['tools', 'list', '--mode', 'general', '--session', 'x'], { env });
    expect(both.code).toBe(2);
    expect(both.json<{ error: { message: string } }>().error.message).toContain('either --mode or --session');
  });

  it('check passes on the defaults and names every first-party package and tool', async () => {
    const run = await runCli(['check'], { env });
    expect(run.code).toBe(0);
    const report = run.json<{ ok: boolean; toolPackages: Array<{ name: string; tools: string[] }> }>();
    expect(report.ok).toBe(true);
    expect(report.toolPackages.map((p) => p.name)).toEqual([
      '@aptix/tool-samples',
      '@aptix/tool-mode-catalog',
      '@aptix/tool-mode-change',
    ]);
    expect(report.toolPackages.flatMap((p) => p.tools)).toEqual(FIRST_PARTY);
  });

  it('lists every tool, in each format', async () => {
    const responses = (await runCli(['tools', 'list'], { env })).json<{
      tools: Array<{ name: string; strict: boolean; type: string }>;
    }>();
    expect(responses.tools.map((t) => t.name)).toEqual(FIRST_PARTY);
    expect(responses.tools.every((t) => t.type === 'function' && typeof t.strict === 'boolean')).toBe(true);
    const chat = (await runCli(['tools', 'list', '--format', 'chat'], { env })).json<{
      tools: Array<{ function: { name: string } }>;
    }>();
    expect(chat.tools[0]!.function.name).toBe('agent_hello_world');
    const mcp = (await runCli(['tools', 'list', '--format', 'mcp'], { env })).json<{
      tools: Array<{ name: string; inputSchema: object; annotations?: object }>;
    }>();
    expect(mcp.tools.find((t) => t.name === 'agent_list_modes')!.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true,
    });
  });

  it("lists one mode's tools, always with the mode tools, and refuses an unknown mode", async () => {
    const run = await runCli(['tools', 'list', '--mode', 'tool_diagnostics'], { env });
    const names = run.json<{ tools: Array<{ name: string }> }>().tools.map((t) => t.name);
    expect(names).toContain('agent_change_mode');
    expect(names).toContain('agent_list_modes');
    expect(new Set(names).size).toBe(names.length);
    const unknown = await runCli(['tools', 'list', '--mode', 'nope'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.json<{ error: { message: string } }>().error.message).toMatch(
      /Mode "nope" does not exist\. Valid modes: general, ddr_authoring, tool_diagnostics/,
    );
  });

  it('calls a tool and prints { successful, result, errors } with the result parsed', async () => {
    const run = await runCli(
      ['tools', 'call', 'testing_calculator', '{"operation":"divide","a":6,"b":3}', '--conversation', 'c-1'],
      { env },
    );
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ successful: true, result: { value: 2, conversationId: 'c-1' }, errors: [] });
  });

  it("prints the tool's progress on stderr with --progress, one JSON line each, and the result alone on stdout", async () => {
    const run = await runCli(['tools', 'call', 'testing_delay', '{"milliseconds":300}', '--progress'], { env });
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ successful: true, result: { wasCancelled: false, requestedMs: 300 } });
    const reports = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('{"progress"'))
      .map((line) => (JSON.parse(line) as { progress: { progress: number; total: number } }).progress);
    expect(reports[0]).toMatchObject({ progress: 0, total: 300 });
    expect(reports.at(-1)).toMatchObject({ progress: 300, total: 300 });
    for (let i = 1; i < reports.length; i++) expect(reports[i]!.progress).toBeGreaterThan(reports[i - 1]!.progress);
    // Without the flag the tool is given no reportProgress, and nothing is printed.
    const quiet = await runCli(['tools', 'call', 'testing_delay', '{"milliseconds":50}'], { env });
    expect(quiet.stderr).not.toContain('"progress"');
  });

  it('exits 1 on a failed call, with the errors', async () => {
    const run = await runCli(['tools', 'call', 'testing_calculator', '{"operation":"divide","a":1,"b":0}'], { env });
    expect(run.code).toBe(1);
    const result = run.json<{ successful: boolean; result: unknown; errors: Array<{ code: string }> }>();
    expect(result.successful).toBe(false);
    expect(result.result).toBeNull();
    expect(result.errors[0]!.code).toBe('DIVIDE_BY_ZERO');
  });

  it('exits 1 for an unknown tool, naming the available ones', async () => {
    const run = await runCli(['tools', 'call', 'no_such_tool'], { env });
    expect(run.code).toBe(1);
    expect(run.json<{ error: { code: string; message: string } }>().error).toMatchObject({
      code: 'TOOL_NOT_FOUND',
      message: expect.stringContaining('agent_hello_world'),
    });
  });

  describe('sessions', () => {
    let sessionId: string;
    beforeAll(async () => {
      const run = await runCli(['sessions', 'create'], { env });
      expect(run.code).toBe(0);
      const created = run.json<{ id: string; mode: string }>();
      expect(created.mode).toBe('general');
      sessionId = created.id;
    });

    it('changes mode with agent_change_mode, kept across processes', async () => {
      const change = await runCli(
        [
          'tools',
          'call',
          'agent_change_mode',
          '{"mode":"tool_diagnostics","branch":false,"reason":"The user wants to debug a tool."}',
          '--session',
          sessionId,
        ],
        { env },
      );
      expect(change.code).toBe(0);
      expect(change.json()).toMatchObject({
        successful: true,
        result: { success: true, mode: 'tool_diagnostics', branch: false, sessionId },
      });
      const show = (await runCli(['sessions', 'show', sessionId], { env })).json<{
        id: string;
        mode: string;
        history: unknown[];
      }>();
      expect(show).toEqual({
        id: sessionId,
        mode: 'tool_diagnostics',
        history: [
          {
            fromMode: 'general',
            toMode: 'tool_diagnostics',
            reason: 'The user wants to debug a tool.',
            branch: false,
            at: expect.any(String),
          },
        ],
        nextCursor: null,
      });
    });

    it("refuses a tool outside the session's mode, naming the mode and its tools", async () => {
      const created = (await runCli(['sessions', 'create', '--mode', 'ddr_authoring'], { env })).json<{ id: string }>();
      const run = await runCli(
        ['tools', 'call', 'testing_failure_injection', '{"mode":"error"}', '--session', created.id],
        { env },
      );
      expect(run.code).toBe(1);
      const { error } = run.json<{ error: { code: string; message: string } }>();
      expect(error.code).toBe('TOOL_NOT_IN_MODE');
      expect(error.message).toMatch(/not offered in mode "ddr_authoring".*Tools in this mode: .*agent_change_mode/);
      expect(error.message).toContain('list the tools again');
    });

    it('refuses an unknown mode through the tool, listing the valid modes, and persists nothing', async () => {
      const run = await runCli(
        ['tools', 'call', 'agent_change_mode', '{"mode":"space","branch":false,"reason":"x"}', '--session', sessionId],
        { env },
      );
      expect(run.code).toBe(1);
      expect(JSON.stringify(run.json())).toMatch(/general, ddr_authoring, tool_diagnostics/);
      expect(
        (await runCli(['sessions', 'show', sessionId], { env })).json<{ history: unknown[] }>().history,
      ).toHaveLength(1);
    });

    it('exits 1 for an unknown session', async () => {
      expect((await runCli(['sessions', 'show', 'missing'], { env })).code).toBe(1);
      const call = await runCli(['tools', 'call', 'agent_hello_world', '{"name":"Ada"}', '--session', 'missing'], {
        env,
      });
      expect(call.code).toBe(1);
      expect(call.json<{ error: { code: string } }>().error.code).toBe('SESSION_NOT_FOUND');
    });

    it('refuses to create a session in an unknown mode', async () => {
      const run = await runCli(['sessions', 'create', '--mode', 'nope'], { env });
      expect(run.code).toBe(1);
      expect(run.json<{ error: { message: string } }>().error.message).toContain('Valid modes: general');
    });
  });

  it('lists the modes', async () => {
    const { modes } = (await runCli(['modes', 'list'], { env })).json<{
      modes: Array<{ key: string; isDefault: boolean }>;
    }>();
    expect(modes.map((m) => m.key)).toEqual(['general', 'ddr_authoring', 'tool_diagnostics']);
    expect(modes.filter((m) => m.isDefault).map((m) => m.key)).toEqual(['general']);
  });

  describe('configuration', () => {
    it('names the bad field of a config file and exits 2', async () => {
      const file = join(space.dir, 'bad.json');
      writeFileSync(file, JSON.stringify({ port: 'eighty', colour: 'blue' }));
      const run = await runCli(['--config', file, 'check'], { env });
      expect(run.code).toBe(2);
      const message = run.json<{ error: { message: string } }>().error.message;
      expect(message).toContain(file);
      expect(message).toContain('port must be integer');
      expect(message).toContain('unknown field "colour"');
    });

    it('refuses a package listed twice, naming it', async () => {
      const run = await runCli(['check'], {
        env: { ...env, APTIX_TOOL_PACKAGES: '@aptix/tool-samples,@aptix/tool-samples' },
      });
      expect(run.code).toBe(2);
      expect(run.json<{ error: { message: string } }>().error.message).toContain('lists "@aptix/tool-samples" twice');
    });

    it('says so when --config names a missing file', async () => {
      const run = await runCli(['--config', join(space.dir, 'missing.json'), 'check'], { env });
      expect(run.code).toBe(2);
      expect(run.json<{ error: { message: string } }>().error.message).toContain('does not exist');
    });

    it('replaces the default tool packages with the configured list', async () => {
      const file = join(space.dir, 'only-samples.json');
      writeFileSync(
        file,
        JSON.stringify({
          toolPackages: ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'],
          db: space.db,
        }),
      );
      const run = await runCli(['--config', file, 'tools', 'list'], {});
      expect(run.json<{ tools: unknown[] }>().tools).toHaveLength(8);
    });

    it('stops start-up, naming the package, the tool and the rule, when a tool breaks the contract', async () => {
      const dir = writeBrokenToolPackage(space.dir);
      const run = await runCli(['check'], {
        env: {
          ...env,
          APTIX_TOOL_PACKAGES: `${dir},@aptix/tool-samples,@aptix/tool-mode-catalog,@aptix/tool-mode-change`,
        },
      });
      expect(run.code).toBe(1);
      const message = run.json<{ error: { message: string } }>().error.message;
      expect(message).toContain('Tool package "broken-tools"');
      expect(message).toContain('"Bad-Tool"');
      expect(message).toContain('TOOL_NAME_INVALID');
      expect(message).toContain('"bad_tool"');
    });

    it('stops start-up when a tool needs a dependency nothing provides', async () => {
      const dir = join(space.dir, 'needy-tools');
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name: 'needy-tools', version: '1.0.0', type: 'module', main: 'index.js' }),
      );
      writeFileSync(
        join(dir, 'index.js'),
        `export class NeedyTool {
          static ToolName = 'needy_tool';
          static ToolUsageMetadata = 'Needs a weather client.';
          static getSchema() { return { type: 'function', name: 'needy_tool', description: 'x', parameters: { type: 'object', properties: {}, required: [] } }; }
          constructor({ weatherClient }) { this.weatherClient = weatherClient; }
          name = 'needy_tool';
          isToolFullyExecutedOnServer = true;
          async execute() { return { successful: true, result: '{}', errors: [] }; }
        }
        export const tools = [NeedyTool];`,
      );
      const run = await runCli(['check'], {
        env: {
          ...env,
          APTIX_TOOL_PACKAGES: `${dir},@aptix/tool-samples,@aptix/tool-mode-catalog,@aptix/tool-mode-change`,
        },
      });
      expect(run.code).toBe(1);
      expect(run.json<{ error: { message: string } }>().error.message).toMatch(
        /Tool "needy_tool" from "needy-tools" cannot be created: it needs "weatherClient"/,
      );
    });
  });
});

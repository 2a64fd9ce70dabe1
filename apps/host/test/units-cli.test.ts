/**
 * `aptix prompts` and `aptix resources` (issue 37): the same prompts and resources as MCP and HTTP,
 * from the command line, as one JSON document, with exit code 1 for a failed request and 2 for a
 * mistake on the command line.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, scratch } from './support.js';
import { UNIT_PACKAGES } from './unit-fixture.js';

const space = scratch();
const file = join(space.dir, 'aptix.config.json');
writeFileSync(
  file,
  JSON.stringify({
    toolPackages: UNIT_PACKAGES,
    unitTimeoutMs: 300,
  }),
);
afterAll(() => space.cleanup());
const aptix = (...args: string[]) => runCli(['--config', file, ...args], { env: { APTIX_DB: space.db } });

describe('aptix prompts', () => {
  it("lists a mode's prompts and renders one with JSON arguments", async () => {
    const listed = await aptix('prompts', 'list', '--mode', 'tool_diagnostics');
    expect(listed.code).toBe(0);
    expect(listed.json<{ mode: string; prompts: Array<{ name: string }> }>().prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining(['fixture_diagnostics_only', 'mode_tool_diagnostics']),
    );
    const got = await aptix('prompts', 'get', 'fixture_greeting', '{"name":"Ada","style":"formal"}');
    expect(got.code).toBe(0);
    expect(got.json()).toEqual({
      description: 'Asks for a greeting of someone, in a style.',
      messages: [
        { role: 'user', content: { type: 'text', text: 'Greet Ada in a formal style.' } },
        { role: 'assistant', content: { type: 'text', text: 'Understood.' } },
      ],
    });
  });

  it('fails with 2 for bad arguments and 1 for a render that hangs, saying why', async () => {
    const bad = await aptix('prompts', 'get', 'fixture_greeting', '{name: Ada}');
    expect(bad.code).toBe(2);
    expect(bad.stdout + bad.stderr).toMatch(/not valid JSON/);
    const hung = await aptix('prompts', 'get', 'fixture_hangs');
    expect(hung.code).toBe(1);
    expect(hung.stdout + hung.stderr).toMatch(/TIMEOUT|did not answer within 300 ms/);
  });
});

describe('aptix resources', () => {
  it('lists resources and templates, and reads one', async () => {
    const listed = await aptix('resources', 'list');
    expect(listed.code).toBe(0);
    const document = listed.json<{ resources: Array<{ uri: string }>; templates: Array<{ uriTemplate: string }> }>();
    expect(document.resources.map((r) => r.uri)).toContain('aptix://tools/fixture_bump/guide');
    expect(document.templates.map((t) => t.uriTemplate)).toContain('fixture://users/{id}');
    const read = await aptix('resources', 'read', 'aptix://modes');
    expect(read.code).toBe(0);
    expect(JSON.parse(read.json<{ contents: Array<{ text: string }> }>().contents[0]!.text).modes).toHaveLength(3);
    const missing = await aptix('resources', 'read', 'fixture://users/..');
    expect(missing.code).toBe(1);
    expect(missing.stdout + missing.stderr).toMatch(/RESOURCE_NOT_FOUND/);
  });
});

describe('a host refuses to start on a broken prompt or resource, naming it', () => {
  it('a prompt whose argument is not a string', async () => {
    const dir = join(space.dir, 'broken-units');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'broken-units', type: 'module', main: 'index.js' }),
    );
    writeFileSync(
      join(dir, 'index.js'),
      `export const tools = [];
export const prompts = [{ kind: 'prompt', name: 'acme_count', description: 'Counts.', args: { type: 'object', properties: { n: { type: 'integer', description: 'How many.' } } }, render: () => 'x' }];
`,
    );
    const config = join(space.dir, 'broken.json');
    writeFileSync(
      config,
      JSON.stringify({
        toolPackages: ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change', dir],
      }),
    );
    const run = await runCli(['--config', config, 'check'], { env: { APTIX_DB: space.db } });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(
      /Tool package "broken-units" has a prompt that breaks the contract \(PROMPT_ARGUMENTS_INVALID\).*'n' is of type integer, but MCP prompt arguments are strings/,
    );
  });

  it('promptModes naming a prompt no package offers, with the near name', async () => {
    const config = join(space.dir, 'typo.json');
    writeFileSync(
      config,
      JSON.stringify({
        toolPackages: UNIT_PACKAGES,
        promptModes: { general: ['fixture_greting'] },
      }),
    );
    const run = await runCli(['--config', config, 'check'], { env: { APTIX_DB: space.db } });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(
      /adds prompt "fixture_greting" to mode "general".*Did you mean "fixture_greeting"\?/,
    );
  });
});

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../index.cjs';

const pluginDir = dirname(dirname(fileURLToPath(import.meta.url)));
const workspaceRoot = dirname(dirname(pluginDir));
const runner = join(pluginDir, 'src', 'run-contract.mjs');
const fixture = 'tools/nx-plugin/test/fixtures/malformed-tool-package';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the contract target's command, exactly as the inferred target does, from the workspace root. */
function runContract(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [runner, ...args],
      { cwd: workspaceRoot, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
      },
    );
  });
}

interface Finding {
  readonly code: string;
  readonly message: string;
}
interface JsonReport {
  readonly ok: boolean;
  readonly tools: ReadonlyArray<{
    readonly tool: string;
    readonly ok: boolean;
    readonly violations: Finding[];
    readonly warnings: Finding[];
  }>;
  readonly violations: Finding[];
  readonly snapshot: { readonly status: string; readonly changed: string[] };
}

describe('the contract target on the deliberately malformed fixture package', () => {
  const snapshotBefore = readFileSync(join(workspaceRoot, fixture, 'tool-schemas.json'), 'utf8');
  let text: Run;
  let json: Run;
  let report: JsonReport;
  beforeAll(async () => {
    const asTheTarget = ['--update-command', 'npx nx run @aptix-fixtures/malformed-tool-package:contract --update'];
    [text, json] = await Promise.all([
      runContract(fixture, ...asTheTarget),
      runContract(fixture, ...asTheTarget, '--json'),
    ]);
    report = JSON.parse(json.stdout) as JsonReport;
  });

  it('fails: exit code 1, and the last line says the package breaks the contract', () => {
    expect(text.stderr).toBe('');
    expect(text.code).toBe(1);
    expect(json.code).toBe(1);
    expect(text.stdout.trim().split('\n').at(-1)).toMatch(
      /^✗ @aptix-fixtures\/malformed-tool-package breaks the tool contract \(6 tools, 16 violations, 11 warnings\) in \d+\.\d\d s$/,
    );
    expect(report.ok).toBe(false);
  });

  it('reports every violation of every tool, each under its code', () => {
    const byTool = report.tools.map((tool) => [tool.tool, tool.violations.map((finding) => finding.code)]);
    expect(byTool).toEqual([
      ['Misnamed-Tool', ['TOOL_NAME_INVALID', 'USAGE_METADATA_MISSING']],
      ['fixture_loose', ['SCHEMA_PROPERTY_DESCRIPTION_MISSING', 'STRICT_MODE_REJECTED']],
      [
        'fixture_careless',
        [
          'PROTOTYPE_POLLUTED',
          'PROTOTYPE_POLLUTED',
          'PROTOTYPE_POLLUTED',
          'PROTOTYPE_POLLUTED',
          'PROTOTYPE_POLLUTED',
          'GARBAGE_THREW',
          'GARBAGE_ACCEPTED',
        ],
      ],
      ['fixture_drifting', ['SCHEMA_DIFFERS_ACROSS_PROCESSES']],
      ['fixture_stale', []],
      ['fixture_stale', []],
    ]);
    expect(report.violations.map((finding) => finding.code)).toEqual([
      'DUPLICATE_TOOL',
      'SCHEMA_SNAPSHOT_MISMATCH',
      'SCHEMA_SNAPSHOT_MISMATCH',
      'SCHEMA_SNAPSHOT_MISMATCH',
    ]);
    expect(report.snapshot).toMatchObject({
      status: 'differs',
      changed: ['fixture_drifting', 'fixture_removed', 'fixture_stale'],
    });
  });

  it('warns, without failing on them alone, about usage-guide sections that are missing', () => {
    expect(report.tools[1]!.warnings.map((finding) => finding.message)).toEqual([
      'ToolUsageMetadata of fixture_loose does not open with "fixture_loose — Usage Guide". Fix: make that its first line.',
      'ToolUsageMetadata of fixture_loose has no "Arguments:" section. Fix: add a "Arguments:" line and its points, so the Reasoner shows every tool\'s guidance the same way.',
      'ToolUsageMetadata of fixture_loose has no "Error codes:" section. Fix: add a "Error codes:" line and its points, so the Reasoner shows every tool\'s guidance the same way.',
      'ToolUsageMetadata of fixture_loose has no "Good usage:" section. Fix: add a "Good usage:" line and its points, so the Reasoner shows every tool\'s guidance the same way.',
      'ToolUsageMetadata of fixture_loose has no "Bad usage:" section. Fix: add a "Bad usage:" line and its points, so the Reasoner shows every tool\'s guidance the same way.',
      'ToolUsageMetadata of fixture_loose never mentions its argument \'options\' (keep the guide in sync with the schema). Fix: describe it under "Arguments:".',
      'ToolUsageMetadata of fixture_loose never names the error code INVALID_ARGUMENTS, which ' +
        'TypedAgentTool returns for it (invalid arguments, an exception in run). Fix: list it under ' +
        '"Error codes:" with what it means and what to do (see "A usage guide" in docs/rules.md).',
      'ToolUsageMetadata of fixture_loose never names the error code TOOL_EXCEPTION, which ' +
        'TypedAgentTool returns for it (invalid arguments, an exception in run). Fix: list it under ' +
        '"Error codes:" with what it means and what to do (see "A usage guide" in docs/rules.md).',
    ]);
  });

  it('prints each violation in full under its tool, with the rule and the fix', () => {
    const lines = text.stdout.split('\n');
    const expected = [
      '  ✗ Misnamed-Tool     strict, 21 garbage inputs × 2 ways, ',
      '    ✗ TOOL_NAME_INVALID: Tool "Misnamed-Tool" (MisnamedTool) breaks the tool contract: ' +
        'ToolName "Misnamed-Tool" is not lowercase_snake_case (^[a-z0-9]+(_[a-z0-9]+)*$). Fix: ' +
        'rename it, for example to "misnamed_tool".',
      '    ✗ USAGE_METADATA_MISSING: Tool "Misnamed-Tool" (MisnamedTool) breaks the tool contract: ToolUsageMetadata is missing or empty;',
      '    ✗ SCHEMA_PROPERTY_DESCRIPTION_MISSING: Tool "fixture_loose" breaks the tool ' +
        "contract: parameter 'options.verbose' has no description; the model reads every field's " +
        'description, nested ones too.',
      '    ✗ STRICT_MODE_REJECTED: Tool "fixture_loose": OpenAI strict mode cannot take its ' +
        "schema (parameters: open objects ('additionalProperties' other than false) are not " +
        'supported in strict mode), and it does not declare strict: false.',
      '    ✗ PROTOTYPE_POLLUTED: Tool "fixture_careless" changed ' +
        'Object.prototype.aptixContractPolluted (added) while handling a __proto__ key (via its own ' +
        'execute()): an attacker-controlled key reached a prototype.',
      '    ✗ GARBAGE_THREW: Tool "fixture_careless" threw instead of returning a failed ' +
        'InvokeResult via its own execute(), on 19 garbage inputs (invalid JSON (cut off); text ' +
        'that is not JSON; JSON null; a JSON array; and 15 more). First: SyntaxError: Unexpected ' +
        'end of JSON input.',
      '    ✗ GARBAGE_ACCEPTED: Tool "fixture_careless" returned a successful result for arguments its schema refuses via its own execute(), on 1 garbage input (a __proto__ key beside \'text\').',
      '    ✗ SCHEMA_DIFFERS_ACROSS_PROCESSES: Tool "fixture_drifting": getSchema() gives a different schema in 2 of 2 separate Node processes (description: "Loaded by process ',
      '  ✗ DUPLICATE_TOOL: @aptix-fixtures/malformed-tool-package exports more than one tool named "fixture_stale": a host would refuse to start.',
      '  ✗ SCHEMA_SNAPSHOT_MISMATCH: The schema of fixture_stale differs from the snapshot ' +
        '(description: "Echoes the text." → "Echoes the text, now in a new way."). A schema change ' +
        'is an API change for every model using the tool',
      '  ✗ SCHEMA_SNAPSHOT_MISMATCH: The schema of fixture_removed is in the snapshot but no longer exported.',
      '  schema snapshot: differs for fixture_drifting, fixture_removed, fixture_stale',
    ];
    for (const start of expected)
      expect(
        lines.some((line) => line.startsWith(start)),
        start,
      ).toBe(true);
  });

  it('says that a schema change needs a changeset, and how to accept it', () => {
    const stale = report.violations.find((finding) => finding.message.startsWith('The schema of fixture_stale'))!;
    expect(stale.message).toContain('A schema change is an API change for every model using the tool');
    expect(stale.message).toContain('It needs a changeset (npx changeset');
    expect(stale.message).toContain(
      'run npx nx run @aptix-fixtures/malformed-tool-package:contract --update, then commit tool-schemas.json with the changeset.',
    );
  });

  it('outside Nx (the bare runner, as aptix-contract), names npx aptix-contract --update instead of a target', async () => {
    const bare = JSON.parse((await runContract(fixture, '--json')).stdout) as JsonReport;
    const stale = bare.violations.find((finding) => finding.message.startsWith('The schema of fixture_stale'))!;
    expect(stale.message).toContain(
      'run npx aptix-contract --update, then commit tool-schemas.json with the changeset.',
    );
    expect(JSON.stringify(bare)).not.toContain('nx run');
  });

  it('leaves the committed snapshot alone without --update', () => {
    expect(readFileSync(join(workspaceRoot, fixture, 'tool-schemas.json'), 'utf8')).toBe(snapshotBefore);
  });
});

describe('the runner', () => {
  it('answers --help, and refuses more than one package folder', async () => {
    const help = await runContract('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: aptix-contract \[package-dir\] \[options\]/);
    const two = await runContract('packages/tools/samples', 'packages/tools/mode-change');
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/^Usage:/);
  });

  describe('on a package without its JavaScript entry', () => {
    // A tool package as the generator writes it, before a build and after a declarations-only build.
    const dir = mkdtempSync(join(tmpdir(), 'aptix-unbuilt-'));
    const exports = {
      '.': {
        '@ws/source': './src/index.ts',
        types: './dist/index.d.ts',
        import: './dist/index.js',
        default: './dist/index.js',
      },
    };
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: '@ws/tool-weather', type: 'module', exports, aptix: { toolPackage: true } }),
    );
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('says it is not built when nothing is', async () => {
      const run = await runContract(dir);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe(
        '✗ @ws/tool-weather is not built: its entry dist/index.js does not exist. Fix: build it first (the contract target of @aptix/nx-plugin builds it by itself).\n',
      );
    });

    it('says it is built without JavaScript when only declarations are, and how to fix the build', async () => {
      mkdirSync(join(dir, 'dist'), { recursive: true });
      writeFileSync(join(dir, 'dist', 'index.d.ts'), 'export declare const tools: readonly [];\n');
      const run = await runContract(dir);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(
        '✗ @ws/tool-weather is built without JavaScript: dist/index.d.ts is there, dist/index.js ' +
          'is not, so its build emitted declarations only. Fix: set "emitDeclarationOnly": false in ' +
          'the compilerOptions of ',
      );
      expect(run.stdout).toContain(
        "tsconfig.lib.json (create-nx-workspace's tsconfig.base.json sets it to true), then build again.",
      );
      const json = JSON.parse((await runContract(dir, '--json')).stdout) as JsonReport;
      expect(json.ok).toBe(false);
      expect(json.violations.map((finding) => finding.code)).toEqual(['PACKAGE_IMPORT_FAILED']);
    });
  });
});

describe('the plugin: createNodes', () => {
  const files = [
    'packages/tools/samples/package.json',
    'packages/tool-contract/package.json',
    'apps/host/package.json',
    'tools/nx-plugin/package.json',
    `${fixture}/package.json`,
  ];
  const infer = async (
    options?: { targetName?: string },
    namedInputs: Record<string, unknown> = { default: [], production: [] },
  ) => {
    const [, createNodes] = plugin.createNodes;
    const results = await createNodes(files, options, { workspaceRoot, nxJsonConfiguration: { namedInputs } });
    return results.filter(([, result]) => Object.keys(result.projects ?? {}).length > 0);
  };

  it('is the same under its Nx 23 name and its older createNodesV2 name, over every package.json', () => {
    expect(plugin.createNodesV2).toBe(plugin.createNodes);
    expect(plugin.createNodes[0]).toBe('**/package.json');
  });

  it('gives a cacheable contract target only to workspace packages marked as tool packages', async () => {
    const results = await infer();
    expect(results.map(([file]) => file)).toEqual(['packages/tools/samples/package.json']);
    expect(results[0]![1].projects).toEqual({
      'packages/tools/samples': {
        targets: {
          contract: {
            command:
              'node tools/nx-plugin/src/run-contract.mjs packages/tools/samples --update-command "npx nx run @aptix/tool-samples:contract --update"',
            cache: true,
            dependsOn: ['build', '^build'],
            inputs: [
              'production',
              '^production',
              '{workspaceRoot}/tools/nx-plugin/src/run-contract.mjs',
              { externalDependencies: ['typebox', 'ajv'] },
            ],
            outputs: ['{projectRoot}/tool-schemas.json', '{projectRoot}/unit-schemas.json'],
            metadata: expect.objectContaining({ technologies: ['aptix'] }),
          },
        },
      },
    });
  });

  it('takes its target name from the options, and falls back to the default inputs without a production set', async () => {
    const [[, result]] = (await infer({ targetName: 'tool-contract' }, { default: [] })) as [
      [string, { projects: Record<string, { targets: Record<string, { inputs: unknown[] }> }> }],
    ];
    const targets = result.projects['packages/tools/samples']!.targets;
    expect(Object.keys(targets)).toEqual(['tool-contract']);
    expect(targets['tool-contract']!.inputs.slice(0, 2)).toEqual(['default', '^default']);
  });
});

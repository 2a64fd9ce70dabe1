import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Tree } from '@nx/devkit';
import { FsTree } from '@nx/devkit/internal';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import generator from '../src/generators/tool-package/generator.cjs';

const pluginDir = dirname(dirname(fileURLToPath(import.meta.url)));
const workspaceRoot = dirname(dirname(pluginDir));

const readJson = (tree: Tree, path: string) => JSON.parse(tree.read(path, 'utf8')!) as Record<string, any>;

describe('tool-package generator: what it writes', () => {
  let tree: Tree;
  beforeEach(() => {
    tree = createTreeWithEmptyWorkspace();
    tree.write(
      'package.json',
      JSON.stringify({
        name: 'aptix',
        private: true,
        workspaces: ['packages/*', 'packages/tools/*'],
        repository: { type: 'git', url: 'git+https://example.com/acme.git' },
      }),
    );
    tree.write('tsconfig.json', JSON.stringify({ files: [], references: [{ path: './packages/tool-contract' }] }));
    tree.write('tsconfig.base.json', JSON.stringify({ compilerOptions: { customConditions: ['@aptix/source'] } }));
    tree.write('vitest.shared.ts', 'export const sharedConfig = {};\n');
    tree.write(
      'packages/tool-contract/package.json',
      JSON.stringify({
        name: '@aptix/tool-contract',
        version: '0.3.1',
        license: 'Apache-2.0',
        peerDependencies: { typebox: '^1.5.0' },
        repository: { type: 'git', url: 'git+https://example.com/aptix.git', directory: 'packages/tool-contract' },
      }),
    );
    tree.write('packages/tool-contract/tsconfig.lib.json', '{}');
  });

  it('scaffolds a publishable package marked as a tool package', async () => {
    await generator(tree, { name: 'weather-report' });
    const dir = 'packages/tools/weather-report';
    expect(tree.children(dir).sort()).toEqual([
      'README.md',
      'package.json',
      'src',
      'tool-schemas.json',
      'tsconfig.json',
      'tsconfig.lib.json',
      'tsconfig.spec.json',
      'vitest.config.ts',
    ]);
    expect(tree.children(`${dir}/src`).sort()).toEqual([
      'index.test.ts',
      'index.ts',
      'weather-report.tool.test.ts',
      'weather-report.tool.ts',
    ]);
    expect(readJson(tree, `${dir}/package.json`)).toEqual({
      name: '@aptix/tool-weather-report',
      version: '0.1.0',
      description: 'Aptix tools: weather_report.',
      type: 'module',
      license: 'Apache-2.0',
      repository: { type: 'git', url: 'git+https://example.com/aptix.git', directory: dir },
      engines: { node: '>=20.19' },
      sideEffects: false,
      exports: {
        '.': {
          '@aptix/source': './src/index.ts',
          types: './dist/index.d.ts',
          import: './dist/index.js',
          default: './dist/index.js',
        },
        './package.json': './package.json',
      },
      main: './dist/index.js',
      types: './dist/index.d.ts',
      files: ['dist', '!dist/**/*.test.*', '!dist/**/*.tsbuildinfo', 'README.md', 'CHANGELOG.md'],
      scripts: { test: 'vitest run' },
      keywords: ['aptix', 'aptix-tool', 'llm', 'agent', 'tools', 'function-calling'],
      aptix: { toolPackage: true },
      dependencies: { '@aptix/tool-contract': '^0.3.1', typebox: '^1.5.0' },
      publishConfig: { access: 'public' },
    });
  });

  it('wires the TypeScript project references, vitest and the root tsconfig like every other package', async () => {
    await generator(tree, { name: 'weather-report' });
    const dir = 'packages/tools/weather-report';
    expect(readJson(tree, `${dir}/tsconfig.lib.json`)).toMatchObject({
      extends: '../../../tsconfig.base.json',
      references: [{ path: '../../tool-contract/tsconfig.lib.json' }],
    });
    expect(readJson(tree, `${dir}/tsconfig.spec.json`)).toMatchObject({
      extends: '../../../tsconfig.base.json',
      references: [{ path: './tsconfig.lib.json' }],
    });
    expect(tree.read(`${dir}/vitest.config.ts`, 'utf8')).toContain(
      "import { sharedConfig } from '../../../vitest.shared.js';",
    );
    expect(readJson(tree, 'tsconfig.json').references).toEqual([
      { path: './packages/tool-contract' },
      { path: './packages/tools/weather-report' },
    ]);
  });

  it('writes one tool with its schema, six usage sections and its snapshot, named after the package', async () => {
    await generator(tree, { name: 'weather-report' });
    const tool = tree.read('packages/tools/weather-report/src/weather-report.tool.ts', 'utf8')!;
    expect(tool).toContain('export class WeatherReportTool extends TypedAgentTool<typeof Args> {');
    expect(tool).toContain("static readonly ToolName = 'weather_report';");
    for (const heading of [
      'weather_report — Usage Guide',
      'Primary purpose:',
      'Rules:',
      'Arguments:',
      'Error codes:',
      'Good usage:',
      'Bad usage:',
    ])
      expect(tool).toContain(heading);
    expect(Object.keys(readJson(tree, 'packages/tools/weather-report/tool-schemas.json'))).toEqual(['weather_report']);
    expect(tree.read('packages/tools/weather-report/src/index.ts', 'utf8')).toContain(
      'export const tools = [WeatherReportTool] as const satisfies ToolList;',
    );
  });

  it('writes the tool as one defineTool call with --form function, the same name, schema and snapshot', async () => {
    await generator(tree, { name: 'weather-report', form: 'function' });
    const tool = tree.read('packages/tools/weather-report/src/weather-report.tool.ts', 'utf8')!;
    expect(tool).toContain('export const WeatherReportTool = defineTool({');
    expect(tool).toContain("name: 'weather_report',");
    expect(tool).not.toContain('TypedAgentTool');
    expect(tool.trimEnd().split('\n').length).toBeLessThanOrEqual(26);
    expect(Object.keys(readJson(tree, 'packages/tools/weather-report/tool-schemas.json'))).toEqual(['weather_report']);
    await expect(
      generator(createTreeWithEmptyWorkspace(), { name: 'other', form: 'arrow' as 'class' }),
    ).rejects.toThrow(
      '--form arrow is not a form of tool: use function (one defineTool call) or class (a TypedAgentTool subclass).',
    );
  });

  it('puts the CI workflow for users in the README', async () => {
    await generator(tree, { name: 'weather-report' });
    const readme = tree.read('packages/tools/weather-report/README.md', 'utf8')!;
    expect(readme).toContain('- run: npx nx affected -t typecheck test contract build');
    expect(readme).toContain('npx nx run @aptix/tool-weather-report:contract --update');
  });

  it('takes a directory, a package name, a tool name and a description; a directory no workspace glob covers gets one', async () => {
    await generator(tree, {
      name: 'geo',
      directory: 'libs/geo-tools',
      importPath: '@acme/geo-tools',
      toolName: 'acme_geocode',
      description: 'Geocoding for agents.',
    });
    expect(readJson(tree, 'libs/geo-tools/package.json')).toMatchObject({
      name: '@acme/geo-tools',
      description: 'Geocoding for agents.',
      repository: { directory: 'libs/geo-tools' },
    });
    expect(readJson(tree, 'libs/geo-tools/tsconfig.lib.json').references).toEqual([
      { path: '../../packages/tool-contract/tsconfig.lib.json' },
    ]);
    expect(tree.read('libs/geo-tools/src/geo.tool.ts', 'utf8')).toContain("static readonly ToolName = 'acme_geocode';");
    expect(readJson(tree, 'package.json').workspaces).toEqual(['packages/*', 'packages/tools/*', 'libs/*']);
  });

  it('leaves nx.json alone when the plugin is listed there by path, as in the Aptix repository', async () => {
    tree.write('nx.json', JSON.stringify({ plugins: ['./tools/nx-plugin'] }));
    tree.write('tools/nx-plugin/package.json', JSON.stringify({ name: '@aptix/nx-plugin' }));
    await generator(tree, { name: 'weather' });
    expect(readJson(tree, 'nx.json').plugins).toEqual(['./tools/nx-plugin']);
    expect(readJson(tree, 'package.json').workspaces).toEqual(['packages/*', 'packages/tools/*']);
  });

  it('refuses a bad name, a bad tool name and a folder that is taken', async () => {
    await expect(generator(tree, { name: 'Weather' })).rejects.toThrow(
      '"Weather" is not a valid tool package name: use kebab-case letters and digits, e.g. weather or mode-catalog.',
    );
    await expect(generator(tree, { name: 'weather', toolName: 'Weather-Tool' })).rejects.toThrow(
      /"Weather-Tool" is not a valid ToolName: it must be lowercase_snake_case/,
    );
    tree.write('packages/tools/weather/notes.md', 'taken');
    await expect(generator(tree, { name: 'weather' })).rejects.toThrow(
      'packages/tools/weather already exists and is not empty: choose another name or --directory.',
    );
    await expect(generator(tree, { name: 'weather', directory: '../outside' })).rejects.toThrow(
      /must be inside the workspace/,
    );
  });
});

describe('tool-package generator: in a workspace made by create-nx-workspace --preset=ts', () => {
  let tree: Tree;
  beforeEach(() => {
    // What `npx create-nx-workspace@23.2.1 ws --preset=ts` writes (the parts the generator reads), with the kit installed from npm.
    tree = createTreeWithEmptyWorkspace();
    tree.write(
      'package.json',
      JSON.stringify({
        name: '@ws/source',
        version: '0.0.0',
        license: 'MIT',
        private: true,
        workspaces: ['packages/*'],
      }),
    );
    tree.write(
      'tsconfig.base.json',
      JSON.stringify({
        compilerOptions: {
          composite: true,
          declarationMap: true,
          emitDeclarationOnly: true,
          module: 'nodenext',
          customConditions: ['@ws/source'],
        },
      }),
    );
    tree.write('tsconfig.json', JSON.stringify({ extends: './tsconfig.base.json', files: [], references: [] }));
    tree.write(
      'nx.json',
      JSON.stringify({
        plugins: [
          { plugin: '@nx/js/typescript', options: { build: { targetName: 'build', configName: 'tsconfig.lib.json' } } },
        ],
      }),
    );
  });

  it("writes under the folder its workspaces cover, and names the package in the workspace's scope", async () => {
    await generator(tree, { name: 'weather' });
    expect(tree.exists('packages/weather/package.json')).toBe(true);
    expect(readJson(tree, 'package.json').workspaces).toEqual(['packages/*']);
    expect(readJson(tree, 'packages/weather/package.json').name).toBe('@ws/tool-weather');
    expect(readJson(tree, 'tsconfig.json').references).toEqual([{ path: './packages/weather' }]);
  });

  it("uses the workspace's own custom condition, in the exports and in vitest", async () => {
    await generator(tree, { name: 'weather' });
    expect(readJson(tree, 'packages/weather/package.json').exports['.']).toEqual({
      '@ws/source': './src/index.ts',
      types: './dist/index.d.ts',
      import: './dist/index.js',
      default: './dist/index.js',
    });
    expect(tree.read('packages/weather/vitest.config.ts', 'utf8')).toContain(
      "conditions: ['@ws/source', 'module', 'node', 'development|production']",
    );
    expect(tree.read('packages/weather/vitest.config.ts', 'utf8')).not.toContain('@aptix/source');
  });

  it('builds JavaScript although the base emits declarations only', async () => {
    await generator(tree, { name: 'weather' });
    expect(readJson(tree, 'packages/weather/tsconfig.lib.json').compilerOptions).toMatchObject({
      emitDeclarationOnly: false,
      outDir: 'dist',
    });
    expect(readJson(tree, 'packages/weather/tsconfig.spec.json').compilerOptions.types).toEqual(['node']);
  });

  it('lists the plugin in nx.json, after the plugins already there', async () => {
    await generator(tree, { name: 'weather' });
    expect(
      readJson(tree, 'nx.json').plugins.map((plugin: string | { plugin: string }) =>
        typeof plugin === 'string' ? plugin : plugin.plugin,
      ),
    ).toEqual(['@nx/js/typescript', '@aptix/nx-plugin']);
  });

  it('adds packages/tools/* to the workspaces, when no glob names a folder of packages', async () => {
    tree.write('package.json', JSON.stringify({ name: 'acme', private: true, workspaces: ['apps/web'] }));
    await generator(tree, { name: 'weather' });
    expect(tree.exists('packages/tools/weather/package.json')).toBe(true);
    expect(readJson(tree, 'package.json').workspaces).toEqual(['apps/web', 'packages/tools/*']);
    expect(readJson(tree, 'packages/tools/weather/package.json').name).toBe('@acme/tool-weather');
  });
});

interface Run {
  readonly code: number | null;
  readonly output: string;
}

/** Runs a command in the generated package, without the environment of the vitest running this test. */
function run(cwd: string, command: string, args: readonly string[]): Promise<Run> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith('VITEST') && key !== 'NODE_OPTIONS' && key !== 'TEST',
    ),
  );
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...env, FORCE_COLOR: '0', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.each(['class', 'function'] as const)(
  'tool-package generator: the generated package (%s form) passes on its own',
  (form) => {
    // Generated inside this repository (git-ignored, so neither npm nor Nx sees a project), so the
    // package resolves the workspace's node_modules, tsconfig.base.json and vitest.shared.ts like any other.
    const tmp = join(pluginDir, '.tmp');
    mkdirSync(tmp, { recursive: true });
    const scratch = mkdtempSync(join(tmp, 'generated-'));
    const directory = join(scratch, 'contract-probe').slice(workspaceRoot.length + 1);
    const packageDir = join(workspaceRoot, directory);
    const node = process.execPath;
    const tsc = join(workspaceRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const vitest = join(workspaceRoot, 'node_modules', 'vitest', 'vitest.mjs');
    let writtenOutside: string[] = [];

    beforeAll(async () => {
      const tree = new FsTree(workspaceRoot, false);
      await generator(tree, { name: 'contract-probe', directory, form });
      const changes = tree.listChanges();
      // Only the package is written: the root tsconfig.json reference and workspaces glob are left to the real `nx g`.
      writtenOutside = changes
        .filter((change) => !change.path.startsWith(`${directory}/`))
        .map((change) => change.path);
      for (const change of changes.filter((change) => change.path.startsWith(`${directory}/`))) {
        mkdirSync(dirname(join(workspaceRoot, change.path)), { recursive: true });
        writeFileSync(join(workspaceRoot, change.path), change.content!);
      }
    });
    afterAll(() => {
      rmSync(scratch, { recursive: true, force: true });
      if (readdirSync(tmp).length === 0) rmSync(tmp, { recursive: true, force: true });
    });

    it('touches nothing else in the workspace but the root tsconfig references and, for this folder outside them, the workspaces', () => {
      expect(writtenOutside.sort()).toEqual(['package.json', 'tsconfig.json']);
    });

    it('builds', async () => {
      const build = await run(packageDir, node, [tsc, '--build', 'tsconfig.lib.json']);
      expect(build.output).toBe('');
      expect(build.code).toBe(0);
    });

    it('type-checks, tests included', async () => {
      const typecheck = await run(packageDir, node, [tsc, '--build', 'tsconfig.json', '--emitDeclarationOnly']);
      expect(typecheck.output).toBe('');
      expect(typecheck.code).toBe(0);
    });

    it('passes its tests, the contract kit suite among them', async () => {
      const test = await run(packageDir, node, [vitest, 'run', '--reporter=verbose']);
      expect(test.output).toMatch(/Tests\s+\d+ passed/);
      expect(test.output).toContain(
        '✓ src/index.test.ts > tool contract > contract_probe > answers garbage arguments with well-formed failed InvokeResults, never a throw',
      );
      expect(test.output).toContain('✓ src/index.test.ts > tool contract > matches the committed schema snapshot');
      expect(test.code).toBe(0);
    });

    it('keeps the contract, its committed schema snapshot included', async () => {
      const contract = await run(workspaceRoot, node, [join(pluginDir, 'src', 'run-contract.mjs'), directory]);
      expect(contract.output).toMatch(/^ {2}✓ contract_probe {2}strict, \d+ garbage inputs × 2 ways, \d+ ms$/m);
      expect(contract.output).toMatch(/^ {2}schema snapshot: up to date$/m);
      expect(contract.output).toMatch(
        /^✓ @aptix\/tool-contract-probe keeps the tool contract \(1 tool, 0 violations, 0 warnings\)/m,
      );
      expect(contract.code).toBe(0);
    });
  },
);

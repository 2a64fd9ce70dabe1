import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAsync } from './registry.js';
import { WORKSPACE, type Run } from './support.js';

/** What happened in the fresh Nx workspace. */
export interface NxWorkspaceOutcome {
  /** The generated package's top-level files. */
  readonly generated: string[];
  /** The targets Nx infers for it. */
  readonly targets: string[];
  /** The README's CI command after the package was added. */
  readonly affected: Run;
  /** The same command after a commit that changes the tool's schema without updating the snapshot. */
  readonly broken: Run;
}

/** The README's CI command (`npx nx affected …`), so the workspace runs exactly what the README tells users to run. */
export function readmeCiCommand(): string {
  const readme = readFileSync(join(WORKSPACE, 'README.md'), 'utf8');
  const command = /- run: (npx nx affected [^\n]+)/.exec(readme)?.[1];
  if (!command) throw new Error('The README has no `- run: npx nx affected …` CI step');
  return command;
}

/**
 * A fresh Nx workspace of the kind `create-nx-workspace --preset=ts` makes (npm workspaces, the
 * @nx/js/typescript plugin, a tsconfig.base.json), with nx 23.2.1 and @aptix/nx-plugin from the
 * registry: the generator makes a tool package, and the README's CI command checks it.
 */
export async function createNxWorkspace(dir: string, baseEnv: NodeJS.ProcessEnv): Promise<NxWorkspaceOutcome> {
  const env = { ...baseEnv, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', GIT_AUTHOR_NAME: 'e2e', GIT_AUTHOR_EMAIL: 'e2e@example.com', GIT_COMMITTER_NAME: 'e2e', GIT_COMMITTER_EMAIL: 'e2e@example.com' };
  const sh = async (script: string, options: { ok?: boolean } = {}) => {
    const result = await runAsync('bash', ['-c', `set -e\n${script}`], dir, env);
    if ((options.ok ?? true) && result.status !== 0) throw new Error(`In the Nx workspace, this failed (exit ${result.status}):\n${script}\n${result.stdout}\n${result.stderr}`);
    return result;
  };
  mkdirSync(dir, { recursive: true });
  const json = (path: string, value: unknown) => writeFileSync(join(dir, path), `${JSON.stringify(value, null, 2)}\n`);
  json('package.json', { name: 'acme-tools', version: '0.0.0', private: true, license: 'MIT', workspaces: ['packages/*', 'packages/tools/*'] });
  json('nx.json', {
    $schema: './node_modules/nx/schemas/nx-schema.json',
    defaultBase: 'main',
    namedInputs: { default: ['{projectRoot}/**/*', 'sharedGlobals'], sharedGlobals: ['{workspaceRoot}/tsconfig.base.json'], production: ['default', '!{projectRoot}/**/*.test.ts', '!{projectRoot}/vitest.config.ts', '!{projectRoot}/tsconfig.spec.json'] },
    plugins: [{ plugin: '@nx/js/typescript', options: { typecheck: { targetName: 'typecheck' }, build: { targetName: 'build', configName: 'tsconfig.lib.json' } } }, '@aptix/nx-plugin'],
    targetDefaults: { build: { cache: true, dependsOn: ['^build'] }, test: { cache: true } },
  });
  json('tsconfig.base.json', {
    compilerOptions: { target: 'es2023', lib: ['es2023'], module: 'nodenext', moduleResolution: 'nodenext', types: ['node'], customConditions: ['@aptix/source'], strict: true, skipLibCheck: true, composite: true, declaration: true, declarationMap: true, sourceMap: true, isolatedModules: true, esModuleInterop: true, resolveJsonModule: true },
  });
  json('tsconfig.json', { extends: './tsconfig.base.json', compileOnSave: false, files: [], references: [] });
  writeFileSync(join(dir, '.gitignore'), 'node_modules\ndist\nout-tsc\n.nx\n');

  await sh('npm install --save-dev nx@23.2.1 @nx/js@23.2.1 typescript@6.0.3 @types/node@^20.19.0 vitest@^4.1.12 @aptix/nx-plugin @aptix/tool-contract typebox');
  await sh('git init -q -b main && git add -A && git commit -q -m "An empty Nx workspace"');
  await sh('npx nx g @aptix/nx-plugin:tool-package weather --no-interactive');
  await sh('npm install');
  const generated = readdirSync(join(dir, 'packages', 'tools', 'weather'));
  const shown = await sh('npx nx show project @aptix/tool-weather --json');
  const targets = Object.keys((JSON.parse(shown.stdout) as { targets: Record<string, unknown> }).targets);
  await sh('git add -A && git commit -q -m "A tool package from the Aptix generator"');

  const ci = readmeCiCommand();
  const affected = await sh(`NX_BASE=HEAD~1 NX_HEAD=HEAD ${ci}`, { ok: false });
  // A schema change (the tool's description) without updating the committed snapshot.
  const tool = join(dir, 'packages', 'tools', 'weather', 'src', 'weather.tool.ts');
  writeFileSync(tool, readFileSync(tool, 'utf8').replaceAll('Echoes a text with its length in characters.', 'Echoes a text, and counts its characters.'));
  await sh('git commit -q -am "Reword the tool description"');
  const broken = await sh(`NX_BASE=HEAD~1 NX_HEAD=HEAD ${ci}`, { ok: false });
  return { generated, targets, affected, broken };
}

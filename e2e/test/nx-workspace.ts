import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { guideSteps } from './guide.js';
import { runAsync } from './registry.js';
import { WORKSPACE, type Run } from './support.js';

/** What the README's CI command did in a workspace the plugin README's block made. */
export interface NxCiOutcome {
  /** The generated package's top-level files, under packages/weather. */
  readonly generated: string[];
  /** The targets Nx infers for it. */
  readonly targets: string[];
  /** The README's CI command after the package was committed. */
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

/** The plugin README's ```sh e2e block: the commands a user runs, from create-nx-workspace to the contract target. */
export function pluginReadmeScript(): string {
  const steps = guideSteps(readFileSync(join(WORKSPACE, 'tools', 'nx-plugin', 'README.md'), 'utf8')).filter(
    (step) => step.kind === 'sh',
  );
  if (steps.length !== 1 || steps[0]!.kind !== 'sh')
    throw new Error(`tools/nx-plugin/README.md should have one \`\`\`sh e2e block, has ${steps.length}`);
  return steps[0]!.script;
}

/** What Nx and git need to run in a test: no daemon, no cloud, no terminal UI, a committer. */
export function nxEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...env,
    NX_DAEMON: 'false',
    NX_NO_CLOUD: 'true',
    NX_TUI: 'false',
    GIT_AUTHOR_NAME: 'e2e',
    GIT_AUTHOR_EMAIL: 'e2e@example.com',
    GIT_COMMITTER_NAME: 'e2e',
    GIT_COMMITTER_EMAIL: 'e2e@example.com',
  };
}

/**
 * In `root`, a workspace that create-nx-workspace made and the plugin README's block filled: the
 * README's CI command on a commit that adds everything, then on one that changes the tool's schema
 * without its snapshot.
 */
export async function checkNxCi(root: string, env: NodeJS.ProcessEnv): Promise<NxCiOutcome> {
  const sh = async (script: string, options: { ok?: boolean } = {}) => {
    const result = await runAsync('bash', ['-c', `set -e\n${script}`], root, nxEnv(env));
    if ((options.ok ?? true) && result.status !== 0)
      throw new Error(
        `In the Nx workspace, this failed (exit ${result.status}):\n${script}\n${result.stdout}\n${result.stderr}`,
      );
    return result;
  };
  const generated = readdirSync(join(root, 'packages', 'weather'));
  const shown = await sh('npx nx show project @ws/tool-weather --json');
  const targets = Object.keys((JSON.parse(shown.stdout) as { targets: Record<string, unknown> }).targets);
  await sh('git add -A && git commit -q -m "A tool package from the Aptix generator"');

  const ci = readmeCiCommand();
  const affected = await sh(`NX_BASE=HEAD~1 NX_HEAD=HEAD ${ci}`, { ok: false });
  // A schema change (the tool's description) without updating the committed snapshot.
  const tool = join(root, 'packages', 'weather', 'src', 'weather.tool.ts');
  writeFileSync(
    tool,
    readFileSync(tool, 'utf8').replaceAll(
      'Echoes a text with its length in characters.',
      'Echoes a text, and counts its characters.',
    ),
  );
  await sh('git commit -q -am "Reword the tool description"');
  const broken = await sh(`NX_BASE=HEAD~1 NX_HEAD=HEAD ${ci}`, { ok: false });
  return { generated, targets, affected, broken };
}

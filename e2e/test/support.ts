import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WORKSPACE = fileURLToPath(new URL('../..', import.meta.url));

/** A folder outside the workspace, so nothing resolves from its node_modules. */
export function outsideWorkspace(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Copies the files git tracks into `target` (a clean checkout, without node_modules or builds). */
export function copyTrackedFiles(target: string, filter: (path: string) => boolean = () => true): void {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: WORKSPACE, encoding: 'utf8' })
    .split('\0')
    .filter((path) => path !== '' && filter(path));
  for (const file of files) {
    mkdirSync(join(target, dirname(file)), { recursive: true });
    cpSync(join(WORKSPACE, file), join(target, file));
  }
}

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to completion; fails the test with its output when `expectOk` and it fails. */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  options: { env?: NodeJS.ProcessEnv; expectOk?: boolean } = {},
): Run {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...options.env },
    maxBuffer: 64 * 1024 * 1024,
  });
  const outcome = { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  if ((options.expectOk ?? true) && result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) exited ${result.status}:\n${outcome.stdout}\n${outcome.stderr}`,
    );
  }
  return outcome;
}

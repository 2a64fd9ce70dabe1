// The Node.js 22 and 24 binaries of e2e/runtimes, installed on first use from its own lockfile.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The path of the `node` binary of the given major version (22 or 24), installing it when missing. */
export function nodeBinary(major) {
  if (major !== 22 && major !== 24) throw new Error(`No Node.js ${major} runtime here: use 22 or 24.`);
  const binary = join(here, 'node_modules', `node${major}`, 'bin', 'node');
  if (!existsSync(binary)) {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--prefix', here], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return binary;
}

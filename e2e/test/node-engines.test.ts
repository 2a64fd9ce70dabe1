import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { minVersion, satisfies } from 'semver';
import { describe, expect, it } from 'vitest';
import { WORKSPACE } from './support.js';

interface LockEntry {
  readonly version?: string;
  readonly engines?: { readonly node?: string } | readonly string[];
  readonly link?: boolean;
}

const manifest = JSON.parse(readFileSync(join(WORKSPACE, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(WORKSPACE, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};
const readme = readFileSync(join(WORKSPACE, 'README.md'), 'utf8');

/** The oldest Node.js the workspace supports, from its own `engines`. */
const oldest = minVersion(manifest.engines.node)!.version;

/** Each package `npm ci` warns about on that Node (EBADENGINE), as `name@major`. */
function needingNewerNode(): string[] {
  const found = new Set<string>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    const node = Array.isArray(entry.engines) ? undefined : (entry.engines as { node?: string } | undefined)?.node;
    if (!path.includes('node_modules/') || entry.link || node === undefined || entry.version === undefined) continue;
    if (satisfies(oldest, node)) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    found.add(`${name}@${entry.version.split('.')[0]}`);
  }
  return [...found].sort();
}

/** The packages the README's table of EBADENGINE warnings names in its first column: `name@major`, or `@scope/*` for a whole scope. */
function explained(): string[] {
  const table = readme.slice(readme.indexOf('EBADENGINE'));
  const rows = table.split('\n').filter((line) => line.startsWith('| `'));
  return rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

describe("the README's Node 20 notes", () => {
  it('explain every package of the lockfile that declares a newer Node than the workspace supports', () => {
    const names = explained();
    const unexplained = needingNewerNode().filter((pkg) => {
      const name = pkg.slice(0, pkg.lastIndexOf('@'));
      return !names.includes(pkg) && !(name.startsWith('@') && names.includes(`${name.split('/')[0]}/*`));
    });
    expect(
      needingNewerNode().length,
      'the lockfile has packages that need a newer Node (else this test checks nothing)',
    ).toBeGreaterThan(0);
    expect(
      unexplained,
      `npm ci on Node ${oldest} warns EBADENGINE about these; say in README.md why each is fine there, or why not`,
    ).toEqual([]);
  });
});

import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyTrackedFiles, outsideWorkspace, run, WORKSPACE } from './support.js';

const CHANGESET = join(WORKSPACE, 'node_modules', '.bin', 'changeset');

function manifest(root: string, path: string): { version: string; dependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(join(root, path, 'package.json'), 'utf8')) as {
    version: string;
    dependencies?: Record<string, string>;
  };
}

describe('releases with changesets, on a scratch copy of the repository', () => {
  const scratch = outsideWorkspace('aptix-changesets-');
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('bumps the changed package, patch-bumps its dependants with their ranges, and writes changelogs', () => {
    // The release machinery alone: the changesets pending in the repository are left out, so only this test's one counts.
    copyTrackedFiles(
      scratch,
      (path) => path.endsWith('package.json') || path === '.changeset/config.json' || path === '.changeset/README.md',
    );
    const before = manifest(scratch, 'packages/tool-contract').version;
    const [major, minor] = before.split('.').map(Number);
    const expected = `${major}.${minor! + 1}.0`;
    writeFileSync(
      join(scratch, '.changeset', 'e2e-schema-change.md'),
      '---\n"@aptix/tool-contract": minor\n---\n\nThe registry also accepts tools declared in plain JavaScript objects.\n',
    );

    run(CHANGESET, ['version'], scratch);

    expect(manifest(scratch, 'packages/tool-contract').version).toBe(expected);
    const changelog = readFileSync(join(scratch, 'packages/tool-contract/CHANGELOG.md'), 'utf8');
    expect(changelog).toContain(`## ${expected}`);
    expect(changelog).toContain('The registry also accepts tools declared in plain JavaScript objects.');
    for (const dependant of [
      'packages/tools/samples',
      'packages/tools/mode-catalog',
      'packages/tools/mode-change',
      'packages/reasoner',
      'apps/host',
    ]) {
      const bumped = manifest(scratch, dependant);
      const original = manifest(WORKSPACE, dependant);
      const [a, b, c] = original.version.split('.').map(Number);
      expect(bumped.version, dependant).toBe(`${a}.${b}.${c! + 1}`);
      expect(bumped.dependencies?.['@aptix/tool-contract'], dependant).toBe(`^${expected}`);
      expect(existsSync(join(scratch, dependant, 'CHANGELOG.md')), dependant).toBe(true);
    }
    // A package that does not depend on the changed one keeps its version; the changeset is consumed.
    expect(manifest(scratch, 'packages/agent-sessions').version).toBe(
      manifest(WORKSPACE, 'packages/agent-sessions').version,
    );
    expect(existsSync(join(scratch, '.changeset', 'e2e-schema-change.md'))).toBe(false);
  });
});

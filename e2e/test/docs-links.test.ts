import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORKSPACE } from './support.js';

const DOCS = [
  'README.md',
  ...readdirSync(join(WORKSPACE, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe.each(DOCS)('the links of %s', (doc) => {
  const text = readFileSync(join(WORKSPACE, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
  it('point at files and headings that exist', () => {
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!) || target!.startsWith('#')) continue;
      const [path, hash] = target!.split('#') as [string, string | undefined];
      const file = join(WORKSPACE, dirname(doc), path);
      if (!existsSync(file)) broken.push(`${target} (no such file)`);
      else if (hash !== undefined && file.endsWith('.md')) {
        const headings = [...readFileSync(file, 'utf8').matchAll(/^#+ (.+)$/gm)].map((match) => anchor(match[1]!));
        if (!headings.includes(hash)) broken.push(`${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('docs/rules.md', () => {
  it('states the usage-guide sections under the headings the contract kit looks for', () => {
    const rules = readFileSync(join(WORKSPACE, 'docs', 'rules.md'), 'utf8');
    for (const heading of ['Primary purpose:', 'Rules:', 'Arguments:', 'Error codes:', 'Good usage:', 'Bad usage:'])
      expect(rules).toContain(`| \`${heading}\` |`);
  });
});

describe('one name for one setting across the docs', () => {
  it('the session-store example reads APTIX_DB, the variable the host reads', () => {
    const readme = readFileSync(join(WORKSPACE, 'packages', 'agent-sessions', 'README.md'), 'utf8');
    expect(readme).toContain('process.env.APTIX_DB');
    expect(readme).not.toContain('APTIX_SESSIONS_URL');
  });

  it('every CI example sets up the same Node version', () => {
    const versions = DOCS.flatMap((doc) =>
      [...readFileSync(join(WORKSPACE, doc), 'utf8').matchAll(/node-version:\s*(\d+)/g)].map((match) => match[1]),
    );
    expect(new Set(versions)).toEqual(new Set(['22']));
  });
});

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SessionStoreErrorCode } from '../src/errors.js';
import * as root from '../src/index.js';
import * as open from '../src/open.js';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const DRIVERS = ['better-sqlite3', 'pg'];

/** Every module specifier a file imports statically (`import … from`, `export … from`, `import '…'`). */
function staticImports(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm)].map(
    (match) => match[1]!,
  );
}

/** The files a module loads statically, following relative imports, with every bare specifier met. */
function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else packages.add(specifier);
    }
  };
  visit(resolve(SRC, entry));
  return { files, packages };
}

describe('entry points', () => {
  it('the root entry loads no database driver and no store', () => {
    const { files, packages } = staticGraph('index.ts');
    for (const driver of DRIVERS) expect(packages).not.toContain(driver);
    expect([...files].map((file) => file.slice(SRC.length)).sort()).toEqual([
      'approvals.ts',
      'audit.ts',
      'errors.ts',
      'index.ts',
      'tasks.ts',
      'types.ts',
    ]);
  });

  it('./open loads the drivers only when a store is opened', () => {
    const { files, packages } = staticGraph('open.ts');
    for (const driver of DRIVERS) expect(packages).not.toContain(driver);
    expect([...files].some((file) => file.includes('/sqlite/') || file.includes('/postgres/'))).toBe(false);
    const source = readFileSync(resolve(SRC, 'open.ts'), 'utf8');
    expect(source).toContain("import('./sqlite/index.js')");
    expect(source).toContain("import('./postgres/index.js')");
  });

  it('each store subpath loads only its own driver', () => {
    expect(staticGraph('sqlite/index.ts').packages).toContain('better-sqlite3');
    expect(staticGraph('sqlite/index.ts').packages).not.toContain('pg');
    expect(staticGraph('postgres/index.ts').packages).toContain('pg');
    expect(staticGraph('postgres/index.ts').packages).not.toContain('better-sqlite3');
  });

  it('exports exactly the documented runtime values', () => {
    expect(Object.keys(root).sort()).toEqual([
      'APPROVAL_NOTE_MAX_LENGTH',
      'AUDIT_KINDS',
      'AUDIT_OUTCOME_OK',
      'AUDIT_PAGE_MAX',
      'MCP_TASK_VALUE_MAX_BYTES',
      'OPEN_TASK_STATUSES',
      'SessionStoreError',
      'SessionStoreErrorCode',
    ]);
    expect(Object.keys(open).sort()).toEqual([
      'DEFAULT_SESSION_STORE_URL',
      'explainDriverImportFailure',
      'openSessionStore',
      'parseSessionStoreUrl',
    ]);
  });

  it('package.json maps every subpath to its source and its build', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const expected = { '.': 'index', './sqlite': 'sqlite/index', './postgres': 'postgres/index', './open': 'open' };
    for (const [subpath, stem] of Object.entries(expected)) {
      expect(manifest.exports[subpath]).toEqual({
        '@aptix/source': `./src/${stem}.ts`,
        types: `./dist/${stem}.d.ts`,
        import: `./dist/${stem}.js`,
        default: `./dist/${stem}.js`,
      });
    }
  });
});

describe('SessionStoreErrorCode', () => {
  it('spells every code as its own key, once', () => {
    for (const [key, value] of Object.entries(SessionStoreErrorCode)) expect(value).toBe(key);
    expect(new Set(Object.values(SessionStoreErrorCode)).size).toBe(Object.keys(SessionStoreErrorCode).length);
  });

  it("includes setSessionMode's refusal codes", () => {
    expect(Object.values(SessionStoreErrorCode)).toEqual(expect.arrayContaining(['UNKNOWN_MODE', 'SESSION_NOT_FOUND']));
  });
});

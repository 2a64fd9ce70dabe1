/**
 * The SQLite store's driver per Node: better-sqlite3 13 where Node-API 10 is (Node 22.14 and later),
 * better-sqlite3 12 before, and a clear refusal instead of a crash when only 13 is installed on a Node
 * without Node-API 10. Each branch is asserted on the Node that takes it: CI runs this on 20, 22 and 24.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Database, SQLITE_DRIVER, SqliteError } from '../src/sqlite/driver.js';
import { SqliteDatabase, SQLITE_DRIVER as PUBLIC_DRIVER } from '../src/sqlite/index.js';
import { PACKAGE_ROOT } from './fixtures/child.js';

const nodeApi10 = Number(process.versions.napi) >= 10;
const require = createRequire(import.meta.url);
const root = mkdtempSync(join(tmpdir(), 'aptix-sqlite-driver-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * Loads a copy of the driver module in a child process whose only node_modules holds `installed`
 * (name → the folder of an installed package), and prints what it loaded or how it failed.
 */
function loadWith(installed: Record<string, string>): {
  driver?: { package: string; version: string };
  error?: { code: unknown; message: string };
  stderr: string;
} {
  const dir = mkdtempSync(join(root, 'tree-'));
  mkdirSync(join(dir, 'src', 'sqlite'), { recursive: true });
  copyFileSync(join(PACKAGE_ROOT, 'src', 'errors.ts'), join(dir, 'src', 'errors.ts'));
  copyFileSync(join(PACKAGE_ROOT, 'src', 'sqlite', 'driver.ts'), join(dir, 'src', 'sqlite', 'driver.ts'));
  mkdirSync(join(dir, 'node_modules'));
  for (const [name, folder] of Object.entries(installed)) symlinkSync(folder, join(dir, 'node_modules', name), 'dir');
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  writeFileSync(
    join(dir, 'probe.ts'),
    [
      "import('./src/sqlite/driver.ts').then(",
      '  ({ Database, SQLITE_DRIVER }) => {',
      "    new Database(':memory:').prepare('SELECT 1').get();",
      '    console.log(JSON.stringify({ driver: SQLITE_DRIVER }));',
      '  },',
      '  (error) => console.log(JSON.stringify({ error: { code: error.code, message: error.message } })),',
      ');',
    ].join('\n'),
  );
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(dir, 'probe.ts')], {
    cwd: PACKAGE_ROOT,
    encoding: 'utf8',
  });
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  expect(last, `the probe printed nothing: ${run.stderr}`).toMatch(/^\{/);
  return { ...(JSON.parse(last) as object), stderr: run.stderr };
}

const folderOf = (name: string) => realpathSync(join(require.resolve(`${name}/package.json`), '..'));

describe("the SQLite store's driver", () => {
  it(`is better-sqlite3 ${nodeApi10 ? '13 on this Node (Node-API 10)' : `12 on this Node (Node-API ${process.versions.napi})`}`, () => {
    expect(SQLITE_DRIVER.package).toBe(nodeApi10 ? 'better-sqlite3-13' : 'better-sqlite3');
    expect(SQLITE_DRIVER.version.split('.')[0]).toBe(nodeApi10 ? '13' : '12');
    expect(PUBLIC_DRIVER).toBe(SQLITE_DRIVER);
    expect(SqliteDatabase).toBe(Database);
  });

  it("raises its errors as the SqliteError the store's busy and constraint checks match", () => {
    const db = new Database(':memory:');
    try {
      expect(() => db.exec('SELECT * FROM no_such_table')).toThrow(SqliteError);
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
      db.prepare('INSERT INTO t (id) VALUES (1)').run();
      let caught: unknown;
      try {
        db.prepare('INSERT INTO t (id) VALUES (1)').run();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(SqliteError);
      expect((caught as InstanceType<typeof SqliteError>).code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
    } finally {
      db.close();
    }
  });

  it(
    nodeApi10
      ? 'falls back to the peer dependency when the optional 13 alias is not installed'
      : 'refuses better-sqlite3 13 installed as the peer dependency, with the fix, instead of crashing',
    () => {
      const outcome = loadWith({ 'better-sqlite3': folderOf('better-sqlite3-13') });
      if (nodeApi10) {
        expect(outcome.driver, outcome.stderr).toMatchObject({ package: 'better-sqlite3' });
        expect(outcome.driver?.version).toMatch(/^13\./);
      } else {
        expect(outcome.error?.code, outcome.stderr).toBe('DRIVER_MISSING');
        expect(outcome.error?.message).toContain(`Node.js ${process.version} has Node-API ${process.versions.napi}`);
        expect(outcome.error?.message).toContain('npm install better-sqlite3@^12.11.1');
      }
    },
  );

  it('names the missing package when neither is installed', () => {
    const outcome = loadWith({});
    expect(outcome.error?.code, outcome.stderr).toBe('MODULE_NOT_FOUND');
    expect(outcome.error?.message).toContain("'better-sqlite3'");
  });
});

import { describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../postgres/migrations.js';
import { SQLITE_MIGRATIONS } from '../sqlite/migrations.js';
import { assertMigrationSequence, pendingMigrations } from './migrations.js';

const known = [
  { version: 1, name: 'one' },
  { version: 2, name: 'two' },
  { version: 3, name: 'three' },
];

describe('pendingMigrations', () => {
  it('returns the steps the database has not recorded, in order', () => {
    expect(pendingMigrations('db', [], known).map((m) => m.version)).toEqual([1, 2, 3]);
    expect(pendingMigrations('db', [1], known).map((m) => m.version)).toEqual([2, 3]);
    expect(pendingMigrations('db', [1, 2, 3], known)).toEqual([]);
  });

  it('refuses a database a newer version has migrated', () => {
    expect(() => pendingMigrations('SQLite database /x.db', [1, 2, 3, 4], known)).toThrow(
      expect.objectContaining({
        code: 'SCHEMA_TOO_NEW',
        message: expect.stringContaining('The SQLite database /x.db is at schema version 4'),
      }),
    );
  });
});

describe('assertMigrationSequence', () => {
  it('accepts 1..n and rejects gaps and disorder', () => {
    expect(() => assertMigrationSequence('test', known)).not.toThrow();
    expect(() => assertMigrationSequence('test', [known[0]!, known[2]!])).toThrow(
      /"three" has version 3 at position 2/,
    );
    expect(() => assertMigrationSequence('test', [known[1]!, known[0]!])).toThrow(/without gaps/);
  });

  it('both stores have the same steps', () => {
    expect(SQLITE_MIGRATIONS.map(({ version, name }) => ({ version, name }))).toEqual(
      POSTGRES_MIGRATIONS.map(({ version, name }) => ({ version, name })),
    );
  });
});

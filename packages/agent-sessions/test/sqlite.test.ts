import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSessionStore } from '../src/open.js';
import { Database } from '../src/sqlite/driver.js';
import { openSqliteSessionStore, SqliteSessionStore } from '../src/sqlite/index.js';
import { SQLITE_MIGRATIONS } from '../src/sqlite/migrations.js';
import { writeSqliteVersion1 } from './fixtures/sqlite-version1.js';
import { fixedModes } from './fixtures/modes.js';
import { describeApprovalStore } from './approvals.suite.js';
import { describeTaskStore } from './tasks.suite.js';
import { describeAuditStore } from './audit.suite.js';
import { describeSessionStoreLifecycle } from './session-store-lifecycle.suite.js';
import { describeSessionStoreLimits } from './session-store-limits.suite.js';
import { describeSessionStore, type SessionStoreHarness, type TestDatabase } from './session-store.suite.js';

const root = mkdtempSync(join(tmpdir(), 'aptix-agent-sessions-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let databases = 0;

function withDatabase<T>(filename: string, read: (db: BetterSqlite3.Database) => T): T {
  const db = new Database(filename, { fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** Runs the released steps after version 1 up to `version`, as those releases did (released steps are frozen). */
function applyReleasedSteps(db: BetterSqlite3.Database, version: number): void {
  for (const step of SQLITE_MIGRATIONS.filter((m) => m.version > 1 && m.version <= version)) {
    db.exec(step.sql);
    db.prepare('INSERT INTO agent_sessions_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      step.version,
      step.name,
      new Date().toISOString(),
    );
  }
}

const harness: SessionStoreHarness = {
  async createDatabase(): Promise<TestDatabase> {
    // A folder that does not exist yet: the store creates it.
    const filename = join(root, `run-${++databases}`, 'sessions.db');
    const database: TestDatabase = {
      url: `sqlite:${filename}`,
      options: {},
      async writeVersion1(fixture) {
        mkdirSync(dirname(filename), { recursive: true });
        writeSqliteVersion1(filename, fixture);
      },
      async writeVersion6(fixture) {
        await database.writeVersion1(fixture);
        withDatabase(filename, (db) => db.transaction(() => applyReleasedSteps(db, 6))());
      },
      async appliedMigrations() {
        return withDatabase(filename, (db) =>
          db
            .prepare<[], { version: number }>('SELECT version FROM agent_sessions_schema_migrations ORDER BY version')
            .all()
            .map((row) => row.version),
        );
      },
      async recordMigration(version, name) {
        withDatabase(filename, (db) =>
          db
            .prepare('INSERT INTO agent_sessions_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
            .run(version, name, new Date().toISOString()),
        );
      },
    };
    return database;
  },
  async dispose() {},
};

describeSessionStore('SQLite session store', harness);
describeApprovalStore('SQLite session store', harness);
describeTaskStore('SQLite session store', harness);
describeAuditStore('SQLite session store', harness);
describeSessionStoreLimits('SQLite session store', harness);
describeSessionStoreLifecycle('SQLite session store', harness);

describe('SQLite specifics', () => {
  it('creates the file and its folders on first use, in WAL mode', async () => {
    const filename = join(root, 'specifics', 'a', 'b', 'aptix.db');
    expect(existsSync(filename)).toBe(false);
    const store = await openSqliteSessionStore({ filename, modes: fixedModes() });
    try {
      expect(store.filename).toBe(filename);
      expect(store.schemaVersion).toBe(9);
      expect(existsSync(filename)).toBe(true);
      expect(withDatabase(filename, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
    } finally {
      await store.close();
    }
  });

  it('enforces foreign keys on its connection', async () => {
    const filename = join(root, 'specifics', 'fk.db');
    const store = await openSqliteSessionStore({ filename, modes: fixedModes() });
    try {
      await expect(store.bindMcpSession('mcp', 'missing')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
      expect(
        withDatabase(filename, (db) => db.prepare('SELECT count(*) AS n FROM agent_mcp_session_bindings').get()),
      ).toEqual({ n: 0 });
    } finally {
      await store.close();
    }
  });

  it('opens a private in-memory database from sqlite::memory:', async () => {
    const store = await openSessionStore('sqlite::memory:', { modes: fixedModes() });
    try {
      expect(store).toBeInstanceOf(SqliteSessionStore);
      expect((store as SqliteSessionStore).filename).toBe(':memory:');
      const session = await store.createSession({});
      expect(await store.getSession(session.id)).toEqual(session);
    } finally {
      await store.close();
    }
    const other = await openSessionStore('sqlite::memory:', { modes: fixedModes() });
    try {
      expect(await other.getMcpBinding('anything')).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('reports the migrations it applies through the logger', async () => {
    const entries: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const record = (level: string) => (fields: Record<string, unknown>, message: string) =>
      entries.push({ level, fields, message });
    const logger = { info: record('info'), warn: record('warn'), error: record('error') };
    const filename = join(root, 'specifics', 'logged.db');
    await (await openSqliteSessionStore({ filename, modes: fixedModes(), logger })).close();
    await (await openSqliteSessionStore({ filename, modes: fixedModes(), logger })).close();
    expect(entries).toEqual([
      {
        level: 'info',
        fields: { store: 'sqlite', filename, applied: [1, 2, 3, 4, 5, 6, 7, 8, 9] },
        message: 'Migrated the session database to schema version 9.',
      },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { SessionStoreError } from '../src/errors.js';
import {
  DEFAULT_SESSION_STORE_URL,
  explainDriverImportFailure,
  openSessionStore,
  parseSessionStoreUrl,
} from '../src/open.js';
import { fixedModes } from './fixtures/modes.js';

describe('parseSessionStoreUrl', () => {
  it('resolves sqlite: paths against the working directory it is given', () => {
    expect(parseSessionStoreUrl(DEFAULT_SESSION_STORE_URL, '/srv/app')).toEqual({
      kind: 'sqlite',
      filename: '/srv/app/.aptix/aptix.db',
    });
    expect(parseSessionStoreUrl('sqlite:data/sessions.db', '/srv/app')).toEqual({
      kind: 'sqlite',
      filename: '/srv/app/data/sessions.db',
    });
    expect(parseSessionStoreUrl('sqlite:/var/lib/aptix/aptix.db', '/srv/app')).toEqual({
      kind: 'sqlite',
      filename: '/var/lib/aptix/aptix.db',
    });
    expect(parseSessionStoreUrl('sqlite::memory:')).toEqual({ kind: 'sqlite', filename: ':memory:' });
  });

  it('resolves relative sqlite: paths against process.cwd() by default', () => {
    expect(parseSessionStoreUrl('sqlite:./x.db')).toEqual({ kind: 'sqlite', filename: `${process.cwd()}/x.db` });
  });

  it('passes postgres:// and postgresql:// URLs through whole', () => {
    const url = 'postgres://aptix:secret@db.internal:5432/aptix?sslmode=require';
    expect(parseSessionStoreUrl(url)).toEqual({ kind: 'postgres', connectionString: url });
    expect(parseSessionStoreUrl('postgresql://postgres@127.0.0.1/test')).toEqual({
      kind: 'postgres',
      connectionString: 'postgresql://postgres@127.0.0.1/test',
    });
  });

  it('refuses an unknown scheme, naming the URL without its password and the accepted forms', () => {
    let error: unknown;
    try {
      parseSessionStoreUrl('mysql://root:hunter2@localhost/aptix');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SessionStoreError);
    expect(error).toMatchObject({ code: 'UNSUPPORTED_URL' });
    const { message } = error as SessionStoreError;
    expect(message).toContain('mysql://root:***@localhost/aptix');
    expect(message).not.toContain('hunter2');
    for (const form of ['sqlite:<path>', 'sqlite::memory:', 'postgres://', 'postgresql://'])
      expect(message).toContain(form);
  });

  it('refuses sqlite: URLs that name no file, and empty URLs', () => {
    expect(() => parseSessionStoreUrl('sqlite:')).toThrow(/names no SQLite file/);
    expect(() => parseSessionStoreUrl('sqlite:///tmp/a.db')).toThrow(/sqlite:\/var\/lib\/aptix\/aptix\.db/);
    expect(() => parseSessionStoreUrl('')).toThrow(/URL is empty/);
    expect(() => parseSessionStoreUrl('./aptix.db')).toThrow(SessionStoreError);
  });
});

describe('openSessionStore', () => {
  it('refuses a sqlite: URL whose path starts with a scheme again, saying what to write instead', () => {
    expect(() => parseSessionStoreUrl('sqlite:sqlite:/tmp/a.db', '/srv/app')).toThrow(
      'Session store URL "sqlite:sqlite:/tmp/a.db" has a second scheme ("sqlite:") after "sqlite:": the path must follow "sqlite:" directly. Fix: write sqlite:/tmp/a.db.',
    );
    expect(() => parseSessionStoreUrl('sqlite:file:./a.db')).toThrow(
      /second scheme \("file:"\).*Fix: write sqlite:\.\/a\.db\./,
    );
    expect(() => parseSessionStoreUrl('sqlite:postgres://u:secret@db/x')).toThrow(
      'Session store URL "sqlite:postgres://u:***@db/x" has a second scheme ("postgres:") after ' +
        '"sqlite:": the path must follow "sqlite:" directly. Fix: for PostgreSQL, give the ' +
        'postgres:// URL alone, without "sqlite:" before it.',
    );
    // A file whose name merely contains a colon stays a file.
    expect(parseSessionStoreUrl('sqlite:./a:b.db', '/srv/app')).toEqual({
      kind: 'sqlite',
      filename: '/srv/app/a:b.db',
    });
  });

  it('rejects an unknown scheme before loading any driver', async () => {
    await expect(openSessionStore('redis://localhost', { modes: fixedModes() })).rejects.toMatchObject({
      code: 'UNSUPPORTED_URL',
    });
  });
});

describe('explainDriverImportFailure', () => {
  it('turns a missing optional driver into install advice', () => {
    const missing = Object.assign(
      new Error(
        "Cannot find package 'pg' imported from /app/node_modules/@aptix/agent-sessions/dist/postgres/index.js",
      ),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    const explained = explainDriverImportFailure(missing, 'pg', '^8.23.1');
    expect(explained).toBeInstanceOf(SessionStoreError);
    expect(explained).toMatchObject({
      code: 'DRIVER_MISSING',
      cause: missing,
      message: expect.stringContaining('npm install pg@^8.23.1'),
    });
  });

  it('passes any other failure through unchanged', () => {
    const other = Object.assign(new Error("Cannot find package 'left-pad'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const crash = new Error('boom');
    expect(explainDriverImportFailure(other, 'pg', '^8.23.1')).toBe(other);
    expect(explainDriverImportFailure(crash, 'better-sqlite3', '^12.11.1')).toBe(crash);
  });
});

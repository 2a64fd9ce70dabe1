/**
 * The better-sqlite3 the SQLite store runs on in this process, chosen once, when the store's module loads:
 *
 * - better-sqlite3 13 (this package's optional dependency `better-sqlite3-13`, an npm alias) where the
 *   running Node has Node-API 10: Node 22.14 and later. 13 is a Node-API addon with prebuilt binaries
 *   in its npm package (nothing to compile), built for Node-API 10.
 * - better-sqlite3 12 (the optional peer dependency `better-sqlite3`) on older Node, Node 20 above all:
 *   it has Node-API 9, and 13's binaries crash the process there (a segmentation fault, not an error).
 *
 * Why not 12 everywhere: on Node 24.19 and later, 12 aborts the process ("Assertion failed: (env) !=
 * nullptr" in Statement::~Statement) when a statement is garbage-collected outside JavaScript, at exit
 * or in a collection between calls (WiseLibs/better-sqlite3 #1515, closed without a fix). 13 does not.
 *
 * Both have the same API (13 moved the addon to Node-API and kept the JavaScript face), so the store's
 * code and types are written against one, `better-sqlite3`'s. Everything in this process that opens
 * the store's files opens them with {@link Database}: two copies of SQLite in one process break each
 * other's POSIX locks on a shared file (closing one's descriptor drops the other's locks).
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { SessionStoreError } from '../errors.js';

const require = createRequire(import.meta.url);

/** The Node-API version better-sqlite3 13's prebuilt binaries need (they are built with NAPI_VERSION=10). */
const NODE_API_OF_13 = 10;

/** Which package the store runs on here, and its version: for logs and diagnostics. */
export interface SqliteDriver {
  /** `better-sqlite3-13` (the alias of 13) or `better-sqlite3` (the peer dependency). */
  readonly package: 'better-sqlite3-13' | 'better-sqlite3';
  readonly version: string;
}

function isMissing(error: unknown, name: string): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === 'MODULE_NOT_FOUND' && error instanceof Error && error.message.includes(`'${name}'`);
}

function versionOf(name: SqliteDriver['package']): string {
  return (require(`${name}/package.json`) as { version: string }).version;
}

function load(): { Database: typeof BetterSqlite3; driver: SqliteDriver } {
  const nodeApi = Number(process.versions.napi);
  if (nodeApi >= NODE_API_OF_13) {
    try {
      const Database = require('better-sqlite3-13') as typeof BetterSqlite3;
      return { Database, driver: { package: 'better-sqlite3-13', version: versionOf('better-sqlite3-13') } };
    } catch (error) {
      // Installed without optional dependencies (npm --omit=optional): the peer dependency serves, 12 or 13.
      if (!isMissing(error, 'better-sqlite3-13')) throw error;
    }
  }
  let version: string;
  try {
    version = versionOf('better-sqlite3');
  } catch {
    // Not installed: let require name the missing package, which openSessionStore turns into advice (DRIVER_MISSING).
    return {
      Database: require('better-sqlite3') as typeof BetterSqlite3,
      driver: { package: 'better-sqlite3', version: '' },
    };
  }
  if (Number(version.split('.')[0]) >= 13 && nodeApi < NODE_API_OF_13) {
    throw new SessionStoreError(
      'DRIVER_MISSING',
      `better-sqlite3 ${version} needs Node-API ${NODE_API_OF_13} (Node.js 22.14 or later), and Node.js ${process.version} has Node-API ${process.versions.napi}: ` +
        'loading it would crash this process. On this Node, install better-sqlite3 12 (npm install better-sqlite3@^12.11.1), or run Node.js 22 or later.',
    );
  }
  return {
    Database: require('better-sqlite3') as typeof BetterSqlite3,
    driver: { package: 'better-sqlite3', version },
  };
}

const loaded = load();

/** better-sqlite3's `Database` class, of the package chosen for this Node (see the module's comment). */
export const Database: typeof BetterSqlite3 = loaded.Database;

/** The class of the errors SQLite raises through {@link Database}: match with `instanceof` against this one, not another copy's. */
export const SqliteError: typeof BetterSqlite3.SqliteError = loaded.Database.SqliteError;

/** The package and version {@link Database} comes from. */
export const SQLITE_DRIVER: SqliteDriver = loaded.driver;

/**
 * @aptix/agent-sessions/open: pick a session store by URL. Everything exported here is public API.
 * The drivers are imported only when a store of their kind is opened, so a host that uses SQLite never
 * loads `pg`, and the reverse.
 */
import { resolve } from 'node:path';
import { SessionStoreError } from './errors.js';
import type {
  AgentSessionStore,
  ModeDirectory,
  PostgresTimeouts,
  SessionStoreLimits,
  SessionStoreLogger,
} from './types.js';

/** The store a host uses when it is given no URL: a SQLite file under the working directory. */
export const DEFAULT_SESSION_STORE_URL = 'sqlite:./.aptix/aptix.db';

/** What a session store URL names. */
export type SessionStoreLocation =
  | { readonly kind: 'sqlite'; /** Absolute path, or `:memory:`. */ readonly filename: string }
  | { readonly kind: 'postgres'; readonly connectionString: string };

export interface OpenSessionStoreOptions {
  /** The catalog: which modes exist and which one new sessions start in. */
  readonly modes: ModeDirectory;
  readonly logger?: SessionStoreLogger;
  /** Bounds on the strings a store persists and the history pages it returns (both stores). */
  readonly limits?: SessionStoreLimits;
  /** Used for `sqlite:` URLs only: how long a call waits for another process's lock (default 5000 ms, without blocking). */
  readonly sqlite?: {
    readonly busyTimeoutMs?: number;
    /** Where audit batches are written: on a thread of their own (`worker`, the default) or on the store's connection (`inline`). */
    readonly auditWriter?: 'worker' | 'inline';
  };
  /** Used for `postgres:` URLs only: the schema holding the tables (default `public`), the pool size (default 10) and the time-outs. */
  readonly postgres?: { readonly schema?: string; readonly poolSize?: number; readonly timeouts?: PostgresTimeouts };
}

const ACCEPTED_FORMS =
  'sqlite:<path> (relative to the working directory, e.g. sqlite:./.aptix/aptix.db), sqlite::memory:, ' +
  'or postgres://user:password@host:5432/database (postgresql:// also works)';

/** The URL for messages, without its password. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return url;
  }
}

/**
 * Reads a session store URL. `sqlite:` paths are resolved against `cwd` (default: the working directory).
 * @example parseSessionStoreUrl('sqlite:./.aptix/aptix.db', '/srv/app') // { kind: 'sqlite', filename: '/srv/app/.aptix/aptix.db' }
 */
export function parseSessionStoreUrl(url: string, cwd: string = process.cwd()): SessionStoreLocation {
  if (typeof url !== 'string' || url.trim() === '') {
    throw new SessionStoreError('UNSUPPORTED_URL', `The session store URL is empty. Use ${ACCEPTED_FORMS}.`);
  }
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === ':memory:') return { kind: 'sqlite', filename: ':memory:' };
    if (path === '' || path.startsWith('//')) {
      throw new SessionStoreError(
        'UNSUPPORTED_URL',
        `Session store URL "${url}" names no SQLite file: write the path straight after "sqlite:", e.g. sqlite:./.aptix/aptix.db or sqlite:/var/lib/aptix/aptix.db. Accepted forms: ${ACCEPTED_FORMS}.`,
      );
    }
    const scheme = /^(sqlite|postgres|postgresql|file):/i.exec(path);
    if (scheme !== null) {
      // "sqlite:sqlite:/tmp/a.db" would otherwise create a folder named "sqlite:" under the working directory.
      throw new SessionStoreError(
        'UNSUPPORTED_URL',
        `Session store URL "sqlite:${redact(path)}" has a second scheme ("${scheme[0]}") after "sqlite:": the path must follow "sqlite:" directly. ` +
          (/^postgres/i.test(scheme[1]!)
            ? 'Fix: for PostgreSQL, give the postgres:// URL alone, without "sqlite:" before it.'
            : `Fix: write sqlite:${path.slice(scheme[0].length)}.`),
      );
    }
    return { kind: 'sqlite', filename: resolve(cwd, path) };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://'))
    return { kind: 'postgres', connectionString: url };
  throw new SessionStoreError(
    'UNSUPPORTED_URL',
    `Unsupported session store URL "${redact(url)}". Use ${ACCEPTED_FORMS}.`,
  );
}

/**
 * Turns the failure to load a store's module into advice when the cause is its missing driver, an
 * optional peer dependency of this package. Other failures pass through unchanged.
 */
export function explainDriverImportFailure(error: unknown, driver: 'better-sqlite3' | 'pg', range: string): unknown {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const message = error instanceof Error ? error.message : '';
  if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(`'${driver}'`)) {
    return new SessionStoreError(
      'DRIVER_MISSING',
      `This session store URL needs ${driver}, an optional peer dependency of @aptix/agent-sessions that is not installed. Install it in the host: npm install ${driver}@${range}`,
      { cause: error },
    );
  }
  return error;
}

/**
 * Opens the session store a URL names, applying pending schema migrations, and loading only that
 * store's driver. The caller closes the store.
 * @example
 * const store = await openSessionStore(process.env.APTIX_DB ?? DEFAULT_SESSION_STORE_URL, { modes: catalog });
 * const session = await store.createSession({ org: 'acme', user: 'kevin' });
 */
export async function openSessionStore(url: string, options: OpenSessionStoreOptions): Promise<AgentSessionStore> {
  const location = parseSessionStoreUrl(url);
  if (location.kind === 'sqlite') {
    const { openSqliteSessionStore } = await import('./sqlite/index.js').catch((error: unknown) => {
      // The release that runs on this Node (sqlite/driver.ts): 13 where Node has Node-API 10, 12 before it.
      throw explainDriverImportFailure(
        error,
        'better-sqlite3',
        Number(process.versions.napi) >= 10 ? '^13.2.0' : '^12.11.1',
      );
    });
    return openSqliteSessionStore({
      filename: location.filename,
      modes: options.modes,
      logger: options.logger,
      busyTimeoutMs: options.sqlite?.busyTimeoutMs,
      auditWriter: options.sqlite?.auditWriter,
      limits: options.limits,
    });
  }
  const { openPostgresSessionStore } = await import('./postgres/index.js').catch((error: unknown) => {
    throw explainDriverImportFailure(error, 'pg', '^8.23.1');
  });
  return openPostgresSessionStore({
    connectionString: location.connectionString,
    modes: options.modes,
    logger: options.logger,
    schema: options.postgres?.schema,
    poolSize: options.postgres?.poolSize,
    timeouts: options.postgres?.timeouts,
    limits: options.limits,
  });
}

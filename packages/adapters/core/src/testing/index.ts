/**
 * @aptix/adapter-core/testing: what an adapter's tests need around a framework's real loop. A real
 * SQLite session store in a scratch folder, with the shipped mode catalog, and a record of the calls
 * an adapter ran. Needs `better-sqlite3` installed. Everything exported here is public API.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteSessionStore, type SqliteSessionStore } from '@aptix/agent-sessions/sqlite';
import type { InvokeResult } from '@aptix/tool-contract';
import { loadModeCatalog, type ModeCatalog } from '@aptix/tool-mode-catalog';
import type { AptixTools } from '../aptix-tools.js';
import type { AptixSessionScope } from '../aptix-tools-options.js';

export { docsExample, importDocsExample } from './docs-example.js';
export { CHART_PDF, ChartTool, contentToolPackage, RED_PIXEL_PNG } from './content-tool.js';
export { unitPrompts, unitResources, unitsPackage } from './units-package.js';

/** A session store in a scratch folder, and the shipped catalog it was opened with. */
export interface ScratchSessions {
  readonly store: SqliteSessionStore;
  readonly catalog: ModeCatalog;
  /** A new session in `mode`, as the `session` option of an adapter. */
  newSession(mode?: string): Promise<AptixSessionScope>;
  /** Closes the store and deletes the folder. */
  close(): Promise<void>;
}

/**
 * Opens a SQLite session store in a new temporary folder, with the catalog `@aptix/tool-mode-catalog` ships.
 * @example
 * const sessions = await openScratchSessions();
 * const aptix = await createAiSdkTools({ tools, session: await sessions.newSession('general') });
 * await sessions.close();
 */
export async function openScratchSessions(): Promise<ScratchSessions> {
  const dir = mkdtempSync(join(tmpdir(), 'aptix-adapter-'));
  const catalog = await loadModeCatalog();
  const store = await openSqliteSessionStore({ filename: join(dir, 'sessions.db'), modes: catalog });
  return {
    store,
    catalog,
    async newSession(mode) {
      const session = await store.createSession(mode === undefined ? {} : { mode });
      return { sessionManager: store, sessionId: session.id, modeCatalog: catalog };
    },
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Records the result of every call `aptix` runs, whatever the framework does with it afterwards (a
 * cancelled run throws, so its tool results never reach the caller). `onStart` runs as each call starts.
 * @example
 * const calls = recordCalls(aptix, () => setImmediate(() => controller.abort()));
 */
export function recordCalls(aptix: AptixTools, onStart?: (name: string) => void): InvokeResult<string>[] {
  const results: InvokeResult<string>[] = [];
  const call = aptix.call.bind(aptix);
  aptix.call = async (name, args, options) => {
    onStart?.(name);
    const result = await call(name, args, options);
    results.push(result);
    return result;
  };
  return results;
}

/** The messages between the SQLite store and its audit writer thread (audit-writer.ts, audit-writer-worker.ts). */
import type { AuditRetention } from '../audit.js';

/** The thread's `workerData`. */
export interface AuditWriterSetup {
  /** The database file's absolute path (never `:memory:`: another connection would open another database). */
  readonly filename: string;
  /** SQLite's `busy_timeout` on the thread's connection: the store's `busyTimeoutMs`. */
  readonly busyTimeoutMs: number;
  /** Names the database in messages, as the store's own do. */
  readonly location: string;
}

export type AuditWriterRequest =
  /** Values as `auditRowValues` makes them: one IMMEDIATE transaction. */
  | { readonly type: 'append'; readonly id: number; readonly values: readonly unknown[] }
  /** A retention already checked. */
  | { readonly type: 'prune'; readonly id: number; readonly retention: AuditRetention }
  /** Closes the connection; the thread then ends. */
  | { readonly type: 'close'; readonly id: number };

export type AuditWriterReply =
  | { readonly id: number; readonly ok: true; readonly removed: number }
  | {
      readonly id: number;
      readonly ok: false;
      /** A SessionStoreError's code (`sqlite: false`), a SqliteError's (`sqlite: true`), or none. */
      readonly code: string | undefined;
      readonly message: string;
      readonly sqlite: boolean;
    };

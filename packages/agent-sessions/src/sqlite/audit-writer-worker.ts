/**
 * The audit trail's writer thread (see audit-writer.ts): a connection of its own to the store's file,
 * opened with the same driver as the store's, that runs the batch inserts and the prunes, so that
 * neither holds the host's event loop. Requests are handled one at a time, in the order they came.
 *
 * This thread may block: it waits for another connection's lock inside SQLite (`busy_timeout`, the
 * store's `busyTimeoutMs`), and a write still refused past it answers `DATABASE_LOCKED`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SessionStoreError } from '../errors.js';
import { databaseLocked, isBusy } from './busy.js';
import { Database, SqliteError } from './driver.js';
import { prepareAuditWrites } from './audit-writes.js';
import type { AuditWriterReply, AuditWriterRequest, AuditWriterSetup } from './audit-writer-protocol.js';

const setup = workerData as AuditWriterSetup;
const port = parentPort!;
const db = new Database(setup.filename, { fileMustExist: true, timeout: setup.busyTimeoutMs });
// Per connection, as the store's own (database.ts): the WAL is fsync'd at checkpoints, not at each commit.
db.pragma('synchronous = NORMAL');
const writes = prepareAuditWrites(db);

function failure(id: number, error: unknown): AuditWriterReply {
  const refusal = isBusy(error) ? databaseLocked(setup.location, setup.busyTimeoutMs, error) : error;
  if (refusal instanceof SessionStoreError)
    return { id, ok: false, code: refusal.code, message: refusal.message, sqlite: false };
  if (refusal instanceof SqliteError)
    return { id, ok: false, code: refusal.code, message: refusal.message, sqlite: true };
  return {
    id,
    ok: false,
    code: undefined,
    message: refusal instanceof Error ? refusal.message : String(refusal),
    sqlite: false,
  };
}

/** Lets the requests that came meanwhile (appends) run between two steps of a long prune. */
const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

async function prune(request: Extract<AuditWriterRequest, { type: 'prune' }>): Promise<AuditWriterReply> {
  let removed = 0;
  for (;;) {
    const changes = writes.pruneStep(request.retention);
    removed += changes;
    if (changes === 0) return { id: request.id, ok: true, removed };
    await yieldToRequests();
  }
}

port.on('message', (request: AuditWriterRequest) => {
  switch (request.type) {
    case 'append':
      try {
        writes.insert(request.values);
        port.postMessage({ id: request.id, ok: true, removed: 0 } satisfies AuditWriterReply);
      } catch (error) {
        port.postMessage(failure(request.id, error));
      }
      return;
    case 'prune':
      void prune(request)
        .catch((error: unknown) => failure(request.id, error))
        .then((reply) => port.postMessage(reply));
      return;
    case 'close':
      db.close();
      port.postMessage({ id: request.id, ok: true, removed: 0 } satisfies AuditWriterReply);
      port.close();
      return;
  }
});

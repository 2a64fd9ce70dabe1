/**
 * The SQLite store's audit writer thread, as the store sees it. better-sqlite3 is synchronous: a batch
 * insert (and the WAL checkpoint a commit may set off) on the store's own connection holds the event
 * loop, and every request with it. A worker thread with a connection of its own to the same file (WAL:
 * its commits are seen by the store's reads at once) takes them off the loop; the store's thread only
 * checks the records and posts their values.
 *
 * - The thread starts with the first request and stays (unreferenced while idle, so it never keeps the
 *   process alive by itself; referenced while a request waits, so a process awaiting a write does not
 *   end under it). `close()` lets every request finish, then ends the thread.
 * - A thread that ends under requests (a crash, a kill) rejects them (`OUTCOME_UNKNOWN`: a batch being
 *   committed may or may not be saved); the next request starts a new thread.
 * - A lock held by another connection past `busyTimeoutMs` rejects the request (`DATABASE_LOCKED`).
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AuditRetention } from '../audit.js';
import { SessionStoreError, type SessionStoreErrorCode } from '../errors.js';
import { SqliteError } from './driver.js';
import type { AuditWriterReply, AuditWriterRequest, AuditWriterSetup } from './audit-writer-protocol.js';

/** Distributive, so each request keeps its own fields. */
type Request = AuditWriterRequest extends infer R ? (R extends AuditWriterRequest ? Omit<R, 'id'> : never) : never;

interface Waiting {
  readonly resolve: (removed: number) => void;
  readonly reject: (error: Error) => void;
}

/** One running thread and the requests it holds. */
interface Thread {
  readonly worker: Worker;
  readonly waiting: Map<number, Waiting>;
  /** Its 'error' event, for the message of the requests its end rejects. */
  failure: Error | undefined;
}

/**
 * How the thread is started: from the built package, the compiled file beside this one; from the
 * sources (the package's tests under vitest, or tsx), the TypeScript file, through tsx's loader.
 */
function workerEntry(): { entry: URL | string; eval: boolean } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { entry: new URL('./audit-writer-worker.js', here), eval: false };
  // tsx's ESM entry (its CommonJS one misplaces its loader when called from an eval'd thread).
  const tsxPackage = createRequire(here).resolve('tsx/package.json');
  const { exports } = createRequire(here)(tsxPackage) as { exports: Record<string, { import: { default: string } }> };
  const tsx = new URL(exports['./esm/api']!.import.default, pathToFileURL(tsxPackage)).href;
  const source = new URL('./audit-writer-worker.ts', here).href;
  return {
    entry: `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`,
    eval: true,
  };
}

function replyError(reply: Extract<AuditWriterReply, { ok: false }>): Error {
  if (reply.sqlite && reply.code !== undefined) return new SqliteError(reply.message, reply.code);
  if (reply.code !== undefined) return new SessionStoreError(reply.code as SessionStoreErrorCode, reply.message);
  return new Error(reply.message);
}

export class AuditWriterThread {
  readonly #setup: AuditWriterSetup;
  #thread: Thread | undefined;
  #nextId = 0;
  #closed = false;

  constructor(setup: AuditWriterSetup) {
    this.#setup = setup;
  }

  /** The running thread, if any (tests end it to see a crash handled). */
  get worker(): Worker | undefined {
    return this.#thread?.worker;
  }

  /** Inserts the values (`auditRowValues`) in one transaction; resolves once committed. */
  async append(values: readonly unknown[]): Promise<void> {
    await this.#request({ type: 'append', values });
  }

  /** Prunes past a checked retention, a batch per transaction; answers how many records went. */
  prune(retention: AuditRetention): Promise<number> {
    return this.#request({ type: 'prune', retention });
  }

  /** Lets every request finish (or fail), then ends the thread. Later requests are refused (`STORE_CLOSED`). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const thread = this.#thread;
    if (thread === undefined) return;
    const ended = new Promise<void>((resolve) => thread.worker.once('exit', () => resolve()));
    // The close request comes after every request posted before it: the thread answers them in order,
    // then closes its connection and ends by itself. It is not terminated: better-sqlite3 aborts the
    // whole process when a thread is terminated while SQLite raises an error in it.
    await this.#send(thread, { type: 'close' }).catch(() => undefined);
    thread.worker.ref(); // until it ended: a process awaiting close() must not end first
    await ended;
  }

  #request(request: Request): Promise<number> {
    if (this.#closed)
      return Promise.reject(
        new SessionStoreError(
          'STORE_CLOSED',
          `The session store on the ${this.#setup.location} is closed; open a new one (openSessionStore) to use it again.`,
        ),
      );
    return this.#send((this.#thread ??= this.#start()), request);
  }

  #send(thread: Thread, request: Request): Promise<number> {
    const id = ++this.#nextId;
    return new Promise<number>((resolve, reject) => {
      if (thread.waiting.size === 0) thread.worker.ref();
      thread.waiting.set(id, { resolve, reject });
      thread.worker.postMessage({ ...request, id } as AuditWriterRequest);
    });
  }

  #start(): Thread {
    const { entry, eval: isEval } = workerEntry();
    const worker = new Worker(entry, { eval: isEval, workerData: this.#setup, stdout: false, stderr: false });
    worker.unref();
    const thread: Thread = { worker, waiting: new Map(), failure: undefined };
    worker.on('message', (reply: AuditWriterReply) => {
      const waiting = thread.waiting.get(reply.id);
      if (waiting === undefined) return;
      thread.waiting.delete(reply.id);
      if (thread.waiting.size === 0) worker.unref();
      if (reply.ok) waiting.resolve(reply.removed);
      else waiting.reject(replyError(reply));
    });
    worker.on('error', (error) => (thread.failure = error));
    worker.on('exit', (exitCode) => {
      if (this.#thread === thread) this.#thread = undefined;
      if (thread.waiting.size === 0) return;
      const why = thread.failure === undefined ? `exit code ${exitCode}` : thread.failure.message;
      const error = new SessionStoreError(
        'OUTCOME_UNKNOWN',
        `The audit writer thread of the ${this.#setup.location} ended (${why}) while ${thread.waiting.size} writes waited: ` +
          'each may or may not have been saved. The next write starts a new thread.',
        { cause: thread.failure },
      );
      for (const waiting of thread.waiting.values()) waiting.reject(error);
      thread.waiting.clear();
    });
    return thread;
  }
}

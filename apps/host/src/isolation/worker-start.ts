import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { WorkerResourceLimits } from '../tool-package-config.js';
import { collectorLock } from './collector.js';
import { PoolWorker, WORKER_BOOT_MS, workerEntry, type Ending } from './pool-worker.js';
import { logWorkerEntry } from './worker-messages.js';
import type { WorkerMessage, WorkerSetup } from './protocol.js';

export type ReadyMessage = Extract<WorkerMessage, { type: 'ready' }>;

/** What starting a worker thread takes from its pool's options. */
export interface WorkerStartOptions {
  /** The package as the configuration names it, for messages. */
  readonly specifier: string;
  readonly setup: WorkerSetup;
  readonly resourceLimits: WorkerResourceLimits;
  readonly logger: Logger;
}

/** What the pool does with a started worker's life; the start-up's own messages (phase, failed, log) stay here. */
export interface WorkerLife {
  /** The worker reported ready (its promise is resolved already). */
  ready(entry: PoolWorker, message: ReadyMessage): void;
  /** A message about one of its calls (a string, see protocol.ts). */
  callMessage(entry: PoolWorker, wire: string): void;
  /** Any other message the worker sends once started or while starting (tools, result, policy, pong, closed, unit…). */
  message(entry: PoolWorker, message: Exclude<WorkerMessage, { type: 'ready' | 'phase' | 'failed' | 'log' }>): void;
  /** The worker's thread exited; `wasReady` says whether it had started (if not, its start-up promise rejects). */
  exited(entry: PoolWorker, ending: Ending, wasReady: boolean): void;
}

/**
 * Starts one worker thread of an isolated package, under a start-up deadline per phase (starting the
 * thread, importing the package, its createDependencies()/createTools()). The promise resolves with the
 * worker's `ready` message, or rejects with why it could not start (deadline, its own failure, an exit).
 */
export function startWorker(
  options: WorkerStartOptions,
  life: WorkerLife,
): { entry: PoolWorker; ready: Promise<ReadyMessage> } {
  const { setup, resourceLimits, specifier, logger } = options;
  const worker = new Worker(workerEntry(), {
    workerData: { ...setup, collectorLock: collectorLock() } satisfies WorkerSetup,
    resourceLimits,
    stdout: false,
    stderr: false,
  });
  worker.unref();
  const entry = new PoolWorker(worker);
  const who = `Tool package "${specifier}" (isolation: "worker")`;
  const ready = new Promise<ReadyMessage>((resolve, reject) => {
    let failure: Error | undefined;
    // The worker's own limits catch what waits; this one catches synchronous code that never returns.
    // Until the worker says it begins the import, the time is Node's and the host's own (starting a thread, loading the contract).
    let phase: 'boot' | 'import' | 'setup' = 'boot';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(
        () => {
          const what =
            phase === 'boot'
              ? 'starting its worker thread'
              : phase === 'import'
                ? 'importing'
                : 'its createDependencies()/createTools()';
          failure = new Error(
            `${who} did not finish ${what} within ${setup.limitMs} ms, so its worker was ended. Fix: find what it waits for or computes; if it is only slow, raise its startupTimeoutMs.`,
          );
          void worker.terminate();
        },
        phase === 'boot' ? setup.limitMs + WORKER_BOOT_MS : setup.limitMs + 250,
      );
    };
    arm();
    worker.on('message', (raw: unknown) => {
      // A call's messages are strings (see protocol.ts), several in an array when they were sent together;
      // everything else is rare and an object.
      if (typeof raw === 'string') return life.callMessage(entry, raw);
      if (Array.isArray(raw)) {
        for (const item of raw as unknown[]) if (typeof item === 'string') life.callMessage(entry, item);
        return;
      }
      const message = raw as WorkerMessage;
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      if (message === null || typeof message !== 'object') return;
      switch (message.type) {
        case 'phase':
          phase = message.phase === 'import' ? 'import' : 'setup';
          arm();
          return;
        case 'failed':
          failure = new Error(typeof message.message === 'string' ? message.message : `${who} failed to start.`);
          void worker.terminate();
          return;
        case 'ready':
          if (entry.state !== 'starting') return;
          clearTimeout(timer);
          entry.state = 'ready';
          resolve(message);
          life.ready(entry, message);
          return;
        case 'log':
          logWorkerEntry(logger, specifier, message);
          return;
        default:
          life.message(entry, message);
      }
    });
    worker.on('error', (error: Error & { code?: string }) => {
      entry.ending ??=
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? { kind: 'memory' }
          : { kind: 'crash', detail: 'an uncaught exception' };
      logger.error(
        { toolPackage: specifier, code: error.code },
        `isolated tool package ${specifier}: its worker ${entry.ending.kind === 'memory' ? 'ran out of memory' : `stopped on an uncaught exception: ${error.message}`}`,
      );
    });
    worker.on('exit', (code) => {
      clearTimeout(timer);
      const wasReady = entry.state === 'ready';
      entry.state = 'ended';
      life.exited(entry, entry.ending ?? { kind: 'crash', detail: `exit code ${code}` }, wasReady);
      if (wasReady) return;
      reject(
        failure ??
          new Error(
            `${who} failed to start: its worker exited (code ${code}) before it was ready${entry.ending?.kind === 'memory' ? ', out of memory' : ''}.`,
          ),
      );
    });
  });
  return { entry, ready };
}

import { hash } from 'node:crypto';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { canonicalJson, type InvokeResult, type ToolAnnotations } from '@aptix/tool-contract';
import {
  AUDIT_OUTCOME_OK,
  SessionStoreError,
  type AuditKind,
  type AuditStore,
  type NewAuditRecord,
} from '@aptix/agent-sessions';
import type { Logger } from 'pino';
import type { AuditConfig } from './audit-config.js';

/** The tool whose successful calls are mode changes (TUL-007). */
export const MODE_CHANGE_TOOL = 'agent_change_mode';
/**
 * Records written per transaction. On a SQLite file the store writes them on its audit writer thread;
 * on SQLite in memory (or `auditWriter: 'inline'`) a batch blocks the event loop while it runs, so
 * batches stay short.
 */
const BATCH = 100;
/** Records held while the store fails; past it the oldest are dropped, and the drop is logged. */
const MAX_QUEUED = 50_000;
const KEY_MAX = 256;
const OUTCOME_MAX = 64;

/**
 * A record waiting to be written. Its arguments are hashed when it is made, so the record holds no
 * reference to them: a request's objects kept alive until the batch is written would outlive the
 * young generation, and cost more in garbage collection than the hash does.
 */
type Pending = NewAuditRecord;

/** What a finished call leaves in the trail. */
export interface FinishedCall {
  readonly tool: string;
  readonly args: unknown;
  readonly principal: string | undefined | null;
  readonly sessionId: string | undefined | null;
  /** `performance.now()` when the call started. */
  readonly startedAt: number;
  /** `Date.now()` when the call started. */
  readonly startedAtMs: number;
  readonly traceId: string | null;
  /** `OK` or the error code. */
  readonly outcome: string;
  /** The session's mode when the call ran (a mode change's `fromMode`). */
  readonly mode?: string | null;
  /** The tool's result, read for the mode a mode change entered. */
  readonly result?: InvokeResult<string>;
  readonly approvalId?: string | null;
}

/** A string as a record can hold it: at most `max` characters, no NUL. */
function clean(value: string | null | undefined, max = KEY_MAX): string | null {
  if (value === null || value === undefined) return null;
  const short = value.length > max ? value.slice(0, max) : value;
  return short.includes('\u0000') ? short.replaceAll('\u0000', '\uFFFD') : short;
}

/**
 * SHA-256 of the arguments' canonical JSON; JSON text is parsed first, so `{"b":1,"a":2}` and
 * `{"a":2,"b":1}` hash alike. One-shot `crypto.hash`: a third of what a `createHash` object costs for
 * a short text, on every recorded call.
 */
export function argumentsHash(args: unknown): string | null {
  if (args === undefined) return null;
  let text: string;
  try {
    text = canonicalJson(typeof args === 'string' ? (JSON.parse(args) as unknown) : args);
  } catch {
    text = typeof args === 'string' ? args : String(args);
  }
  return hash('sha256', text, 'hex');
}

let isoMs = Number.NaN;
let isoText = '';

/** `new Date(ms).toISOString()`, made once per millisecond: under load many calls start in the same one. */
function isoTime(ms: number): string {
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** The trace id of the span the caller runs in, when tracing is on and the span is real. */
export function activeTraceId(): string | null {
  const context = trace.getActiveSpan()?.spanContext();
  return context !== undefined && isSpanContextValid(context) ? context.traceId : null;
}

/** `OK`, or the code of the result's first error. */
export function outcomeOf(result: InvokeResult<string>): string {
  if (result.successful) return AUDIT_OUTCOME_OK;
  return clean(result.errors[0]?.code || 'ERROR', OUTCOME_MAX)!;
}

/** The mode a successful mode change entered, from its result (`{ success: true, mode }`). */
function enteredMode(result: InvokeResult<string> | undefined): string | null {
  if (result === undefined || !result.successful) return null;
  try {
    const parsed = JSON.parse(result.result) as { success?: unknown; mode?: unknown };
    return parsed.success === true && typeof parsed.mode === 'string' ? parsed.mode : null;
  } catch {
    return null;
  }
}

/**
 * The host's side of the audit trail: what is recorded, held in memory briefly and written in batches
 * off the calls' path. A store that fails never fails a call: the failure is logged and the records are
 * kept for the next write (at most {@link MAX_QUEUED}). `close()` writes whatever waits.
 */
export class AuditTrail {
  readonly #store: () => AuditStore;
  readonly #config: AuditConfig;
  readonly #logger: Logger;
  #queue: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pruner: ReturnType<typeof setInterval> | undefined;
  #writing: Promise<void> = Promise.resolve();
  /** A write queued behind the running one, not started yet. */
  #queued: Promise<void> | undefined;
  /** Whether the queued write also takes a last, partial batch (a flush), or only full ones. */
  #queuedTakesAll = false;
  #closing = false;
  #closed = false;
  #dropped = 0;

  constructor(store: () => AuditStore, config: AuditConfig, logger: Logger) {
    this.#store = store;
    this.#config = config;
    this.#logger = logger;
  }

  get enabled(): boolean {
    return this.#config.enabled;
  }

  /** Whether a call of a tool with these annotations is recorded: not read-only, or `readOnlyCalls`. */
  recordsCallsOf(annotations: ToolAnnotations | undefined): boolean {
    return this.#config.enabled && (this.#config.readOnlyCalls || annotations?.readOnlyHint !== true);
  }

  /** Records a finished call (a mode change when it is one). */
  call(call: FinishedCall): void {
    const modeChange = call.tool === MODE_CHANGE_TOOL;
    const kind: AuditKind = modeChange ? 'mode_change' : 'tool_call';
    this.#push({
      at: isoTime(call.startedAtMs),
      kind,
      principal: clean(call.principal),
      sessionId: clean(call.sessionId),
      tool: clean(call.tool)!,
      argumentsHash: argumentsHash(call.args),
      outcome: clean(call.outcome, OUTCOME_MAX)!,
      durationMs: Math.max(0, Math.round(performance.now() - call.startedAt)),
      traceId: call.traceId,
      approvalId: clean(call.approvalId),
      ...(modeChange ? { fromMode: clean(call.mode), toMode: clean(enteredMode(call.result)) } : {}),
    });
  }

  /** Records a person's decision on an approval (or an attempt the store refused: `outcome` says which). */
  decision(entry: {
    readonly approvalId: string;
    readonly tool: string;
    readonly sessionId: string | null;
    readonly arguments: string;
    readonly principal: string | null | undefined;
    readonly decision: 'approve' | 'deny';
    readonly outcome: string;
  }): void {
    if (!this.#config.enabled) return;
    this.#push({
      kind: 'approval_decision',
      principal: clean(entry.principal),
      sessionId: clean(entry.sessionId),
      tool: clean(entry.tool)!,
      argumentsHash: argumentsHash(entry.arguments),
      outcome: clean(entry.outcome, OUTCOME_MAX)!,
      durationMs: null,
      traceId: activeTraceId(),
      approvalId: clean(entry.approvalId),
      decision: entry.decision,
    });
  }

  #push(record: Pending): void {
    if (this.#closed) {
      this.#logger.warn(
        { tool: record.tool, kind: record.kind },
        'audit record made after the host closed its trail: not written',
      );
      return;
    }
    this.#queue.push(record);
    if (this.#queue.length > MAX_QUEUED) {
      this.#dropped += this.#queue.length - MAX_QUEUED;
      this.#queue.splice(0, this.#queue.length - MAX_QUEUED);
    }
    if (this.#queue.length >= BATCH) void this.#write(false);
    else this.#armTimer();
  }

  /** The timer that writes a partial batch at most `flushIntervalMs` after its first record. */
  #armTimer(): void {
    this.#timer ??= setTimeout(() => void this.flush(), this.#config.flushIntervalMs).unref();
  }

  /** Writes every record waiting, one batch after another; resolves when they are written or the store failed (logged). */
  flush(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#write(true);
  }

  /**
   * Queues a write behind the running one. One write waits at most: it takes the records queued by the
   * time it starts, in full batches, and with `all` the last partial batch too. Without it a partial
   * batch waits for the timer: under load, a write that took every record at once would go on writing
   * a few records per transaction (what came in during the last one), each paying a commit.
   */
  #write(all: boolean): Promise<void> {
    if (all) this.#queuedTakesAll = true;
    if (this.#queued !== undefined) return this.#queued;
    const queued = this.#writing.then(() => {
      this.#queued = undefined;
      const takesAll = this.#queuedTakesAll;
      this.#queuedTakesAll = false;
      return this.#writeAll(takesAll);
    });
    this.#queued = queued;
    this.#writing = queued;
    return queued;
  }

  async #writeAll(all: boolean): Promise<void> {
    if (this.#dropped > 0) {
      this.#logger.error(
        { dropped: this.#dropped },
        `the audit store kept failing: ${this.#dropped} audit records were dropped, the oldest first`,
      );
      this.#dropped = 0;
    }
    // The records owed a write now: with `all`, every one waiting when it starts (every one when closing).
    let owed = all ? this.#queue.length : 0;
    while (this.#queue.length >= BATCH || (this.#queue.length > 0 && (owed > 0 || this.#closing))) {
      const batch = this.#queue.splice(0, BATCH);
      owed -= batch.length;
      try {
        await this.#store().append(batch);
      } catch (error) {
        const refused =
          error instanceof SessionStoreError && (error.code === 'INVALID_ARGUMENT' || error.code === 'VALUE_TOO_LONG');
        this.#logger.error(
          { err: error, records: batch.length },
          refused
            ? `the audit store refused ${batch.length} records: not written`
            : `writing ${batch.length} audit records failed; they are kept and written with the next batch`,
        );
        if (!refused) {
          this.#queue.unshift(...batch);
          if (!this.#closed) this.#timer ??= setTimeout(() => void this.flush(), 1000).unref();
        }
        return;
      }
      // Calls waiting for the thread run between two batches (SQLite writes block it while they run).
      if (this.#queue.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (this.#queue.length > 0 && !this.#closed) this.#armTimer();
  }

  /** Prunes what the retention no longer keeps now and every `pruneIntervalMs`, until `close()`. */
  startPruning(): void {
    if (!this.#config.enabled || this.#pruner !== undefined) return;
    const { maxAgeMs, maxRecords } = this.#config.retention;
    if (maxAgeMs === undefined && maxRecords === undefined) return;
    const prune = () =>
      this.#store()
        .prune(this.#config.retention)
        .then((removed) => {
          if (removed > 0) this.#logger.info({ removed }, `pruned ${removed} audit records past the retention`);
        })
        .catch((error: unknown) =>
          this.#logger.error({ err: error }, 'pruning the audit trail failed; it is tried again later'),
        );
    void prune();
    this.#pruner = setInterval(() => void prune(), this.#config.pruneIntervalMs).unref();
  }

  /** Stops pruning and writes every record waiting (a graceful stop loses none). */
  async close(): Promise<void> {
    if (this.#pruner !== undefined) clearInterval(this.#pruner);
    this.#pruner = undefined;
    this.#closing = true;
    await this.flush();
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

import { describeThrown } from './describe-thrown.js';
import { createRequire } from 'node:module';
import type * as Pino from 'pino';
import type { BaseLogger, LoggerOptions } from 'pino';

/** pino is loaded when a logger of the package's own is made, not on import: a host passes its own. */
const loadPino = (): typeof Pino.pino => (createRequire(import.meta.url)('pino') as typeof Pino).pino;

/** Key/value pairs for log events: an array of pairs, never a dictionary (AGN-005 §6.2). */
export type LogPairs = ReadonlyArray<readonly [key: string, value: string]>;

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** What {@link createAdminLogger} needs of a pino logger: its level methods (a Fastify `request.log` has them). */
export type LevelLogger = Pick<BaseLogger, LogLevel>;

/**
 * The logger every tool receives (the records' `IAdminLogger`). Tags follow the records,
 * e.g. `[agent_hello_world_ExecuteAsync__Exception]`.
 */
export interface AdminLogger {
  addError(tag: string, message: string, pairs?: LogPairs): void;
  addException(tag: string, error: unknown, pairs?: LogPairs): void;
  addCustomEvent(level: LogLevel, tag: string, message: string, pairs: LogPairs): void;
}

function fields(tag: string, pairs: LogPairs | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { tag };
  if (pairs) for (const [key, value] of pairs) out[key] = value;
  return out;
}

/**
 * An {@link AdminLogger} over pino. Pass the host's pino instance so tools and the server share one
 * logger; without one, a pino logger writing JSON to stdout at `LOG_LEVEL` (default `info`) is made.
 * @example const logger = createAdminLogger(pino({ level: 'warn' }));
 */
export function createAdminLogger(logger?: LevelLogger, options?: LoggerOptions): AdminLogger {
  return new PinoAdminLogger(logger ?? loadPino()({ level: process.env.LOG_LEVEL ?? 'info', ...options }));
}

/** A class rather than an object of closures: a server makes one per request (over its request's child logger). */
class PinoAdminLogger implements AdminLogger {
  constructor(private readonly target: LevelLogger) {}

  addError(tag: string, message: string, pairs?: LogPairs): void {
    this.target.error(fields(tag, pairs), message);
  }

  addException(tag: string, error: unknown, pairs?: LogPairs): void {
    const entry = fields(tag, pairs);
    entry.err = error;
    try {
      this.target.error(entry, exceptionMessage(error));
    } catch {
      // A thrown value pino cannot serialise (a Proxy whose traps throw, a getter that throws): log what it was instead.
      delete entry.err;
      this.target.error(entry, describeThrown(error));
    }
  }

  addCustomEvent(level: LogLevel, tag: string, message: string, pairs: LogPairs): void {
    this.target[level](fields(tag, pairs), message);
  }
}

/** The message logged for an exception: an Error's own message, or what was thrown described safely. */
function exceptionMessage(error: unknown): string {
  try {
    if (error instanceof Error && typeof error.message === 'string') return error.message;
  } catch {
    // fall through: describeThrown guards every read
  }
  return describeThrown(error);
}

/** An AdminLogger that writes nothing: for benchmarks and callers that do their own logging. */
export const silentAdminLogger: AdminLogger = Object.freeze({
  addError() {},
  addException() {},
  addCustomEvent() {},
});

/** One entry recorded by {@link CapturingAdminLogger}. */
export type CapturedLogEntry =
  | {
      readonly kind: 'error';
      readonly level: 'error';
      readonly tag: string;
      readonly message: string;
      readonly pairs: LogPairs;
    }
  | {
      readonly kind: 'exception';
      readonly level: 'error';
      readonly tag: string;
      readonly message: string;
      readonly error: unknown;
      readonly pairs: LogPairs;
    }
  | {
      readonly kind: 'event';
      readonly level: LogLevel;
      readonly tag: string;
      readonly message: string;
      readonly pairs: LogPairs;
    };

/**
 * An AdminLogger that records every call, for tests.
 * @example
 * const logger = new CapturingAdminLogger();
 * await tool.execute('{}', context);
 * expect(logger.exceptions()).toHaveLength(1);
 */
export class CapturingAdminLogger implements AdminLogger {
  readonly entries: CapturedLogEntry[] = [];

  addError(tag: string, message: string, pairs: LogPairs = []): void {
    this.entries.push({ kind: 'error', level: 'error', tag, message, pairs });
  }

  addException(tag: string, error: unknown, pairs: LogPairs = []): void {
    const message = exceptionMessage(error);
    this.entries.push({ kind: 'exception', level: 'error', tag, message, error, pairs });
  }

  addCustomEvent(level: LogLevel, tag: string, message: string, pairs: LogPairs): void {
    this.entries.push({ kind: 'event', level, tag, message, pairs });
  }

  errors(): CapturedLogEntry[] {
    return this.entries.filter((entry) => entry.kind === 'error');
  }

  exceptions(): Extract<CapturedLogEntry, { kind: 'exception' }>[] {
    return this.entries.filter(
      (entry): entry is Extract<CapturedLogEntry, { kind: 'exception' }> => entry.kind === 'exception',
    );
  }

  events(): Extract<CapturedLogEntry, { kind: 'event' }>[] {
    return this.entries.filter(
      (entry): entry is Extract<CapturedLogEntry, { kind: 'event' }> => entry.kind === 'event',
    );
  }

  clear(): void {
    this.entries.length = 0;
  }
}

import { fstatSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { logFileWriter } from './log-file-writer.js';

/**
 * The host's one pino instance. Pretty when writing to a terminal, JSON lines otherwise. `fd` 2
 * (stderr) keeps stdout for the one JSON document CLI commands print. Each HTTP request logs through
 * a child carrying its `reqId` (and `actor`), passed explicitly down to the executor and the tools:
 * no AsyncLocalStorage, which on Node 20 would switch on promise hooks for the whole process.
 *
 * Into a regular file, lines are gathered for a few milliseconds and written together (see
 * {@link LogFileWriter}): one write(2) for hundreds of a busy host's access lines, instead of one
 * thread-pool round trip per line (bench section 3, LOG_LEVEL=info). pino's own sonic-boom
 * (`minLength`, `periodicFlush`) was measured against it and cost about 1.3 µs more per line: in its
 * string mode it measures the byte length of everything pending on every write. A pipe or a socket may stop
 * draining (an MCP client that never reads stderr), so there lines stay asynchronous, through pino's
 * own destination: a reader that stalls never stalls the host.
 */
export function createHostLogger(level: string, fd: 1 | 2): Logger {
  const tty = fd === 1 ? process.stdout.isTTY : process.stderr.isTTY;
  const options = { level, base: { pid: process.pid } };
  if (tty) return pino(options, pretty({ colorize: true, destination: fd, sync: true, ignore: 'pid,hostname' }));
  return jsonLineLogger(options, isRegularFile(fd) ? logFileWriter(fd) : pino.destination({ fd, sync: false }));
}

/** A pino logger with only a level and base fields, writing JSON lines into `stream`: one {@link accessLineWriter} serves. */
export function jsonLineLogger(options: { level: string; base: Record<string, unknown> }, stream: DestinationStream): Logger {
  const logger = pino({ level: options.level, base: options.base }, stream);
  jsonLineLoggers.add(logger);
  return logger;
}

/** Writes one request's access line (`request completed` at info) with the request id as its first field. */
export type AccessLineWriter = (reqId: string, method: string, url: string, statusCode: number, responseTime: number) => void;

/** The host's own loggers writing JSON lines: no serializers, formatters, mixin, hooks or redaction. */
const jsonLineLoggers = new WeakSet<Logger>();

/**
 * For a logger made by {@link createHostLogger} writing JSON lines, a writer of the access line that
 * builds the same text pino would (its level, time and base fields, then the fields in order) in one
 * template instead of through pino's generic formatting, which walks the object's keys, looks up a
 * serializer and a stringifier for each and escapes strings character by character: about 9k
 * instructions less per request, of the 22k that info cost over warn (callgrind, 146k -> 137k per
 * request on the bench's invoke route at LOG_LEVEL=info; 124k at warn).
 * Undefined for any other logger (one an embedder passed, or a terminal's pretty printer), which
 * then logs the line through pino.
 */
export function accessLineWriter(logger: Logger): AccessLineWriter | undefined {
  if (!jsonLineLoggers.has(logger) || !logger.isLevelEnabled('info')) return undefined;
  const internals = logger as unknown as Record<symbol, unknown>;
  const level = (internals[pino.symbols.lsCacheSym] as Record<number, string>)[30]!;
  const time = internals[pino.symbols.timeSym] as () => string;
  const bindings = internals[pino.symbols.chindingsSym] as string;
  const end = internals[pino.symbols.endSym] as string;
  const stream = internals[pino.symbols.streamSym] as { write(line: string): unknown };
  return (reqId, method, url, statusCode, responseTime) => {
    // JSON.stringify escapes as pino does (a loop over the characters, as pino's, cost as much);
    // statusCode and responseTime are finite numbers.
    stream.write(`${level}${time()}${bindings},"reqId":${JSON.stringify(reqId)},"method":${JSON.stringify(method)},"url":${JSON.stringify(url)},"statusCode":${statusCode},"responseTime":${responseTime},"msg":"request completed"${end}`);
  };
}

function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

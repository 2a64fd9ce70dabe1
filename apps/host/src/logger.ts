import { fstatSync } from 'node:fs';
import { METHODS } from 'node:http';
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
export function jsonLineLogger(
  options: { level: string; base: Record<string, unknown> },
  stream: DestinationStream,
): Logger {
  const logger = pino({ level: options.level, base: options.base }, stream);
  jsonLineLoggers.add(logger);
  return logger;
}

/** Writes one request's access line (`request completed` at info) with the request id as its first field. */
export type AccessLineWriter = (
  reqId: string,
  method: string,
  url: string,
  statusCode: number,
  responseTime: number,
) => void;

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
 *
 * The line's head (level, time, base fields) is made once per millisecond, not per line: a busy host
 * writes many lines in one, and the time's 13 digits cost V8 a float-to-text conversion each.
 */
export function accessLineWriter(logger: Logger): AccessLineWriter | undefined {
  if (!jsonLineLoggers.has(logger) || !logger.isLevelEnabled('info')) return undefined;
  const internals = logger as unknown as Record<symbol, unknown>;
  const level = (internals[pino.symbols.lsCacheSym] as Record<number, string>)[30]!;
  const time = internals[pino.symbols.timeSym] as () => string;
  const bindings = internals[pino.symbols.chindingsSym] as string;
  const end = internals[pino.symbols.endSym] as string;
  const stream = internals[pino.symbols.streamSym] as { write(line: string): unknown };
  // pino's default time field is the epoch in ms; any other is asked for on every line.
  const epoch = time === pino.stdTimeFunctions.epochTime;
  let headMs = -1;
  let head = '';
  return (reqId, method, url, statusCode, responseTime) => {
    let start: string;
    if (epoch) {
      const now = Date.now();
      if (now !== headMs) {
        headMs = now;
        head = `${level},"time":${now}${bindings},"reqId":`;
      }
      start = head;
    } else start = `${level}${time()}${bindings},"reqId":`;
    stream.write(
      `${start}${jsonString(reqId)},"method":${METHOD_JSON.get(method) ?? jsonString(method)},` +
        `"url":${jsonString(url)},"statusCode":${statusCode},` +
        `"responseTime":${millisText(responseTime)},"msg":"request completed"${end}`,
    );
  };
}

/**
 * A character JSON.stringify escapes (control characters, quote, backslash) or may (a surrogate, escaped
 * when it is lone). A string with none is written in quotes as it is, by pino as by JSON.stringify.
 */
// eslint-disable-next-line no-control-regex -- control characters are matched on purpose, to refuse or escape them
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A string as JSON: in quotes as it is, unless a character needs escaping (rare in an id, a method or
 * a URL). One regular-expression test costs about half of JSON.stringify, which walks and copies the
 * string character by character (callgrind: 1.1k against 2.2k instructions for the bench's URL).
 */
function jsonString(text: string): string {
  return NEEDS_ESCAPING.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** The JSON of each method Node's HTTP parser accepts (a request's method is one of them): a lookup instead of a test per line. */
const METHOD_JSON = new Map(METHODS.map((method) => [method, `"${method}"`]));

/** ".001" to ".999" without trailing zeros, and "" for 0: the fraction of a time rounded to the µs, as JSON writes it. */
const MICROS_TEXT = Array.from({ length: 1000 }, (_, micros) =>
  micros === 0 ? '' : `.${String(micros).padStart(3, '0').replace(/0+$/, '')}`,
);

/**
 * A time in ms as JSON writes it. The host rounds response times to the µs: such a time is its whole
 * ms then a fraction from {@link MICROS_TEXT}, the same text as V8's shortest round-trip form (that
 * decimal is the one the double was rounded from), without V8's float-to-text conversion (about 0.9k
 * instructions). Any other number is written by V8.
 */
function millisText(ms: number): string {
  const micros = Math.round(ms * 1000);
  const whole = Math.floor(micros / 1000);
  return micros / 1000 === ms && micros >= 0 && micros < 1e15
    ? `${whole}${MICROS_TEXT[micros - whole * 1000]}`
    : `${ms}`;
}

function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

import { writeSync } from 'node:fs';

/** Past this many UTF-16 units waiting, lines are written at once instead of when the delay ends. */
const MAX_PENDING = 64 * 1024;
/** How long a line may wait in memory before it is written. */
const LOG_FLUSH_DELAY_MS = 10;

/**
 * Log lines into a regular file, gathered for {@link LOG_FLUSH_DELAY_MS} after the first of them and
 * written with one write(2). A busy host's access lines (hundreds in that time) cost one system call
 * instead of one each, with no thread-pool round trip and no callback; a line waits in memory at most
 * that long (or until {@link MAX_PENDING} is reached). Writing at the end of each event-loop turn
 * instead wrote about 8 lines per call under the HTTP bench's load, and cost about 200 ns more per
 * line. What is still pending when the process exits (a crash included) is written by the `exit`
 * listener; the timer never keeps the process alive.
 *
 * A write that fails (a full disk) drops its lines; the next write that succeeds begins with a line
 * saying how many were lost, so a gap in the log is never silent.
 */
export class LogFileWriter {
  readonly #fd: number;
  #pending = '';
  #scheduled = false;
  #lostLines = 0;
  readonly #flush = () => {
    this.#scheduled = false;
    this.flushSync();
  };

  constructor(fd: number) {
    this.#fd = fd;
  }

  /** pino's stream interface: one serialised line, newline included. */
  write(line: string): boolean {
    this.#pending += line;
    if (this.#pending.length >= MAX_PENDING) this.flushSync();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setTimeout(this.#flush, LOG_FLUSH_DELAY_MS).unref();
    }
    return true;
  }

  /** Writes every pending line now. */
  flushSync(): void {
    if (this.#pending === '') return;
    let text = this.#pending;
    this.#pending = '';
    if (this.#lostLines > 0) text = `${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, msg: `${this.#lostLines} log lines were lost: writing them to the log file failed` })}\n${text}`;
    const bytes = Buffer.from(text, 'utf8');
    try {
      // A regular file takes the whole buffer, unless the disk fills up part way (then write throws next).
      for (let offset = 0; offset < bytes.length; ) offset += writeSync(this.#fd, bytes, offset, bytes.length - offset);
      this.#lostLines = 0;
    } catch {
      this.#lostLines += countLines(text);
    }
  }

  /** pino's `logger.flush(cb)`. */
  flush(callback?: (error?: Error) => void): void {
    this.flushSync();
    callback?.();
  }
}

function countLines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

const writers = new Map<number, LogFileWriter>();

/** The one writer of `fd` in this process (every host composed in it shares it), flushed when the process exits. */
export function logFileWriter(fd: number): LogFileWriter {
  let writer = writers.get(fd);
  if (writer === undefined) {
    if (writers.size === 0) process.once('exit', () => writers.forEach((each) => each.flushSync()));
    writer = new LogFileWriter(fd);
    writers.set(fd, writer);
  }
  return writer;
}

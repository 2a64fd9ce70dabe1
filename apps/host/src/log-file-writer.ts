import { writeSync } from 'node:fs';

/** Lines are written at once, instead of when the delay ends, once this many bytes wait. */
const MAX_PENDING = 64 * 1024;
/** Lines longer than this (in UTF-16 units) skip the buffer and are written at once. */
const LONG_LINE = 16 * 1024;
/** How long a line may wait in memory before it is written. */
const LOG_FLUSH_DELAY_MS = 10;

/**
 * Log lines into a regular file, gathered for {@link LOG_FLUSH_DELAY_MS} after the first of them and
 * written with one write(2). A busy host's access lines (hundreds in that time) cost one system call
 * instead of one each, with no thread-pool round trip and no callback; a line waits in memory at most
 * that long (or until {@link MAX_PENDING} bytes wait). Writing at the end of each event-loop turn
 * instead wrote about 8 lines per call under the HTTP bench's load, and cost about 200 ns more per
 * line. What is still pending when the process exits (a crash included) is written by the `exit`
 * listener; the timer never keeps the process alive.
 *
 * Each line is encoded as it comes into one buffer made once: no string of pending lines that lives
 * until the write (and is copied by every young-generation collection on the way), nor a new buffer
 * for each write.
 *
 * A write that fails (a full disk) drops its lines; the next write that succeeds begins with a line
 * saying how many were lost, so a gap in the log is never silent.
 */
export class LogFileWriter {
  readonly #fd: number;
  /** Room for MAX_PENDING bytes and one more line of up to LONG_LINE characters (3 UTF-8 bytes each at most). */
  readonly #buffer = Buffer.allocUnsafeSlow(MAX_PENDING + 3 * LONG_LINE);
  #length = 0;
  #lines = 0;
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
    if (line.length > LONG_LINE) {
      // Longer than the buffer may have room for: written now, after the lines before it.
      this.flushSync();
      this.#writeAll(Buffer.from(line, 'utf8'), 1);
      return true;
    }
    this.#length += this.#buffer.write(line, this.#length);
    this.#lines += 1;
    if (this.#length >= MAX_PENDING) this.flushSync();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setTimeout(this.#flush, LOG_FLUSH_DELAY_MS).unref();
    }
    return true;
  }

  /** Writes every pending line now. */
  flushSync(): void {
    if (this.#length === 0) return;
    const bytes = this.#buffer.subarray(0, this.#length);
    const lines = this.#lines;
    this.#length = 0;
    this.#lines = 0;
    this.#writeAll(bytes, lines);
  }

  /** Writes `bytes` (`lines` whole lines), after the line saying how many were lost before, if any were. */
  #writeAll(bytes: Buffer, lines: number): void {
    try {
      if (this.#lostLines > 0) {
        const lost = `${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, msg: `${this.#lostLines} log lines were lost: writing them to the log file failed` })}\n`;
        writeWhole(this.#fd, Buffer.from(lost, 'utf8'));
        this.#lostLines = 0;
      }
      writeWhole(this.#fd, bytes);
    } catch {
      this.#lostLines += lines;
    }
  }

  /** pino's `logger.flush(cb)`. */
  flush(callback?: (error?: Error) => void): void {
    this.flushSync();
    callback?.();
  }
}

/** A regular file takes the whole buffer, unless the disk fills up part way (then write throws next). */
function writeWhole(fd: number, bytes: Buffer): void {
  for (let offset = 0; offset < bytes.length;) offset += writeSync(fd, bytes, offset, bytes.length - offset);
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

import { writeSync } from 'node:fs';

/** Past this many UTF-16 units waiting, lines are written at once instead of at the end of the turn. */
const MAX_PENDING = 64 * 1024;

/**
 * Log lines into a regular file, gathered over one turn of the event loop and written with one
 * write(2) at its end (`setImmediate`). Under load a turn answers several requests: their access lines
 * cost one system call instead of one each, with no thread-pool round trip and no callback, and a
 * line waits in memory at most until the turn ends (or until {@link MAX_PENDING} is reached). What is
 * still pending when the process exits (a crash included) is written by the `exit` listener.
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
      setImmediate(this.#flush);
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

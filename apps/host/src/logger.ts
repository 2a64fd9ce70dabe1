import { fstatSync } from 'node:fs';
import { pino, type Logger } from 'pino';
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
  return pino(options, isRegularFile(fd) ? logFileWriter(fd) : pino.destination({ fd, sync: false }));
}

function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

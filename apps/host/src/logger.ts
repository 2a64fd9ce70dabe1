import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

/**
 * The host's one pino instance. Pretty when writing to a terminal, JSON lines otherwise. `fd` 2
 * (stderr) keeps stdout for the one JSON document CLI commands print. Each HTTP request logs through
 * a child carrying its `reqId` (and `actor`), passed explicitly down to the executor and the tools:
 * no AsyncLocalStorage, which on Node 20 would switch on promise hooks for the whole process.
 */
export function createHostLogger(level: string, fd: 1 | 2): Logger {
  const tty = fd === 1 ? process.stdout.isTTY : process.stderr.isTTY;
  const options = { level, base: { pid: process.pid } };
  return tty ? pino(options, pretty({ colorize: true, destination: fd, sync: true, ignore: 'pid,hostname' })) : pino(options, pino.destination({ fd, sync: false }));
}

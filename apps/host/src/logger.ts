import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { requestIdMixin } from './request-context.js';

/**
 * The host's one pino instance. Pretty when writing to a terminal, JSON lines otherwise. `fd` 2
 * (stderr) keeps stdout for the one JSON document CLI commands print.
 */
export function createHostLogger(level: string, fd: 1 | 2): Logger {
  const tty = fd === 1 ? process.stdout.isTTY : process.stderr.isTTY;
  const options = { level, mixin: requestIdMixin, base: { pid: process.pid } };
  return tty ? pino(options, pretty({ colorize: true, destination: fd, sync: true, ignore: 'pid,hostname' })) : pino(options, pino.destination({ fd, sync: false }));
}

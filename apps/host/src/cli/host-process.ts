import { constants } from 'node:os';
import type { AptixConfig } from '../config.js';
import { installContainment, type Containment } from '../containment.js';
import { watchStartup, type StartupWatchdog } from './startup-watchdog.js';

/** How long a command that has ended waits for the event loop to empty before it exits anyway. */
export const EXIT_GRACE_MS = 2000;
/** Past the longest package time limit, how long start-up may hold the main thread before the watchdog ends it. */
const STALL_GRACE_MS = 5000;

/**
 * The process of `aptix serve`, `aptix mcp` or `aptix check`, whose tool packages run in it: what they
 * leave running (a timer, a socket, a hung import, a SIGTERM listener of their own) must not keep it
 * alive once the command has ended, nor make it deaf to SIGTERM while it starts.
 */
export interface HostProcess {
  readonly containment: Containment;
  /**
   * The configuration is read: until start-up is over, a main thread held by synchronous code for
   * longer than the longest package time limit (and 5 s) is killed (see startup-watchdog.ts).
   */
  watch(config: Pick<AptixConfig, 'startupTimeoutMs' | 'toolPackages'>): void;
  /**
   * Start-up is over. `handOver`: SIGTERM and SIGINT are the command's own from now on (aptix serve's
   * graceful shutdown); without it (aptix mcp), a signal still ends the process at once.
   */
  served(handOver: boolean): void;
  /**
   * The command has ended with `code` (a start-up failure, or a finished shutdown): the process exits
   * with it once nothing is left to run, or after {@link EXIT_GRACE_MS} whatever a package left running.
   */
  finish(code: number): void;
}

/**
 * Installs containment (see containment.ts) and the host's own SIGTERM and SIGINT handling before any
 * package loads. Until `served(true)`, a signal ends the process at once with 128 + the signal's number
 * (143 for SIGTERM, 130 for SIGINT), as a shell reports a process the signal ended, whatever a
 * package is doing or listening for; only a package's synchronous code, which holds the thread, delays it.
 */
export function superviseHostProcess(options: { escapes?: boolean } = {}): HostProcess {
  const containment = installContainment(options);
  const onSignal = (signal: 'SIGTERM' | 'SIGINT') => () => {
    try {
      process.stderr.write(`aptix: ${signal} received while ${phase}: exiting now.\n`);
    } finally {
      containment.exit(128 + constants.signals[signal]);
    }
  };
  const onTerm = onSignal('SIGTERM');
  const onInt = onSignal('SIGINT');
  let listening = false;
  let phase: 'starting' | 'serving' | 'ending' = 'starting';
  const listen = (on: boolean) => {
    if (on === listening) return;
    listening = on;
    process[on ? 'on' : 'off']('SIGTERM', onTerm);
    process[on ? 'on' : 'off']('SIGINT', onInt);
  };
  listen(true);
  let watchdog: StartupWatchdog | undefined;
  return {
    containment,
    watch(config) {
      if (watchdog !== undefined || phase !== 'starting') return;
      const longest = Math.max(
        config.startupTimeoutMs,
        ...config.toolPackages.map((entry) => entry.startupTimeoutMs ?? 0),
      );
      watchdog = watchStartup(longest + STALL_GRACE_MS);
    },
    served(handOver) {
      phase = 'serving';
      watchdog?.stop();
      if (handOver) listen(false);
    },
    finish(code) {
      if (phase === 'ending') return;
      phase = 'ending';
      watchdog?.stop();
      listen(true);
      const timer = setTimeout(() => {
        try {
          process.stderr.write(
            `aptix: something a tool package started (a timer, a socket, an import that never ` +
              `finished) was still running ${EXIT_GRACE_MS} ms after the command ended: exiting anyway ` +
              `with code ${code}.\n`,
          );
        } finally {
          containment.exit(code);
        }
      }, EXIT_GRACE_MS);
      timer.unref();
    },
  };
}

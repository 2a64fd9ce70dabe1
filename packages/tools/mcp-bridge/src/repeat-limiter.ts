import { describeThrown, type AdminLogger, type LogLevel, type LogPairs } from '@aptix/tool-contract';

/** Lines of one tag logged in a window before the rest are only counted. */
export const REPEATS_PER_WINDOW = 20;
export const REPEAT_WINDOW_MS = 60_000;

interface Window {
  logged: number;
  suppressed: number;
  lastMessage: string;
  timer: ReturnType<typeof setTimeout>;
}

/** An AdminLogger whose repeated lines are bounded, and which says what it held back. */
export interface RepeatLimitedLogger extends AdminLogger {
  /** Logs the counts of the windows still open (the bridge is closing). */
  flush(): void;
}

/**
 * Bounds the bridge's lines about a server that keeps changing (a server churning its tool list, a
 * connection that keeps dropping): at most {@link REPEATS_PER_WINDOW} lines of one tag in
 * {@link REPEAT_WINDOW_MS}; the others are counted, and when the window ends one
 * `[McpBridge_LogSuppressed]` line says how many were held back and gives the last of them.
 */
export function limitRepeats(logger: AdminLogger, server: string): RepeatLimitedLogger {
  const windows = new Map<string, Window>();
  const report = (tag: string, window: Window) => {
    clearTimeout(window.timer);
    windows.delete(tag);
    if (window.suppressed === 0) return;
    logger.addCustomEvent(
      'warn',
      '[McpBridge_LogSuppressed]',
      `MCP server "${server}": ${window.suppressed} more ${tag} lines were not logged (at most ` +
        `${REPEATS_PER_WINDOW} of one kind are in ${REPEAT_WINDOW_MS / 1000} s; the server keeps ` +
        `changing). The last: ${window.lastMessage}`,
      [
        ['Server', server],
        ['Tag', tag],
        ['Suppressed', String(window.suppressed)],
      ],
    );
  };
  /** Whether a line of `tag` may go to the log now. */
  const admit = (tag: string, message: string): boolean => {
    let window = windows.get(tag);
    if (window === undefined) {
      const timer = setTimeout(() => report(tag, windows.get(tag)!), REPEAT_WINDOW_MS);
      timer.unref();
      window = { logged: 0, suppressed: 0, lastMessage: '', timer };
      windows.set(tag, window);
    }
    if (window.logged < REPEATS_PER_WINDOW) {
      window.logged++;
      return true;
    }
    window.suppressed++;
    window.lastMessage = message;
    return false;
  };
  return {
    addError: (tag: string, message: string, pairs?: LogPairs) => {
      if (admit(tag, message)) logger.addError(tag, message, pairs);
    },
    addException: (tag: string, error: unknown, pairs?: LogPairs) => {
      if (admit(tag, describeThrown(error))) logger.addException(tag, error, pairs);
    },
    addCustomEvent: (level: LogLevel, tag: string, message: string, pairs: LogPairs) => {
      if (admit(tag, message)) logger.addCustomEvent(level, tag, message, pairs);
    },
    flush: () => {
      for (const [tag, window] of [...windows]) report(tag, window);
    },
  };
}

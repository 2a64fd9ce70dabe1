import type { ToolLogLevel } from './agent-tool.js';
import { TokenBucket } from './token-bucket.js';

/** One log entry a tool addresses to its caller, as it goes on the wire: checked, cut, plain JSON. */
export interface CallerLogEntry {
  readonly level: ToolLogLevel;
  readonly message: string;
  /** The entry's data as plain JSON (a round trip through JSON), or a note saying why it was left out. */
  readonly data?: unknown;
}

export interface LogGateOptions {
  /** Entries below this level are dropped. Default: none dropped. */
  readonly minLevel?: ToolLogLevel;
  /** Entries sent at once before the rate applies. Default 32. */
  readonly burst?: number;
  /** Entries per second past the burst; more are dropped, and the next entry sent says how many. Default 20. */
  readonly perSecond?: number;
  /** The longest message, in characters. Default 4000. */
  readonly maxMessageLength?: number;
  /** The most characters of JSON an entry's data may take; larger data is left out with a note. Default 16 KiB. */
  readonly maxDataLength?: number;
}

export interface LogGate {
  /** Takes one entry from the tool (give it as the context's `log`). Never throws. */
  readonly log: (level: ToolLogLevel, message: string, data?: unknown) => void;
  /** The call answered: later entries are dropped. */
  end(): void;
}

/** The levels of caller-facing log entries, lowest first (RFC 5424's, as MCP names them). */
export const TOOL_LOG_LEVELS: readonly ToolLogLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/**
 * What every surface does with a tool's caller-facing log entries before they go on the wire. A tool
 * controls them, so each is an attacker's input: an unknown level is dropped, a message is made a string
 * and cut, data is sent as plain JSON within a bound (data that cannot be serialised, or is too large,
 * is replaced by a note), the rate is bounded, and nothing is sent after the answer.
 */
export function logGate(deliver: (entry: CallerLogEntry) => void, options: LogGateOptions = {}): LogGate {
  const bucket = new TokenBucket(Math.max(1, options.burst ?? 32), Math.max(0.001, options.perSecond ?? 20));
  const floor = options.minLevel === undefined ? 0 : TOOL_LOG_LEVELS.indexOf(options.minLevel);
  const maxMessage = options.maxMessageLength ?? 4000;
  const maxData = options.maxDataLength ?? 16 * 1024;
  let dropped = 0;
  let open = true;
  return {
    log(level, message, data) {
      if (!open) return;
      const rank = TOOL_LOG_LEVELS.indexOf(level);
      if (rank === -1 || rank < floor) return;
      if (!bucket.take()) {
        dropped++;
        return;
      }
      try {
        let text = typeof message === 'string' ? message : String(message);
        if (text.length > maxMessage) text = text.slice(0, maxMessage);
        if (dropped > 0) {
          text += ` (${dropped} earlier entries were dropped: more than ${bucket.perSecond} a second)`;
          dropped = 0;
        }
        deliver(
          data === undefined ? { level, message: text } : { level, message: text, data: plainData(data, maxData) },
        );
      } catch {
        // A message whose toString throws, or a caller that cannot take the entry: dropped, never the call's failure.
      }
    },
    end() {
      open = false;
    },
  };
}

function plainData(data: unknown, max: number): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch {
    return '(left out: the data could not be serialised as JSON)';
  }
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, a function or a symbol, whatever its declared type says
  if (json === undefined) return '(left out: the data has no JSON form)';
  if (json.length > max) return `(left out: ${json.length} characters of JSON, over the limit of ${max})`;
  return JSON.parse(json) as unknown;
}

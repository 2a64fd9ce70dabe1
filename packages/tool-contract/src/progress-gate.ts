import type { ToolProgress } from './agent-tool.js';
import { TokenBucket } from './token-bucket.js';

/**
 * What every surface does with a tool's progress reports before they go on the wire: keep only well-formed
 * reports that grow, cut long messages, bound how many are sent, and stop at the answer.
 *
 * A tool controls these reports, so each one is an attacker's input: `progress` that is not a finite
 * number or does not grow is dropped; `total` that is not a finite number is left out; a message that
 * is not a string is left out and a long one is cut. A report whose fields throw when read is dropped.
 *
 * Reports are sent as a token bucket allows: a burst of `burst` at once, then `perSecond`. Past that the
 * newest report waits for the next token and replaces any that was waiting, so a tool reporting
 * thousands of times a second costs the caller at most `perSecond` events, each the latest value.
 * `end()` sends the one still waiting (the caller then sees the last progress before the result) and
 * drops every later report.
 */
export interface ProgressGateOptions {
  /** Reports sent at once before the rate applies. Default 16. */
  readonly burst?: number;
  /** Reports sent per second past the burst. Default 20. */
  readonly perSecond?: number;
  /** The longest message kept, in characters; longer ones are cut. Default {@link PROGRESS_MESSAGE_MAX_LENGTH}. */
  readonly maxMessageLength?: number;
}

export interface ProgressGate {
  /** Takes one report from the tool (give it as the context's `reportProgress`). Never throws. */
  readonly report: (progress: ToolProgress) => void;
  /** The call answered: sends the report still waiting, if any, then drops all later ones. */
  end(): void;
}

/** The longest progress message sent on, by default. */
export const PROGRESS_MESSAGE_MAX_LENGTH = 1000;

/**
 * Checks one report as the gate does: the report to send, or undefined when it is dropped. `after` is
 * the last progress accepted (a report must be greater).
 */
export function cleanProgress(
  report: unknown,
  after: number,
  maxMessageLength = PROGRESS_MESSAGE_MAX_LENGTH,
): ToolProgress | undefined {
  try {
    if (report === null || typeof report !== 'object') return undefined;
    const { progress, total, message } = report as Record<string, unknown>;
    if (typeof progress !== 'number' || !Number.isFinite(progress) || !(progress > after)) return undefined;
    const clean: { progress: number; total?: number; message?: string } = {
      progress,
    };
    if (typeof total === 'number' && Number.isFinite(total)) clean.total = total;
    if (typeof message === 'string')
      clean.message = message.length > maxMessageLength ? message.slice(0, maxMessageLength) : message;
    return clean;
  } catch {
    return undefined;
  }
}

/** Wraps `deliver` (which sends one report to the caller) in the checks and bounds described above. */
export function progressGate(
  deliver: (progress: ToolProgress) => void,
  options: ProgressGateOptions = {},
): ProgressGate {
  const bucket = new TokenBucket(Math.max(1, options.burst ?? 16), Math.max(0.001, options.perSecond ?? 20));
  const maxMessageLength = options.maxMessageLength ?? PROGRESS_MESSAGE_MAX_LENGTH;
  let last = -Infinity;
  let waiting: ToolProgress | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let open = true;

  const send = (progress: ToolProgress) => {
    try {
      deliver(progress);
    } catch {
      // A caller that cannot take a report (its connection went) is no reason to fail the call.
    }
  };
  const flushWaiting = () => {
    timer = undefined;
    if (!open || waiting === undefined) return;
    const next = waiting;
    waiting = undefined;
    bucket.take();
    send(next);
  };

  return {
    report(progress) {
      if (!open) return;
      const clean = cleanProgress(progress, last, maxMessageLength);
      if (clean === undefined) return;
      last = clean.progress;
      if (waiting === undefined && bucket.take()) {
        send(clean);
        return;
      }
      waiting = clean;
      if (timer === undefined) {
        timer = setTimeout(flushWaiting, bucket.wait());
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- kept for callers in plain JavaScript and tool packages, which can pass what the type rules out
        timer.unref?.();
      }
    },
    end() {
      if (!open) return;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const next = waiting;
      waiting = undefined;
      open = false;
      if (next !== undefined) send(next);
    },
  };
}

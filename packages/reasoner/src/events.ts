import type { TurnResult } from './turn.js';

/**
 * What a turn reports while it runs, through `onEvent`. Every event names the session it happened in:
 * after a branch, the events of the rest of the turn name the new session. Each event is plain JSON, so
 * a host can forward it as it is (see {@link toServerSentEvent}).
 */
export type ReasonerEvent =
  | { readonly type: 'turn_started'; readonly sessionId: string; readonly mode: string }
  /** A model call begins (1 for the first of the turn). */
  | { readonly type: 'model_request'; readonly sessionId: string; readonly mode: string; readonly step: number }
  /** A piece of the model's visible text, as it streams. */
  | { readonly type: 'text_delta'; readonly sessionId: string; readonly delta: string }
  | {
      readonly type: 'tool_call_started';
      readonly sessionId: string;
      readonly callId: string;
      readonly name: string;
      readonly arguments: string;
    }
  /**
   * A running tool reported progress (`context.reportProgress`): `progress` grows from one event to the
   * next, `total` when known. Checked and bounded like on every surface: a flood sends a burst, then at
   * most 20 a second, the newest each time; none after the call's `tool_call_finished`.
   */
  | {
      readonly type: 'tool_call_progress';
      readonly sessionId: string;
      readonly callId: string;
      readonly name: string;
      readonly progress: number;
      readonly total?: number;
      readonly message?: string;
    }
  | {
      readonly type: 'tool_call_finished';
      readonly sessionId: string;
      readonly callId: string;
      readonly name: string;
      readonly successful: boolean;
      /** What the model reads back: the result JSON, or `{"error":{"message","code"}}`. */
      readonly output: string;
    }
  /** A client-executed tool's server part finished; the call now waits for the client's output. */
  | {
      readonly type: 'tool_call_pending';
      readonly sessionId: string;
      readonly callId: string;
      readonly name: string;
      readonly arguments: string;
      readonly serverResult: string;
    }
  /** The session's mode changed during the turn; the next model call uses the new mode. */
  | {
      readonly type: 'mode_changed';
      readonly sessionId: string;
      readonly fromMode: string;
      readonly toMode: string;
      readonly branch: boolean;
      /** With `branch: true`: the new session the work continues in. */
      readonly branchedSessionId?: string;
    }
  | { readonly type: 'turn_ended'; readonly result: TurnResult };

export type ReasonerEventType = ReasonerEvent['type'];

/** Receives a turn's events. Exceptions it throws are logged and do not stop the turn. */
export type ReasonerEventListener = (event: ReasonerEvent) => void;

/**
 * One server-sent event for a {@link ReasonerEvent}: `event: <type>` and its JSON on one `data:` line.
 * @example
 * reply.raw.write(toServerSentEvent(event)); // event: text_delta\ndata: {"type":"text_delta",...}\n\n
 */
export function toServerSentEvent(
  event: ReasonerEvent | { readonly type: 'error'; readonly code: string; readonly message: string },
): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

import { isRecord } from './conversation.js';
import { approvalIdOf } from './approvals.js';
import type { TurnStatus } from './turn.js';
import type { CallOutcome } from './turn-calls.js';

/** The tool whose success changes the session's mode (TUL-007); offered in every mode. */
export const MODE_CHANGE_TOOL = 'agent_change_mode';

export const CANCELLED = 'The turn was cancelled before the agent finished.';

/** A turn paused on calls waits for a person when one of them waits for an approval, else for the client. */
export function pausedStatus(pending: ReadonlyArray<{ readonly serverResult: string }>): TurnStatus {
  return pending.some((call) => approvalIdOf(call.serverResult) !== undefined)
    ? 'waiting_for_approval'
    : 'pending_tool_calls';
}

export function stepLimitMessage(maxSteps: number): string {
  return (
    `The agent stopped after ${maxSteps} model calls without a final answer: the step limit (maxSteps = ${maxSteps}) was reached. ` +
    'The tool results so far are kept; send another message (e.g. "continue") to let it go on, or raise maxSteps.'
  );
}

export function joinText(first: string, second: string): string {
  return first.trim() === '' ? second : `${first}\n\n${second}`;
}

/** The last successful `agent_change_mode` of a batch that asked for a branch, if any. */
export function branchRequest(
  outcomes: readonly CallOutcome[],
): { outcome: CallOutcome; payload: Record<string, unknown>; mode: string } | undefined {
  let found: { outcome: CallOutcome; payload: Record<string, unknown>; mode: string } | undefined;
  for (const outcome of outcomes) {
    if (outcome.tool !== MODE_CHANGE_TOOL || !outcome.successful) continue;
    let payload: unknown;
    try {
      payload = JSON.parse(outcome.output);
    } catch {
      continue;
    }
    if (!isRecord(payload) || payload.success !== true) continue;
    found =
      payload.branch === true && typeof payload.mode === 'string'
        ? { outcome, payload, mode: payload.mode }
        : undefined;
  }
  return found;
}

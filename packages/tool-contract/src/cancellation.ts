import type { AgentToolExecutionContext } from './agent-tool.js';

/**
 * The cancelled shape of AGN-005 §8: a successful result that says the call was cancelled. It is a
 * promise that the call's effect did not happen and will not happen; a tool that cannot keep that
 * promise reports what did happen instead, or that the outcome is unknown (`OUTCOME_UNKNOWN`).
 */
export interface CancelledPayload {
  readonly wasCancelled: true;
  readonly message: string;
  readonly elapsedMs?: number;
  readonly sessionId: string | null;
  readonly conversationId: string | null;
}

/** The cancelled shape as JSON text, for a call of `name` that stopped before it had any effect. */
export function cancelledJson(name: string, context: AgentToolExecutionContext, elapsedMs?: number): string {
  const payload: CancelledPayload = {
    wasCancelled: true,
    message: `${name} was cancelled by the caller before it finished; it made no change.`,
    ...(elapsedMs === undefined ? {} : { elapsedMs: Math.round(elapsedMs) }),
    sessionId: context.sessionId ?? null,
    conversationId: context.conversationId ?? null,
  };
  return JSON.stringify(payload);
}

/**
 * True when `error` is how an aborted signal surfaces: the signal's own reason, or an error named
 * `AbortError` or `TimeoutError` (what `fetch`, `node:timers/promises` and `AbortSignal.timeout` throw).
 */
export function isAbortError(error: unknown, signal?: AbortSignal): boolean {
  if (signal !== undefined && signal.aborted && error === signal.reason) return true;
  if (error === null || typeof error !== 'object') return false;
  const name = (error as { name?: unknown }).name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/** True when a successful result's JSON text is the cancelled shape (`"wasCancelled": true` at its top). */
export function reportsCancellation(json: string): boolean {
  if (!json.includes('wasCancelled')) return false;
  try {
    const value = JSON.parse(json) as unknown;
    return value !== null && typeof value === 'object' && (value as { wasCancelled?: unknown }).wasCancelled === true;
  } catch {
    return false;
  }
}

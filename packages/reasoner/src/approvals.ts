import type { AgentToolExecutionContext } from '@aptix/tool-contract';

/**
 * Approval gates in the agent loop, supplied by the host per turn. A gated call does not run: the
 * turn pauses with `waiting_for_approval`, and `resumeApprovals` continues it once every approval of
 * the step is decided. Both sides live in the session store, so a paused turn survives a restart.
 */
export interface TurnApprovals {
  /** Whether the call must wait for a person; when it must, the approval is created and named. */
  gate(
    name: string,
    argumentsJson: string,
    context: AgentToolExecutionContext,
  ): Promise<
    { readonly gated: false } | { readonly gated: true; readonly approvalId: string; readonly message: string }
  >;
  /**
   * What the model reads once the approval is decided: the call's result when it ran, or why it did not
   * (a denial with the person's note, an expiry). Undefined while nobody decided.
   */
  outcome(
    approvalId: string,
  ): Promise<
    | { readonly successful: true; readonly output: unknown }
    | { readonly successful: false; readonly error: { readonly message: string; readonly code?: string } }
    | undefined
  >;
}

/** The key in a pending call's record that names the approval it waits for. */
export const APPROVAL_ID_KEY = 'aptix_approval_id';

/** The record kept for a call that waits for a person (never sent to the model). */
export function awaitingApprovalRecord(approvalId: string, message: string): string {
  return JSON.stringify({ [APPROVAL_ID_KEY]: approvalId, status: 'pending_approval', message });
}

/** The approval a pending call waits for, if it waits for one. */
export function approvalIdOf(serverResult: string): string | undefined {
  try {
    const record = JSON.parse(serverResult) as Record<string, unknown> | null;
    const id = record !== null && typeof record === 'object' ? record[APPROVAL_ID_KEY] : undefined;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

import type { ToolApproval } from '@aptix/agent-sessions';

/** How a caller learns that a call waits for a person: nothing ran, and where to decide. */
export interface PendingApprovalView {
  readonly status: 'pending_approval';
  readonly approvalId: string;
  readonly toolName: string;
  readonly reason: string;
  readonly sessionId: string | null;
  readonly expiresAt: string;
  readonly message: string;
}

export function pendingApprovalView(approval: ToolApproval): PendingApprovalView {
  return {
    status: 'pending_approval',
    approvalId: approval.id,
    toolName: approval.toolName,
    reason: approval.reason,
    sessionId: approval.sessionId,
    expiresAt: approval.expiresAt,
    message: pendingApprovalMessage(approval),
  };
}

/** The text a model or a person reads: the call waits, nothing ran yet, and how to decide. */
export function pendingApprovalMessage(approval: ToolApproval): string {
  return (
    `${approval.toolName} awaits a person's approval (approval ${approval.id}): ${approval.reason} Nothing has run yet. ` +
    `Decide with POST /v1/approvals/${approval.id} and {"decision":"approve"} or {"decision":"deny"}, or \`aptix approvals approve ${approval.id}\`, before ${approval.expiresAt}; ` +
    `the call then runs once and its result appears at GET /v1/approvals/${approval.id}. Do not call the tool again for the same request.`
  );
}

/**
 * An approval as the HTTP API and the CLI show it. The asking span's traceparent stays inside: it is
 * for the spans that link to it (docs/observability.md), and a trace id is in the audit record.
 */
export function approvalView(approval: ToolApproval): Record<string, unknown> {
  let args: unknown;
  try {
    args = JSON.parse(approval.arguments);
  } catch {
    args = approval.arguments;
  }
  const { traceparent: _internal, ...shown } = approval;
  return { ...shown, arguments: args };
}

/**
 * Approval gates: a tool call that waits for a person. The store keeps each approval's whole life, so
 * that a restart loses none and a decision executes the call exactly once, across any number of hosts.
 *
 * Life of an approval:
 *
 *   pending ──approve──▶ approved ──claim──▶ executing ──complete──▶ executed | refused | outcome_unknown
 *      │ └──deny──▶ denied
 *      └──(expiry passes)──▶ expired
 *
 * Every arrow is one conditional UPDATE (`… WHERE status = <from>`), so of two hosts taking the same
 * arrow at once exactly one succeeds; the other reads the row as the winner left it.
 */

export type ApprovalStatus =
  'pending' | 'approved' | 'denied' | 'expired' | 'executing' | 'executed' | 'refused' | 'outcome_unknown';

/** A persisted approval. Times are ISO-8601 strings. */
export interface ToolApproval {
  readonly id: string;
  /** The agent session the call was made in, or null for a call outside any session. */
  readonly sessionId: string | null;
  readonly toolName: string;
  /** The validated arguments as canonical JSON text: exactly what runs when the call is approved. */
  readonly arguments: string;
  /** Why approval is needed, from the tool's policy. */
  readonly reason: string;
  /** Who made the call (an API key's name, a user), when known. */
  readonly requestedBy: string | null;
  readonly requestedAt: string;
  readonly expiresAt: string;
  readonly status: ApprovalStatus;
  readonly decidedBy: string | null;
  readonly decidedAt: string | null;
  readonly note: string | null;
  /** The call's InvokeResult once it ran (or why it was refused), as JSON. */
  readonly result: unknown;
  readonly completedAt: string | null;
  /**
   * The W3C `traceparent` of the span that asked (when the asking host traced it): the decision and the
   * execution, on whichever host they happen, link their spans to it.
   */
  readonly traceparent: string | null;
}

export interface NewToolApproval {
  readonly sessionId: string | null;
  readonly toolName: string;
  readonly arguments: string;
  readonly reason: string;
  readonly requestedBy: string | null;
  /** How long a person has to decide. */
  readonly ttlMs: number;
  /** The asking span's W3C `traceparent` (`00-<trace id>-<span id>-<flags>`), when the call is traced. */
  readonly traceparent?: string | null;
}

export interface ApprovalFilter {
  readonly sessionId?: string;
  readonly status?: ApprovalStatus;
  /** At most this many, newest first. Default 100, at most 1000. */
  readonly limit?: number;
}

/** What deciding an approval did. Only `decided` changed anything. */
export type ApprovalDecisionOutcome =
  | { readonly kind: 'decided'; readonly approval: ToolApproval }
  /** Someone decided first (or it already ran): the approval as they left it. */
  | { readonly kind: 'already_decided'; readonly approval: ToolApproval }
  /** Its expiry passed before this decision: it is now `expired`, and nothing runs. */
  | { readonly kind: 'expired'; readonly approval: ToolApproval }
  | { readonly kind: 'not_found' };

/** The terminal states a claimed approval can be completed with. */
export type ApprovalCompletion = 'executed' | 'refused' | 'outcome_unknown';

/** The persistence of approval gates, on the same database as the sessions. */
export interface ApprovalStore {
  create(input: NewToolApproval): Promise<ToolApproval>;
  get(id: string): Promise<ToolApproval | undefined>;
  list(filter?: ApprovalFilter): Promise<ToolApproval[]>;
  /** pending → approved | denied, unless the approval expired (→ expired) or was decided before. */
  decide(
    id: string,
    decision: 'approve' | 'deny',
    decidedBy: string | null,
    note: string | null,
  ): Promise<ApprovalDecisionOutcome>;
  /** approved → executing for `claimant`; undefined when another claimant took it first. */
  claim(id: string, claimant: string): Promise<ToolApproval | undefined>;
  /**
   * Claims approvals decided at least `olderThanMs` ago that nobody claimed: their deciding host stopped
   * between the decision and the execution. Each is claimed by at most one caller.
   */
  claimOrphaned(olderThanMs: number, claimant: string, limit: number): Promise<ToolApproval[]>;
  /** executing → executed | refused | outcome_unknown, with the result. Undefined when it was not executing. */
  complete(id: string, status: ApprovalCompletion, result: unknown): Promise<ToolApproval | undefined>;
  /**
   * Executions claimed at least `olderThanMs` ago and never completed: their host stopped while the
   * tool ran, so whether it took effect is unknown. They become `outcome_unknown`; none runs again.
   */
  abandonStale(olderThanMs: number): Promise<ToolApproval[]>;
  /** Pending approvals whose expiry passed become `expired`. */
  expireDue(): Promise<number>;
}

/** Bounds of what a caller can make the store keep. */
export const APPROVAL_NOTE_MAX_LENGTH = 2000;
export const APPROVAL_LIST_MAX = 1000;

export function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return 100;
  return Math.max(1, Math.min(APPROVAL_LIST_MAX, Math.trunc(limit)));
}

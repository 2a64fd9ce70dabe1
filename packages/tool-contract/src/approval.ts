import type { AgentToolExecutionContext } from './execution-context.js';

/** What a dynamic approval policy answers: whether a person must approve this call, and why. */
export interface ApprovalDecision {
  readonly required: boolean;
  /** Shown to the person asked, and stored with the approval. */
  readonly reason?: string;
}

/**
 * A tool's approval policy: `'always'` (every call waits for a person), `'never'`, or a function of the
 * validated arguments and the call's context, e.g. a refund over a threshold. A function may answer a
 * boolean or an {@link ApprovalDecision}; it must be synchronous and pure.
 *
 * @example
 * static readonly ApprovalPolicy: ApprovalPolicy<{ amount: number }> = ({ amount }) =>
 *   amount > 100 ? { required: true, reason: `A refund of ${amount} is over the 100 that needs no approval.` } : false;
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ApprovalPolicy<TArgs = any> =
  'always' | 'never' | ((args: TArgs, context: AgentToolExecutionContext) => ApprovalDecision | boolean);

/** How a policy is reported in listings (OpenAPI, GET /v1/tools, MCP `_meta`). */
export type ApprovalPolicyKind = 'always' | 'never' | 'dynamic';

/** The `_meta` key under which MCP listings carry a tool's approval policy. */
export const APPROVAL_META_KEY = 'aptix/approval';

/** The kind of a declared policy, or undefined when the declaration is not a policy at all. */
export function approvalPolicyKind(policy: unknown): ApprovalPolicyKind | undefined {
  if (policy === undefined || policy === 'never') return 'never';
  if (policy === 'always') return 'always';
  if (typeof policy === 'function') return 'dynamic';
  return undefined;
}

/** The answer of most calls to a gated tool, shared: a policy runs on every call. */
const NOT_REQUIRED = Object.freeze({ required: false, reason: '' });

/**
 * Evaluates a tool's policy for one call, after its arguments were validated. Fails closed: a policy
 * that throws or answers something else requires approval, and the reason says the policy failed.
 */
export function evaluateApprovalPolicy(
  toolName: string,
  policy: ApprovalPolicy | undefined,
  args: unknown,
  context: AgentToolExecutionContext,
): { readonly required: boolean; readonly reason: string } {
  // Asked first whether it is a function (the policy that runs per call): comparing a function to strings costs a generic comparison.
  if (typeof policy !== 'function') {
    if (policy === undefined || policy === 'never') return NOT_REQUIRED;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (policy === 'always') return { required: true, reason: `${toolName} always needs a person's approval.` };
    // Anything else is not a policy: calling it below throws, and the call waits for a person.
  }
  let answer: unknown;
  try {
    answer = policy(args, context);
  } catch {
    return {
      required: true,
      reason: `${toolName}'s approval policy failed on these arguments, so a person must decide.`,
    };
  }
  if (answer === false) return NOT_REQUIRED;
  if (answer === true) return { required: true, reason: `${toolName} needs a person's approval for these arguments.` };
  if (answer !== null && typeof answer === 'object' && typeof (answer as ApprovalDecision).required === 'boolean') {
    const { required, reason } = answer as ApprovalDecision;
    return {
      required,
      reason: required
        ? typeof reason === 'string' && reason.trim() !== ''
          ? reason
          : `${toolName} needs a person's approval for these arguments.`
        : '',
    };
  }
  return { required: true, reason: `${toolName}'s approval policy gave no clear answer, so a person must decide.` };
}

import type { AgentToolExecutionContext, LevelLogger } from '@aptix/tool-contract';
import type { TurnApprovals } from '@aptix/reasoner';
import type { HostCradle } from '../container.js';
import { ApprovalGate, declinedResult, type ApprovalObserver, type PresentedResult } from './approval-gate.js';
import { pendingApprovalMessage } from './present.js';

/** The context a call runs with in a session now, or why its mode refuses it (the host's session check). */
export type SessionCheck = (
  toolName: string,
  sessionId: string,
) => Promise<{ context: AgentToolExecutionContext } | { kind: 'refused'; code: string; message: string }>;

/** The host's approval gate, over its store, registry and executor; `checkSession` re-checks a session's mode when an approved call runs. */
export function hostApprovalGate(
  cradle: HostCradle,
  checkSession: SessionCheck,
  observer?: ApprovalObserver,
): ApprovalGate {
  return new ApprovalGate({
    ...(observer === undefined ? {} : { observer }),
    approvals: cradle.sessionManager.approvals,
    registry: cradle.registry,
    executor: cradle.executor,
    logger: cradle.pino,
    ttlMs: cradle.config.approvalTtlMs,
    // Asked at each sweep, so a tool registered later (a bridged server's new tool) counts too.
    maxCallMs: () => {
      const { registry, config } = cradle;
      const longest = registry
        .names()
        .reduce((most, name) => Math.max(most, registry.get(name)?.timeoutMs ?? 0), config.toolTimeoutMs);
      return longest + config.toolCancelGraceMs;
    },
    authorize: (approval, principal) => {
      const { principals } = cradle;
      if (approval.requestedBy === principal && !principals.allowsSelfApproval(approval.toolName)) {
        return {
          code: 'SELF_APPROVAL',
          message:
            `This principal asked for this call of ${approval.toolName}, so it cannot decide it: ` +
            `another principal with the approve permission must (separation of duties). For development ` +
            `only, approvals.allowSelfApproval can name the tool.`,
        };
      }
      if (!principals.of(principal).mayDecide(approval.toolName)) {
        return {
          code: 'FORBIDDEN',
          message: `Deciding approvals of ${approval.toolName} needs the permission approve: ${approval.toolName}, which this principal does not have.`,
        };
      }
      return undefined;
    },
    checkMode: async (approval) => {
      if (!cradle.registry.has(approval.toolName)) {
        return {
          ok: false,
          code: 'TOOL_NOT_FOUND',
          message: `Tool "${approval.toolName}" is no longer served by this host, so the approved call did not run.`,
        };
      }
      if (approval.sessionId === null) return { ok: true, context: {} };
      const scoped = await checkSession(approval.toolName, approval.sessionId);
      if ('kind' in scoped)
        return { ok: false, code: scoped.code, message: `${scoped.message} The approved call did not run.` };
      return { ok: true, context: scoped.context };
    },
  });
}

/** The agent loop's side of approval gates: gated calls pause the turn; decided approvals resume it. */
export function turnApprovalsOf(
  gate: () => ApprovalGate,
  actor: string | undefined,
  log: LevelLogger | undefined,
): TurnApprovals {
  return {
    gate: async (name, argumentsJson, context) => {
      const answer = await gate().gate(name, argumentsJson, context, actor ?? null, log);
      return answer.gated
        ? { gated: true, approvalId: answer.approval.id, message: pendingApprovalMessage(answer.approval) }
        : { gated: false };
    },
    outcome: async (approvalId) => {
      const approval = await gate().store.get(approvalId);
      if (approval === undefined)
        return {
          successful: false,
          error: {
            message: `Approval ${approvalId} no longer exists, so the call did not run.`,
            code: 'APPROVAL_NOT_FOUND',
          },
        };
      if (approval.status === 'denied' || approval.status === 'expired')
        return { successful: false, error: declinedResult(approval).errors[0]! };
      if (approval.status !== 'executed' && approval.status !== 'refused' && approval.status !== 'outcome_unknown')
        return undefined;
      const result = approval.result as PresentedResult;
      return result.successful
        ? { successful: true, output: result.result }
        : {
            successful: false,
            error: result.errors[0] ?? { message: `${approval.toolName} failed without saying why.` },
          };
    },
  };
}

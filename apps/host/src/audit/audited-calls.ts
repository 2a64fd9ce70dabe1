import {
  InvokeResult,
  type AdminLogger,
  type AgentToolExecutionContext,
  type AgentToolExecutor,
  type ExecuteOptions,
  type RegisteredTool,
} from '@aptix/tool-contract';
import type { ToolApproval } from '@aptix/agent-sessions';
import type { CallOptions, CallOutcome } from '../host-api.js';
import type { ApprovalObserver, PresentedResult } from '../approvals/approval-gate.js';
import { activeTraceId, outcomeOf, type AuditTrail } from './audit-trail.js';

// Where the audit trail meets the calls: every surface's call (AptixHost.call: HTTP, MCP on both
// revisions, the fast lane, aptix_call_tool, the CLI), the approval gate's decisions and the approved
// calls it runs, and the agent loop's calls (its executor).

/** The outcome code of a call request: the result's, or why it never reached the tool. */
function outcomeCode(outcome: CallOutcome): string {
  switch (outcome.kind) {
    case 'result':
      return outcomeOf(outcome.result);
    case 'pending_approval':
      return 'PENDING_APPROVAL';
    case 'refused':
      return outcome.code;
    case 'not_found':
      return 'TOOL_NOT_FOUND';
  }
}

/** Runs a call through `run` and records it once it finished, when the trail records the tool's calls. */
export function auditedCall(
  audit: AuditTrail,
  entry: RegisteredTool | undefined,
  name: string,
  args: unknown,
  options: CallOptions,
  run: () => Promise<CallOutcome>,
): Promise<CallOutcome> {
  // An unknown tool changes nothing: nothing to record.
  if (entry === undefined || !audit.recordsCallsOf(entry.annotations)) return run();
  const startedAt = performance.now();
  const startedAtMs = Date.now();
  const traceId = activeTraceId();
  const record = (outcome: string, finished?: CallOutcome) =>
    audit.call({
      tool: name,
      args,
      principal: options.actor,
      sessionId: finished?.kind === 'result' ? (finished.session?.id ?? options.sessionId) : options.sessionId,
      startedAt,
      startedAtMs,
      traceId,
      outcome,
      ...(finished?.kind === 'result' ? { mode: finished.session?.mode ?? null, result: finished.result } : {}),
      ...(finished?.kind === 'pending_approval' ? { approvalId: finished.approval.id } : {}),
    });
  return run().then(
    (outcome) => {
      record(outcomeCode(outcome), outcome);
      return outcome;
    },
    (error: unknown) => {
      record('HOST_ERROR');
      throw error;
    },
  );
}

const DECIDED = { approve: 'APPROVED', deny: 'DENIED' } as const;

/** The approval gate's observer that records each decision, each refused attempt, and each approved call's run. */
export function approvalObserver(audit: AuditTrail): ApprovalObserver {
  return {
    decided(approval: ToolApproval, decision, principal, outcome) {
      audit.decision({
        approvalId: approval.id,
        tool: approval.toolName,
        sessionId: approval.sessionId,
        arguments: approval.arguments,
        principal,
        decision,
        outcome: outcome === 'decided' ? DECIDED[decision] : outcome,
      });
    },
    ran(approval: ToolApproval, result: PresentedResult, started, mode) {
      if (!audit.enabled) return;
      audit.call({
        tool: approval.toolName,
        args: approval.arguments,
        // The call is the principal's that asked for it; the decision record names who approved it.
        principal: approval.requestedBy,
        sessionId: approval.sessionId,
        startedAt: started.at,
        startedAtMs: started.atMs,
        traceId: activeTraceId(),
        outcome: result.successful ? 'OK' : (result.errors[0]?.code ?? 'ERROR'),
        approvalId: approval.id,
        mode: mode ?? null,
        ...(result.successful ? { result: InvokeResult.create(JSON.stringify(result.result)) } : {}),
      });
    },
  };
}

/** The principal each agent-loop turn runs for, by the logger the turn's calls carry (see {@link turnLogger}). */
const principals = new WeakMap<AdminLogger, string>();

/** The principal an agent-loop call runs for, by the logger its turn handed the executor; undefined without a key. */
export function turnPrincipal(logger: AdminLogger | undefined): string | undefined {
  return logger === undefined ? undefined : principals.get(logger);
}

/** A turn's logger, remembered as the principal's: the agent loop's calls through it are recorded as that principal's. */
export function turnLogger(logger: AdminLogger, principal: string | undefined): AdminLogger {
  if (principal !== undefined) principals.set(logger, principal);
  return logger;
}

/**
 * The executor the agent loop runs its tools with: the host's, with each call of a recorded tool
 * recorded once it finished. The rest of the executor is the host's own.
 */
export function auditedExecutor(
  executor: AgentToolExecutor,
  audit: AuditTrail,
  toolOf: (name: string) => RegisteredTool | undefined,
): AgentToolExecutor {
  if (!audit.enabled) return executor;
  const execute = (
    name: string,
    args: unknown,
    context: AgentToolExecutionContext,
    options?: ExecuteOptions,
  ): Promise<InvokeResult<string>> => {
    const entry = toolOf(name);
    if (entry === undefined || !audit.recordsCallsOf(entry.annotations))
      return executor.execute(name, args, context, options);
    const startedAt = performance.now();
    const startedAtMs = Date.now();
    const traceId = activeTraceId();
    return executor.execute(name, args, context, options).then((result) => {
      audit.call({
        tool: name,
        args,
        principal: turnPrincipal(options?.logger) ?? null,
        sessionId: context.sessionId ?? null,
        startedAt,
        startedAtMs,
        traceId,
        outcome: outcomeOf(result),
        mode: context.mode ?? null,
        result,
      });
      return result;
    });
  };
  return new Proxy(executor, {
    get: (target, key) => {
      if (key === 'execute') return execute;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  canonicalJson,
  createAdminLogger,
  type ContentBlock,
  type LevelLogger,
  decodeArguments,
  evaluateApprovalPolicy,
  ExecutionErrorCode,
  type AgentToolExecutionContext,
  type AgentToolExecutor,
  type AgentToolRegistry,
  type RegisteredTool,
} from '@aptix/tool-contract';
import type { ApprovalDecisionOutcome, ApprovalStore, ToolApproval } from '@aptix/agent-sessions';
import type { Logger } from 'pino';
import { workerEvaluation } from '../isolation/worker-policy.js';
import { activeTraceparent, linkToAsker, tracedApproval } from '../telemetry/approval-spans.js';

/** The InvokeResult as callers see it (`result` parsed), the shape stored with an executed approval. */
export interface PresentedResult {
  readonly successful: boolean;
  readonly result: unknown;
  readonly errors: ReadonlyArray<{ message: string; code?: string }>;
  /** The tool's content blocks beyond JSON text, when it returned any. */
  readonly content?: readonly ContentBlock[];
}

/** What the gate needs to know about where an approved call may run now. */
export type ModeCheck = (
  approval: ToolApproval,
) => Promise<{ ok: true; context: AgentToolExecutionContext } | { ok: false; code: string; message: string }>;

export interface ApprovalGateOptions {
  readonly approvals: ApprovalStore;
  readonly registry: AgentToolRegistry;
  readonly executor: AgentToolExecutor;
  readonly logger: Logger;
  /** Re-checks the session and its mode when an approved call is about to run. */
  readonly checkMode: ModeCheck;
  /** How long a person has to decide. */
  readonly ttlMs: number;
  /**
   * The longest a tool call can run here, its time-out plus the grace a stopped call gets to settle:
   * an execution claimed longer ago than this plus a margin was cut off by its host's end.
   */
  readonly maxCallMs: () => number;
  /**
   * Whether `principal` may decide `approval` (its approve permission, and separation of duties: never
   * the principal that asked); undefined when it may, else why not. Without it, anyone may decide.
   */
  readonly authorize?: (
    approval: ToolApproval,
    principal: string,
  ) => { readonly code: string; readonly message: string } | undefined;
  /** Told of every decision and every approved call's run (the audit trail). */
  readonly observer?: ApprovalObserver;
}

/** What the gate tells its observer; it never waits for it. */
export interface ApprovalObserver {
  /** A decision: `decided`, or why it changed nothing (`ALREADY_DECIDED`, `APPROVAL_EXPIRED`, a refusal's code). */
  decided(approval: ToolApproval, decision: 'approve' | 'deny', principal: string | null, outcome: string): void;
  /** An approved call ran (or was refused when it was to run); `mode` is the session's mode it ran in. */
  ran(
    approval: ToolApproval,
    result: PresentedResult,
    started: { readonly at: number; readonly atMs: number },
    mode: string | undefined,
  ): void;
}

/** A decision the principal may not make: nothing changed. */
export type DecisionOutcome =
  ApprovalDecisionOutcome | { readonly kind: 'forbidden'; readonly code: string; readonly message: string };

/** The outcome an observer is told of a decision the store answered. */
const OBSERVED = { decided: 'decided', already_decided: 'ALREADY_DECIDED', expired: 'APPROVAL_EXPIRED' } as const;

/** What {@link ApprovalGate.assess} finds: whether the call waits, or the worker that must say. */
/**
 * `validated`: `args` is what decodeArguments gave for the tool's registered parameters, to be handed
 * to the executor as such (`ExecuteOptions.argumentsValidated`), so the call is checked once.
 */
export type AssessedCall =
  | { readonly required: false; readonly args: unknown; readonly validated: boolean }
  | { readonly required: true; readonly args: object; readonly reason: string }
  | { readonly inWorker: NonNullable<ReturnType<typeof workerEvaluation>>; readonly args: object };

export type GateAnswer =
  | { readonly gated: false; readonly args: unknown; readonly validated: boolean }
  | { readonly gated: true; readonly approval: ToolApproval };

/**
 * Approval gates on the host's side: whether a call must wait for a person (after its arguments were
 * validated, so an invalid call never asks anyone), the decision, and the one execution an approval
 * gets. A sweep on every host picks up what a stopped host left: decided calls it never ran, and
 * executions it never finished (recorded as outcome unknown, never run twice).
 */
export class ApprovalGate {
  /** Identifies this host in the approvals it claims. */
  readonly claimant = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #o: ApprovalGateOptions;
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(options: ApprovalGateOptions) {
    this.#o = options;
  }

  get store(): ApprovalStore {
    return this.#o.approvals;
  }

  /**
   * Decides whether a call to a gated tool runs now or waits. Invalid arguments are not gated: the
   * executor refuses them with the usual named-field message.
   */
  async gate(
    name: string,
    args: unknown,
    context: AgentToolExecutionContext,
    requestedBy: string | null,
    log: LevelLogger = this.#o.logger,
  ): Promise<GateAnswer> {
    const verdict = this.assess(name, args, context);
    if ('inWorker' in verdict) {
      const { required, reason } = await verdict.inWorker(verdict.args, context);
      return required
        ? this.#hold(name, verdict.args, reason, context, requestedBy, log)
        : { gated: false, args: verdict.args, validated: true };
    }
    return verdict.required
      ? this.#hold(name, verdict.args, verdict.reason, context, requestedBy, log)
      : { gated: false, args: verdict.args, validated: verdict.validated };
  }

  /**
   * Whether a call must wait for a person, and the arguments it runs with: the policy on the validated
   * arguments. Synchronous, so a call its policy lets through costs no await; only an isolated tool's
   * argument-dependent policy is left to evaluate in its worker (`inWorker`, asynchronous, failing
   * closed). Invalid arguments are not gated: the executor refuses them with its usual message.
   */
  assess(name: string, args: unknown, context: AgentToolExecutionContext): AssessedCall {
    return this.assessTool(this.#o.registry.get(name), args, context);
  }

  /** {@link assess} for a tool's registry entry, as the caller read it in the same turn (one lookup per call). */
  assessTool(entry: RegisteredTool | undefined, args: unknown, context: AgentToolExecutionContext): AssessedCall {
    if (entry === undefined || entry.approval === 'never') return { required: false, args, validated: false };
    const name = entry.name;
    const decoded = decodeArguments<object>(name, entry.parameters, args);
    if (!decoded.ok) return { required: false, args, validated: false };
    const inWorker = workerEvaluation(entry.approvalPolicy);
    if (inWorker) return { inWorker, args: decoded.value };
    const { required, reason } = evaluateApprovalPolicy(name, entry.approvalPolicy, decoded.value, context);
    // The policy gets the validated arguments, which then go on to the tool as they are (not checked again).
    return required ? { required, args: decoded.value, reason } : { required, args: decoded.value, validated: true };
  }

  /**
   * Stores the pending approval of a call that must wait. An approved call runs its stored text, which
   * the executor parses and checks again, refusing a `__proto__` or `constructor.prototype` key at any
   * depth (an object is checked at its top only). So the text is checked here the same way first: a call
   * the executor would refuse goes to it as that text and is refused with its usual message, and nobody
   * is asked. The text is also exactly what is stored, shown to the person and run.
   */
  async #hold(
    name: string,
    args: object,
    reason: string,
    context: AgentToolExecutionContext,
    requestedBy: string | null,
    log: LevelLogger,
  ): Promise<GateAnswer> {
    const text = JSON.stringify(args);
    const parameters = this.#o.registry.get(name)?.parameters;
    const checked = parameters === undefined ? undefined : decodeArguments<object>(name, parameters, text);
    if (checked !== undefined && !checked.ok) return { gated: false, args: text, validated: false };
    const approval = await tracedApproval(
      'ask',
      { 'gen_ai.tool.name': name },
      () =>
        this.#o.approvals.create({
          sessionId: context.sessionId ?? null,
          toolName: name,
          arguments: canonicalJson(checked?.value ?? args),
          reason,
          requestedBy,
          ttlMs: this.#o.ttlMs,
          // The ask span's context: the decision and the execution, on any host, link to it.
          traceparent: activeTraceparent(),
        }),
      (span, asked) => span.setAttribute('aptix.approval.id', asked.id),
    );
    log.info(
      { approvalId: approval.id, tool: name, sessionId: approval.sessionId, requestedBy },
      `${name} awaits approval ${approval.id}: ${reason}`,
    );
    return { gated: true, approval };
  }

  /**
   * Records a person's decision. An approval runs its stored arguments once, here, and the stored
   * approval then carries the result; a denial stores the denial. Deciding what was already decided,
   * or what expired, changes nothing and says so.
   */
  decide(
    id: string,
    decision: 'approve' | 'deny',
    decidedBy: string | null,
    note: string | null,
    log: LevelLogger = this.#o.logger,
    principal?: string,
  ): Promise<DecisionOutcome> {
    return tracedApproval(
      'decide',
      { 'aptix.approval.id': id, 'aptix.approval.decision': decision },
      () => this.#decide(id, decision, decidedBy, note, log, principal),
      (span, outcome) => {
        span.setAttribute('aptix.approval.outcome', outcome.kind);
        if ('approval' in outcome) linkToAsker(span, outcome.approval.traceparent);
      },
    );
  }

  async #decide(
    id: string,
    decision: 'approve' | 'deny',
    decidedBy: string | null,
    note: string | null,
    log: LevelLogger,
    principal: string | undefined,
  ): Promise<DecisionOutcome> {
    // Who asked never changes, so reading it before the decision is safe.
    if (principal !== undefined && this.#o.authorize !== undefined) {
      const current = await this.#o.approvals.get(id);
      const refusal = current === undefined ? undefined : this.#o.authorize(current, principal);
      if (refusal !== undefined) {
        log.warn({ approvalId: id, principal, code: refusal.code }, `approval ${id} not decided: ${refusal.message}`);
        this.#o.observer?.decided(current!, decision, principal, refusal.code);
        return { kind: 'forbidden', ...refusal };
      }
    }
    const outcome = await this.#o.approvals.decide(id, decision, decidedBy, note);
    if (outcome.kind !== 'not_found')
      this.#o.observer?.decided(outcome.approval, decision, principal ?? decidedBy, OBSERVED[outcome.kind]);
    if (outcome.kind !== 'decided') return outcome;
    log.info(
      { approvalId: id, decision, decidedBy },
      `approval ${id} ${decision === 'approve' ? 'approved' : 'denied'}${decidedBy ? ` by ${decidedBy}` : ''}`,
    );
    if (decision === 'deny') return outcome;
    const claimed = await this.#o.approvals.claim(id, this.claimant);
    // Claimed by another host's sweep in between (only after orphanAfterMs): it runs it, once.
    if (claimed === undefined)
      return { kind: 'decided', approval: (await this.#o.approvals.get(id)) ?? outcome.approval };
    return { kind: 'decided', approval: await this.execute(claimed, log) };
  }

  /** Runs a claimed approval's stored arguments once and records the result; never throws. `log` gets its lines and the tool's. */
  execute(approval: ToolApproval, log: LevelLogger = this.#o.logger): Promise<ToolApproval> {
    return tracedApproval(
      'execute',
      { 'aptix.approval.id': approval.id, 'gen_ai.tool.name': approval.toolName },
      () => this.#execute(approval, log),
      (span, ran) => span.setAttribute('aptix.approval.status', ran.status),
      approval.traceparent,
    );
  }

  async #execute(approval: ToolApproval, log: LevelLogger): Promise<ToolApproval> {
    let status: 'executed' | 'refused' | 'outcome_unknown' = 'executed';
    let result: PresentedResult;
    const started = { at: performance.now(), atMs: Date.now() };
    let mode: string | undefined;
    try {
      const where = await this.#o.checkMode(approval);
      if (where.ok) mode = where.context.mode;
      if (!where.ok) {
        status = 'refused';
        result = { successful: false, result: null, errors: [{ message: where.message, code: where.code }] };
      } else {
        const outcome = await this.#o.executor.execute(
          approval.toolName,
          approval.arguments,
          where.context,
          log === this.#o.logger ? undefined : { logger: createAdminLogger(log) },
        );
        result = !outcome.successful
          ? { successful: false, result: null, errors: outcome.errors }
          : {
              successful: true,
              result: JSON.parse(outcome.result) as unknown,
              errors: [],
              ...(outcome.content === undefined ? {} : { content: outcome.content }),
            };
        // A call that may or may not have taken effect is stored as such, never as plainly executed.
        if (!outcome.successful && outcome.errors.some((error) => error.code === ExecutionErrorCode.OUTCOME_UNKNOWN))
          status = 'outcome_unknown';
      }
    } catch (error) {
      log.error({ approvalId: approval.id, err: error }, `approval ${approval.id}: the approved call could not be run`);
      status = 'refused';
      result = {
        successful: false,
        result: null,
        errors: [
          {
            message: `The approved call to ${approval.toolName} could not be run: the host failed before the tool started. Nothing ran.`,
            code: 'APPROVAL_NOT_RUN',
          },
        ],
      };
    }
    this.#o.observer?.ran(approval, result, started, mode);
    const completed = await this.#o.approvals.complete(approval.id, status, result);
    log.info(
      { approvalId: approval.id, status, successful: result.successful },
      `approval ${approval.id}: ${status === 'refused' ? 'refused when it was to run' : 'ran'}`,
    );
    return completed ?? (await this.#o.approvals.get(approval.id)) ?? approval;
  }

  /**
   * One sweep: expires what nobody decided, runs what a stopped host approved but never claimed, and
   * records as outcome unknown what a stopped host claimed but never finished.
   */
  async sweep(orphanAfterMs: number): Promise<void> {
    const { approvals, logger } = this.#o;
    await approvals.expireDue();
    for (const abandoned of await approvals.abandonStale(this.#o.maxCallMs() + orphanAfterMs)) {
      logger.warn(
        { approvalId: abandoned.id, tool: abandoned.toolName },
        `approval ${abandoned.id}: the host running it stopped before it finished; recorded as outcome unknown, not run again`,
      );
    }
    for (const orphan of await approvals.claimOrphaned(orphanAfterMs, this.claimant, 20)) {
      logger.warn(
        { approvalId: orphan.id, tool: orphan.toolName },
        `approval ${orphan.id}: approved but never run (its host stopped); running it now`,
      );
      await this.execute(orphan);
    }
  }

  /** Sweeps now and then every `intervalMs`, until `stop()`. A failed sweep is logged and retried. */
  start(intervalMs: number, orphanAfterMs: number): void {
    const run = () =>
      this.sweep(orphanAfterMs).catch((error: unknown) =>
        this.#o.logger.error({ err: error }, 'the approval sweep failed; it runs again shortly'),
      );
    void run();
    this.#sweeper = setInterval(() => void run(), intervalMs);
    this.#sweeper.unref();
  }

  stop(): void {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }
}

/** The failed result a denied or expired approval gives the caller, and the model: a person's choice, not a technical failure. */
export function declinedResult(approval: ToolApproval): PresentedResult {
  if (approval.status === 'expired') {
    return {
      successful: false,
      result: null,
      errors: [
        {
          message: `Nobody approved the call to ${approval.toolName} before its approval expired (${approval.expiresAt}), so it did not run. Ask the user whether to request it again.`,
          code: ExecutionErrorCode.APPROVAL_EXPIRED,
        },
      ],
    };
  }
  const who = approval.decidedBy ? ` (${approval.decidedBy})` : '';
  const note = approval.note ? ` Their note: "${approval.note}"` : '';
  return {
    successful: false,
    result: null,
    errors: [
      {
        message: `The person asked to approve this call to ${approval.toolName}${who} declined it, so it did not run.${note}`,
        code: ExecutionErrorCode.APPROVAL_DENIED,
      },
    ],
  };
}

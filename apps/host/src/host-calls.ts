import {
  createAdminLogger,
  type AgentToolExecutionContext,
  type ExecuteOptions,
  type RegisteredTool,
} from '@aptix/tool-contract';
import { toolNotInModeMessage } from '@aptix/tool-mode-catalog';
import type { SessionHead } from '@aptix/agent-sessions';
import type { AptixHost } from './aptix-host.js';
import type { HostCradle } from './container.js';
import type { LiveTools } from './live-tools.js';
import { auditedCall } from './audit/audited-calls.js';
import { sessionNotFound, withSinks, type CallOptions, type CallOutcome } from './host-api.js';

/** A call's context in a session, and the session as read for it. */
export interface ScopedCall {
  readonly context: AgentToolExecutionContext;
  readonly session: SessionHead;
}

/** The executor's options of a call whose arguments a policy check validated, and nothing else: made once. */
const VALIDATED: ExecuteOptions = Object.freeze({ argumentsValidated: true });

/** The singletons a call uses, resolved once by the host. */
export type CallServices = Pick<HostCradle, 'registry' | 'executor' | 'modeCatalog' | 'sessionManager'> & {
  liveTools: LiveTools | undefined;
};

/**
 * The host's call path (AptixHost.call): permissions, the session's mode read on every call, approval
 * gates, the audit trail, then the executor. Written as promise chains rather than async functions where
 * a call takes no await of its own: each async layer costs a call a few turns of the microtask queue.
 */
export class HostCalls {
  constructor(
    private readonly host: Pick<AptixHost, 'permissions' | 'audit' | 'approvals' | 'maySee' | 'cradle'>,
    private readonly services: () => CallServices,
    /** The tools a mode offers now, listed and as a set (kept by the host until the tools change). */
    private readonly offeredIn: (mode: string) => {
      readonly names: readonly string[];
      readonly set: ReadonlySet<string>;
    },
  ) {}

  /**
   * Calls a tool. With a session, only the tools of the session's current mode may run, and the
   * context carries the session's ids, org, user and mode.
   */
  call(name: string, args: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    // Calls that change something (and read-only ones when asked) leave an audit record, written later.
    const audit = this.host.audit;
    if (!audit.enabled) return this.#call(name, args, options);
    return auditedCall(audit, this.services().registry.get(name), name, args, options, () =>
      this.#call(name, args, options),
    );
  }

  #call(name: string, args: unknown, options: CallOptions): Promise<CallOutcome> {
    try {
      const { registry, executor, liveTools } = this.services();
      const entry = registry.get(name);
      if (entry === undefined) {
        const withdrawn = liveTools?.retired(name);
        return Promise.resolve({
          kind: 'not_found',
          message: `${withdrawn ?? `Tool "${name}" does not exist.`} Available tools: ${registry.names().join(', ')}.`,
        });
      }
      if (options.actor !== undefined) {
        // A principal calls only what its permissions allow (a key without an entry: everything).
        const refused = this.host.permissions.refusal(options.actor, entry, args);
        if (refused !== undefined) return Promise.resolve(refused);
      }
      if (entry.approval !== 'never') return this.#callGated(entry, args, options);
      if (options.sessionId === undefined) {
        // No session to read, so no await: the common stateless call spares two turns of the microtask queue.
        const context: AgentToolExecutionContext =
          options.conversationId === undefined ? {} : { conversationId: options.conversationId };
        if (options.onProgress !== undefined || options.onLog !== undefined || options.input !== undefined)
          return this.#callInSession(name, args, undefined, options);
        return executor
          .execute(name, args, context, this.#executeOptions(options))
          .then((result) => ({ kind: 'result', result, session: undefined }));
      }
      return this.#callInSession(name, args, options.sessionId, options);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** The context a call runs with in a session, or why the session's mode refuses it now. */
  sessionContext(
    name: string,
    sessionId: string,
    conversationId: string | undefined,
    actor?: string,
  ): Promise<ScopedCall | Extract<CallOutcome, { kind: 'refused' }>> {
    // Read on every call, never cached: a mode change made through another host applies to the next call.
    // One prepared single-row read (no history); the mode's tools come from the catalog, held in memory.
    // A promise chain, not async functions: each async layer costs a call a few turns of the microtask queue.
    return this.services()
      .sessionManager.getSessionHead(sessionId)
      .then((session) =>
        this.#scoped(
          name,
          sessionId,
          conversationId,
          actor === undefined || session === undefined || this.host.maySee(session, actor) ? session : undefined,
        ),
      );
  }

  #scoped(
    name: string,
    sessionId: string,
    conversationId: string | undefined,
    session: SessionHead | undefined,
  ): ScopedCall | Extract<CallOutcome, { kind: 'refused' }> {
    if (session === undefined)
      return { kind: 'refused', code: 'SESSION_NOT_FOUND', message: sessionNotFound(sessionId) };
    const allowed = this.offeredIn(session.mode);
    if (!allowed.set.has(name)) {
      return {
        kind: 'refused',
        code: 'TOOL_NOT_IN_MODE',
        message: toolNotInModeMessage({
          tool: name,
          mode: session.mode,
          sessionId: session.id,
          offered: allowed.names,
        }),
      };
    }
    // Built field by field: spreads of optional parts cost more than the rest of this step.
    const context: { -readonly [K in keyof AgentToolExecutionContext]: AgentToolExecutionContext[K] } = {
      sessionId: session.id,
    };
    if (conversationId !== undefined) context.conversationId = conversationId;
    if (session.org !== null) context.org = session.org;
    if (session.user !== null) context.user = session.user;
    context.mode = session.mode;
    return { context, session };
  }

  /** A call in a session (checked against its mode), or without one when `sessionId` is undefined; with the caller's progress and log sinks. */
  #callInSession(
    name: string,
    args: unknown,
    sessionId: string | undefined,
    options: CallOptions,
  ): Promise<CallOutcome> {
    if (sessionId === undefined)
      return this.#run(
        name,
        args,
        {
          context: options.conversationId === undefined ? {} : { conversationId: options.conversationId },
          session: undefined,
        },
        options,
      );
    return this.sessionContext(name, sessionId, options.conversationId, options.actor).then((scoped) =>
      'kind' in scoped ? scoped : this.#run(name, args, scoped, options),
    );
  }

  #run(
    name: string,
    args: unknown,
    scoped: ScopedCall | { context: AgentToolExecutionContext; session: undefined },
    options: CallOptions,
  ): Promise<CallOutcome> {
    return this.services()
      .executor.execute(name, args, withSinks(scoped.context, options), this.#executeOptions(options))
      .then((result) => ({ kind: 'result', result, session: scoped.session }));
  }

  /** The executor's options for a call: its cancellation, and its logger (one naming the actor when only that is given). */
  #executeOptions(options: CallOptions, argumentsValidated = false): ExecuteOptions | undefined {
    const log =
      options.logger ??
      (options.actor === undefined ? undefined : this.host.cradle.pino.child({ actor: options.actor }));
    if (log === undefined && !argumentsValidated) return options.signal ? { signal: options.signal } : undefined;
    if (log === undefined && !options.signal) return VALIDATED;
    return {
      signal: options.signal,
      logger: log === undefined ? undefined : createAdminLogger(log),
      argumentsValidated,
    };
  }

  /** A call to a tool with an approval policy: it runs now, or waits for a person (nothing runs then). */
  #callGated(entry: RegisteredTool, args: unknown, options: CallOptions): Promise<CallOutcome> {
    const name = entry.name;
    if (options.sessionId === undefined) {
      // No session to read: a call its policy lets through runs with no await of its own, as an ungated one.
      const context: AgentToolExecutionContext =
        options.conversationId === undefined ? {} : { conversationId: options.conversationId };
      const verdict = this.host.approvals().assessTool(entry, args, context);
      if ('required' in verdict && !verdict.required) {
        return this.services()
          .executor.execute(
            name,
            verdict.args,
            withSinks(context, options),
            this.#executeOptions(options, verdict.validated),
          )
          .then((result) => ({ kind: 'result', result, session: undefined }));
      }
    }
    return this.#callGatedAsync(name, args, options);
  }

  /** A gated call in a session (read first), one that waits for a person, or one whose tool's worker decides. */
  async #callGatedAsync(name: string, args: unknown, options: CallOptions): Promise<CallOutcome> {
    const { executor } = this.services();
    let context: AgentToolExecutionContext =
      options.conversationId === undefined ? {} : { conversationId: options.conversationId };
    let session: SessionHead | undefined;
    if (options.sessionId !== undefined) {
      const scoped = await this.sessionContext(name, options.sessionId, options.conversationId, options.actor);
      if ('kind' in scoped) return scoped;
      ({ context, session } = scoped);
    }
    const answer = await this.host.approvals().gate(name, args, context, options.actor ?? null, options.logger);
    if (answer.gated) return { kind: 'pending_approval', approval: answer.approval };
    // Runs now, for this caller: its progress and log sinks apply (a call that waits runs later, for no one listening).
    const result = await executor.execute(
      name,
      answer.args,
      withSinks(context, options),
      this.#executeOptions(options, answer.validated),
    );
    return { kind: 'result', result, session };
  }
}

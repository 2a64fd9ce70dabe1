import type { AwilixContainer } from 'awilix';
import {
  createAdminLogger,
  InvokeResult,
  type AgentToolExecutionContext,
  type RegisteredTool,
  type LevelLogger,
  type DefinitionByFormat,
  type DefinitionFormat,
  type ExecuteOptions,
} from '@aptix/tool-contract';
import { toolNamesForMode, toolNotInModeMessage, type AgentModeSummary } from '@aptix/tool-mode-catalog';
import type { AgentSession, HistoryPageRequest, SessionHead } from '@aptix/agent-sessions';
import { ReasonerError, type Reasoner, type TurnApprovals } from '@aptix/reasoner';
import { ToolFinder } from '@aptix/tool-search';
import type { HostPermissions } from './host-permissions.js';
import type { HostCradle } from './container.js';
import type { LiveTools } from './live-tools.js';
import type { ApprovalGate } from './approvals/approval-gate.js';
import { hostApprovalGate, turnApprovalsOf } from './approvals/host-gate.js';
import { AuditTrail } from './audit/audit-trail.js';
import { approvalObserver, auditedCall } from './audit/audited-calls.js';
import {
  refusedInput,
  ScopeError,
  sessionNotFound,
  toSessionView,
  withSinks,
  type CallOptions,
  type CallOutcome,
  type SessionPageView,
  type SessionView,
  type ToolScope,
} from './host-api.js';

export {
  presentResult,
  ScopeError,
  toSessionView,
  type CallOptions,
  type CallOutcome,
  type SessionPageView,
  type SessionView,
  type ToolScope,
} from './host-api.js';
export { InvokeResult };

/**
 * What every surface (CLI, HTTP, MCP) does, in one place: list tools for a mode or a session, call a
 * tool under the session's mode, create and show sessions. No session state is cached across calls:
 * several hosts on one database always see each other's mode changes.
 */
/** A call's context in a session, and the session as read for it. */
interface ScopedCall {
  readonly context: AgentToolExecutionContext;
  readonly session: SessionHead;
}

/** The executor's options of a call whose arguments a policy check validated, and nothing else: made once. */
const VALIDATED: ExecuteOptions = Object.freeze({ argumentsValidated: true });

export class AptixHost {
  /** The singletons a call uses, resolved once: each read of the cradle is an awilix resolution. */
  #services:
    | (Pick<HostCradle, 'registry' | 'executor' | 'modeCatalog' | 'sessionManager'> & {
        liveTools: LiveTools | undefined;
      })
    | undefined;
  /** The tools each mode offers, listed and as a set. The cache is dropped when the registry changes (its revision). */
  readonly #offered = new Map<string, { readonly names: readonly string[]; readonly set: ReadonlySet<string> }>();
  #offeredFor = -1;
  /** Each mode's searchable tools (aptix_find_tools), dropped with the offered lists when the tools change. */
  readonly #finders = new Map<string, ToolFinder>();
  #deferred: boolean | readonly string[] | undefined;
  #permissions: HostPermissions | undefined;
  #gate: ApprovalGate | undefined;
  #audit: AuditTrail | undefined;
  /** Run first when the host closes, while the session store is still open (MCP tasks record that they stopped). */
  readonly #beforeClose: Array<() => Promise<void>> = [];

  constructor(readonly container: AwilixContainer<HostCradle>) {}

  /** Registers work to finish before the host releases its services (the session store among them). */
  beforeClose(work: () => Promise<void>): void {
    this.#beforeClose.push(work);
  }

  get cradle(): HostCradle {
    return this.container.cradle;
  }

  #use(): Pick<HostCradle, 'registry' | 'executor' | 'modeCatalog' | 'sessionManager'> & {
    liveTools: LiveTools | undefined;
  } {
    if (this.#services === undefined) {
      const { registry, executor, modeCatalog, sessionManager } = this.cradle;
      // A container composed without one (an embedding host's own) has tools fixed at start-up.
      const liveTools = this.container.hasRegistration('liveTools') ? this.cradle.liveTools : undefined;
      this.#services = { registry, executor, modeCatalog, sessionManager, liveTools };
    }
    return this.#services;
  }

  /** The tools a mode offers now: the catalog's, or, once tools changed while the host runs, the live set. */
  #namesFor(mode: string): string[] {
    const { registry, modeCatalog, liveTools } = this.#use();
    return liveTools?.offered(mode) ?? toolNamesForMode(registry, modeCatalog, mode);
  }

  /** True when a tool package may change the tools while the host runs (a bridged MCP server). */
  get toolsMayChange(): boolean {
    return this.#use().liveTools?.mayChange ?? false;
  }

  /** Counts every change to the tools served (MCP sessions compare it to tell clients the list changed). */
  get toolsRevision(): number {
    return this.#use().registry.revision;
  }

  /** Why a tool that was offered no longer is (a package withdrew it while the host runs), or undefined. */
  withdrawnTool(name: string): string | undefined {
    return this.#use().liveTools?.retired(name);
  }

  /** Calls `listener` after each change to the tools while the host runs; returns the function that stops it. */
  onToolsChanged(listener: () => void): () => void {
    return this.#use().liveTools?.onChange(listener) ?? (() => undefined);
  }

  #offeredIn(mode: string): { readonly names: readonly string[]; readonly set: ReadonlySet<string> } {
    const { registry } = this.#use();
    if (this.#offeredFor !== registry.revision) {
      this.#offered.clear();
      this.#finders.clear();
      this.#offeredFor = registry.revision;
    }
    let offered = this.#offered.get(mode);
    if (offered === undefined) {
      const names = Object.freeze(this.#namesFor(mode));
      offered = { names, set: new Set(names) };
      this.#offered.set(mode, offered);
    }
    return offered;
  }

  /** The tool names offered in a scope: a mode's, a session's current mode's, or every tool. */
  async toolNames(scope: ToolScope = {}): Promise<readonly string[]> {
    const { registry, modeCatalog } = this.#use();
    const mode =
      scope.sessionId !== undefined ? (await this.requireSession(scope.sessionId, scope.actor)).mode : scope.mode;
    if (mode === undefined) return registry.names();
    if (modeCatalog.getMode(mode) === undefined)
      throw new ScopeError(
        'UNKNOWN_MODE',
        `Mode "${mode}" does not exist. Valid modes: ${modeCatalog.keys.join(', ')}.`,
      );
    // The list kept per mode until the tools change (a 2026-07-28 MCP call without a session checks it every time).
    return this.#offeredIn(mode).names;
  }

  /** The tools a mode offers now, searchable (see `@aptix/tool-search`). Throws a ScopeError for an unknown mode. */
  async finder(mode: string): Promise<ToolFinder> {
    const names = await this.toolNames({ mode });
    let finder = this.#finders.get(mode);
    if (finder === undefined) {
      const { registry } = this.#use();
      finder = new ToolFinder(
        mode,
        names.map((name) => registry.get(name)!),
      );
      this.#finders.set(mode, finder);
    }
    return finder;
  }

  /** Whether a mode is offered through aptix_find_tools and aptix_call_tool instead of its tool list (`deferredModes`). */
  isDeferred(mode: string): boolean {
    const deferred = this.deferredModes;
    return deferred === true || (deferred !== false && deferred.includes(mode));
  }

  /** The `deferredModes` setting, read once. */
  get deferredModes(): boolean | readonly string[] {
    return (this.#deferred ??= this.cradle.config.deferredModes);
  }

  /** The mode an agent session is in now, read from the store; undefined when there is no such session. */
  async sessionMode(id: string, actor?: string): Promise<string | undefined> {
    const head = await this.#use().sessionManager.getSessionHead(id);
    return head !== undefined && this.maySee(head, actor) ? head.mode : undefined;
  }

  /** Whether `actor` may read and change a session: its own, one owned by no one, or any with `sessions: "all"` (a key without an entry). */
  maySee(session: { readonly owner: string | null }, actor: string | undefined): boolean {
    return actor === undefined || this.permissions.of(actor).maySee(session.owner);
  }

  /** What each principal may call and see (the configuration's `principals`). */
  get permissions(): HostPermissions {
    return (this.#permissions ??= this.cradle.permissions);
  }

  /** The registered tool by name (what was read from its class at registration), or undefined. */
  tool(name: string): RegisteredTool | undefined {
    return this.#use().registry.get(name);
  }

  /** Whether the tool declares an OutputSchema: its MCP results then carry `structuredContent`. */
  declaresOutputSchema(name: string): boolean {
    return this.#use().registry.get(name)?.outputSchema !== undefined;
  }

  async definitions<F extends DefinitionFormat>(
    format: F,
    scope: ToolScope = {},
  ): Promise<readonly DefinitionByFormat[F][]> {
    const { registry } = this.cradle;
    if (scope.mode === undefined && scope.sessionId === undefined) return registry.definitions(format);
    return registry.definitions(format, await this.toolNames(scope));
  }

  /**
   * Calls a tool. With a session, only the tools of the session's current mode may run, and the
   * context carries the session's ids, org, user and mode.
   */
  call(name: string, args: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    // Calls that change something (and read-only ones when asked) leave an audit record, written later.
    const audit = this.audit;
    if (!audit.enabled) return this.#call(name, args, options);
    return auditedCall(audit, this.#use().registry.get(name), name, args, options, () =>
      this.#call(name, args, options),
    );
  }

  #call(name: string, args: unknown, options: CallOptions): Promise<CallOutcome> {
    try {
      const { registry, executor, liveTools } = this.#use();
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
        const refused = this.permissions.refusal(options.actor, entry, args);
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
  #sessionContext(
    name: string,
    sessionId: string,
    conversationId: string | undefined,
    actor?: string,
  ): Promise<ScopedCall | Extract<CallOutcome, { kind: 'refused' }>> {
    // Read on every call, never cached: a mode change made through another host applies to the next call.
    // One prepared single-row read (no history); the mode's tools come from the catalog, held in memory.
    // A promise chain, not async functions: each async layer costs a call a few turns of the microtask queue.
    return this.#use()
      .sessionManager.getSessionHead(sessionId)
      .then((session) =>
        this.#scoped(
          name,
          sessionId,
          conversationId,
          actor === undefined || session === undefined || this.maySee(session, actor) ? session : undefined,
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
    const allowed = this.#offeredIn(session.mode);
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
    return this.#sessionContext(name, sessionId, options.conversationId, options.actor).then((scoped) =>
      'kind' in scoped ? scoped : this.#run(name, args, scoped, options),
    );
  }

  #run(
    name: string,
    args: unknown,
    scoped: ScopedCall | { context: AgentToolExecutionContext; session: undefined },
    options: CallOptions,
  ): Promise<CallOutcome> {
    return this.#use()
      .executor.execute(name, args, withSinks(scoped.context, options), this.#executeOptions(options))
      .then((result) => ({ kind: 'result', result, session: scoped.session }));
  }

  /** The executor's options for a call: its cancellation, and its logger (one naming the actor when only that is given). */
  #executeOptions(options: CallOptions, argumentsValidated = false): ExecuteOptions | undefined {
    const log =
      options.logger ?? (options.actor === undefined ? undefined : this.cradle.pino.child({ actor: options.actor }));
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
      const verdict = this.approvals().assessTool(entry, args, context);
      if ('required' in verdict && !verdict.required) {
        return this.#use()
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
    const { executor } = this.#use();
    let context: AgentToolExecutionContext =
      options.conversationId === undefined ? {} : { conversationId: options.conversationId };
    let session: SessionHead | undefined;
    if (options.sessionId !== undefined) {
      const scoped = await this.#sessionContext(name, options.sessionId, options.conversationId, options.actor);
      if ('kind' in scoped) return scoped;
      ({ context, session } = scoped);
    }
    const answer = await this.approvals().gate(name, args, context, options.actor ?? null, options.logger);
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

  /** The agent loop's side of approval gates: gated calls pause the turn; decided approvals resume it. */
  turnApprovals(actor?: string, log?: LevelLogger): TurnApprovals {
    return turnApprovalsOf(() => this.approvals(), actor, log);
  }

  /** The audit trail: calls that change something, approval decisions and mode changes (docs/audit.md). */
  get audit(): AuditTrail {
    // A container composed without sessions (or an embedding host's own) keeps no trail.
    return (this.#audit ??= this.container.hasRegistration('auditTrail')
      ? this.cradle.auditTrail
      : new AuditTrail(
          () => this.cradle.sessionManager.audit,
          { ...this.cradle.config.audit, enabled: false },
          this.cradle.pino,
        ));
  }

  /** Approval gates: pending calls, decisions and the one execution each approval gets. */
  approvals(): ApprovalGate {
    // The mode is checked again when an approved call runs: the session may have moved on.
    this.#gate ??= hostApprovalGate(
      this.cradle,
      (toolName, sessionId) => this.#sessionContext(toolName, sessionId, undefined),
      this.audit.enabled ? approvalObserver(this.audit) : undefined,
    );
    return this.#gate;
  }

  /** A new agent session, owned by `owner` (the principal that asked; none on a host without keys). */
  async createSession(
    input: { mode?: string; org?: string; user?: string } = {},
    owner?: string,
  ): Promise<SessionView> {
    const { modeCatalog, sessionManager } = this.cradle;
    if (input.mode !== undefined && modeCatalog.getMode(input.mode) === undefined) {
      throw new ScopeError(
        'UNKNOWN_MODE',
        `Mode "${input.mode}" does not exist. Valid modes: ${modeCatalog.keys.join(', ')}.`,
      );
    }
    return toSessionView(await sessionManager.createSession({ ...input, owner: owner ?? null }).catch(refusedInput));
  }

  /** The session with one page of its mode history (`limit` rows after `cursor`, oldest first). */
  async getSessionPage(
    id: string,
    page: HistoryPageRequest = {},
    actor?: string,
  ): Promise<SessionPageView | undefined> {
    const read = await this.cradle.sessionManager.getSessionPage(id, page).catch(refusedInput);
    // Another principal's session is as unknown as one that does not exist: no oracle for ids.
    return read === undefined || !this.maySee(read.session, actor)
      ? undefined
      : { ...toSessionView(read.session), nextCursor: read.nextCursor };
  }

  async getSession(id: string, actor?: string): Promise<SessionView | undefined> {
    const session = await this.cradle.sessionManager.getSession(id);
    return session === undefined || !this.maySee(session, actor) ? undefined : toSessionView(session);
  }

  async requireSession(id: string, actor?: string): Promise<AgentSession> {
    const session = await this.cradle.sessionManager.getSession(id);
    if (session === undefined || !this.maySee(session, actor))
      throw new ScopeError('SESSION_NOT_FOUND', sessionNotFound(id));
    return session;
  }

  /**
   * The agent loop. Throws a ReasonerError (`MODEL_NOT_CONFIGURED`, …) saying what to set when the
   * host has no usable model configuration.
   */
  reasoner(): Reasoner {
    try {
      return this.cradle.reasoner;
    } catch (error) {
      // awilix wraps what a factory throws; surface the Reasoner's own error, which says what to set.
      let cause: unknown = error;
      while (cause instanceof Error && !(cause instanceof ReasonerError) && cause.cause !== undefined)
        cause = cause.cause;
      throw cause instanceof ReasonerError ? cause : error;
    }
  }

  modes(): readonly AgentModeSummary[] {
    return this.cradle.modeCatalog.modes;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#beforeClose.splice(0).map((work) => work()));
    this.#gate?.stop();
    // Every audit record waiting is written while the store is still open.
    await this.#audit?.close();
    await this.container.dispose();
    // Isolated packages end their worker threads.
    await Promise.allSettled(this.cradle.toolPackages.map((toolPackage) => toolPackage.close()));
    const sessions = this.container.hasRegistration('sessionManager') ? this.cradle.sessionManager : undefined;
    await sessions?.close();
  }
}

import type { AwilixContainer } from 'awilix';
import {
  InvokeResult,
  type RegisteredTool,
  type LevelLogger,
  type DefinitionByFormat,
  type DefinitionFormat,
} from '@aptix/tool-contract';
import { toolNamesForMode, type AgentModeSummary } from '@aptix/tool-mode-catalog';
import type { AgentSession, HistoryPageRequest } from '@aptix/agent-sessions';
import { ReasonerError, type Reasoner, type TurnApprovals } from '@aptix/reasoner';
import { ToolFinder } from '@aptix/tool-search';
import type { HostPermissions } from './host-permissions.js';
import type { HostCradle } from './container.js';
import type { LiveTools } from './live-tools.js';
import type { ApprovalGate } from './approvals/approval-gate.js';
import { hostApprovalGate, turnApprovalsOf } from './approvals/host-gate.js';
import { AuditTrail } from './audit/audit-trail.js';
import { approvalObserver } from './audit/audited-calls.js';
import { HostCalls } from './host-calls.js';
import {
  refusedInput,
  ScopeError,
  sessionNotFound,
  toSessionView,
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
  #calls: HostCalls | undefined;
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

  #callPath(): HostCalls {
    return (this.#calls ??= new HostCalls(
      this,
      () => this.#use(),
      (mode) => this.#offeredIn(mode),
    ));
  }

  /**
   * Calls a tool. With a session, only the tools of the session's current mode may run, and the
   * context carries the session's ids, org, user and mode (host-calls.ts).
   */
  call(name: string, args: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    return this.#callPath().call(name, args, options);
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
      (toolName, sessionId) => this.#callPath().sessionContext(toolName, sessionId, undefined),
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

import type { AgentSession } from '@aptix/agent-sessions';
import {
  decodeArguments,
  evaluateApprovalPolicy,
  ExecutionErrorCode,
  InvokeResult,
  toolGuidanceSection,
  type AgentToolExecutionContext,
  type AgentToolExecutor,
  type AgentToolRegistry,
  type RegisteredTool,
} from '@aptix/tool-contract';
import { toolNamesForMode, toolNotInModeMessage } from '@aptix/tool-mode-catalog';
import { CALL_TOOL, isMetaTool } from '@aptix/tool-search';
import { AdapterErrorCode, timedOut } from './adapter-errors.js';
import {
  ALL_TOOLS,
  deferredToolNotInModeMessage,
  directTools,
  findingToolsSection,
  metaToolNotOfferedMessage,
  readMetaArguments,
  type Deferral,
} from './deferred-tools.js';
import type { AptixSessionScope, CallOptions, ToolDescription } from './aptix-tools-options.js';
import { AptixUnits } from './aptix-units.js';
import { AdapterSetupError } from './tool-sources.js';

/** The mode now (undefined without a session), the tools it offers, and what the model is offered of them. */
interface ModeScope {
  readonly mode: string | undefined;
  readonly modeTools: string[];
  readonly deferred: boolean;
  readonly offered: string[];
}

/**
 * Aptix tools made ready for a framework: checked by the registry, built once, run by the executor,
 * scoped by the session's mode. The framework adapters (`@aptix/ai-sdk`, `@aptix/langchain`,
 * `@aptix/openai-agents`) wrap one of these; use it directly to write an adapter for another framework.
 *
 * @example
 * const aptix = await createAptixTools({ tools: [samples] });
 * const result = await aptix.call('testing_calculator', { operation: 'add', a: 2, b: 3 });
 */
export class AptixTools {
  readonly registry: AgentToolRegistry;
  readonly executor: AgentToolExecutor;
  readonly session: AptixSessionScope | undefined;
  /** The prompts and resources given (the packages' and your own), offered in the session's mode. */
  readonly units: AptixUnits;
  readonly #context: AgentToolExecutionContext;
  readonly #deferral: Deferral | undefined;

  /** Use `createAptixTools`: building the tools may wait for a package's `createDependencies`. */
  constructor(
    registry: AgentToolRegistry,
    executor: AgentToolExecutor,
    session: AptixSessionScope | undefined,
    conversationId: string | undefined,
    deferral?: Deferral,
    units?: AptixUnits,
  ) {
    this.registry = registry;
    this.executor = executor;
    this.session = session;
    this.units = units ?? AptixUnits.none(session);
    this.#context = conversationId === undefined ? {} : { conversationId };
    this.#deferral = deferral;
  }

  /**
   * The tools a framework may be handed at once: every tool's name, in the order given, after the two
   * meta tools with `deferred` (with every mode deferred, only those and the mode tools: no other tool
   * is ever offered directly).
   */
  names(): string[] {
    return this.#deferral === undefined ? this.registry.names() : this.#deferral.names(this.registry.names());
  }

  /** How to describe `name` to a model; `strictMode` asks for the strict view where Aptix allows it. */
  describe(name: string, strictMode: boolean): ToolDescription {
    if (this.#isMeta(name)) return { ...this.#deferral!.describe(name, strictMode), usageMetadata: '' };
    const tool = this.#require(name);
    const strict = strictMode && tool.strict;
    return {
      name: tool.name,
      description: tool.description,
      parameters: strict ? tool.strictView.parameters : tool.parameters,
      strict,
      usageMetadata: tool.usageMetadata,
    };
  }

  /**
   * The names of the tools offered now: the session's current mode's, or every tool without a session;
   * in a deferred mode, `aptix_find_tools`, `aptix_call_tool` and the mode tools.
   */
  async offeredToolNames(): Promise<string[]> {
    return (await this.#scope()).offered;
  }

  async #scope(): Promise<ModeScope> {
    const mode = this.session === undefined ? undefined : (await this.#requireSession()).mode;
    const modeTools =
      mode === undefined ? this.registry.names() : toolNamesForMode(this.registry, this.session!.modeCatalog, mode);
    const deferred = this.#deferral?.covers(mode) === true;
    return { mode, modeTools, deferred, offered: deferred ? this.#deferral!.offered(modeTools) : modeTools };
  }

  /**
   * The "# Tool guidance" fragment for a system prompt: each offered tool's usage guide in a
   * `<tool_guidance name="…">` element, as the Reasoner writes it. Read again after a mode change. In a
   * deferred mode, the mode tools' guides, after two sentences on finding and calling the others.
   */
  async guidance(names?: readonly string[]): Promise<string> {
    const scope = names === undefined ? await this.#scope() : undefined;
    const section = toolGuidanceSection(
      (names ?? scope!.offered)
        .filter((name) => !this.#isMeta(name))
        .map((name) => ({ name, text: this.#require(name).usageMetadata })),
      { inMode: this.session !== undefined },
    );
    return scope?.deferred === true
      ? `${findingToolsSection(scope.modeTools.length - directTools(scope.modeTools).length)}\n\n${section}`
      : section;
  }

  /** Whether a call of `name` may wait for a person: its tool has an ApprovalPolicy (for `aptix_call_tool`, some tool has). */
  mayNeedApproval(name: string): boolean {
    if (this.#isMeta(name)) return name === CALL_TOOL && this.registry.list().some((tool) => tool.approval !== 'never');
    return (this.registry.get(name)?.approval ?? 'never') !== 'never';
  }

  /**
   * Whether a call of `name` with `args` needs a person's approval under the tool's `ApprovalPolicy`,
   * and why. Arguments the tool would refuse need none: the executor answers them.
   */
  async approvalFor(name: string, args: unknown): Promise<{ required: boolean; reason: string }> {
    if (this.#isMeta(name)) {
      // aptix_call_tool needs what the tool it names needs.
      const read = readMetaArguments(name, args, this.session?.sessionId, AdapterErrorCode.SESSION_MISMATCH);
      return 'call' in read && this.registry.has(read.call.name)
        ? this.approvalFor(read.call.name, read.call.arguments ?? {})
        : { required: false, reason: '' };
    }
    const tool = this.#require(name);
    if (tool.approval === 'never') return { required: false, reason: '' };
    let context = this.#context;
    if (this.session !== undefined) {
      const scoped = await this.#sessionContext(name);
      if ('context' in scoped) context = scoped.context;
    }
    return this.#approval(tool, args, context);
  }

  #approval(
    tool: RegisteredTool,
    args: unknown,
    context: AgentToolExecutionContext,
  ): { required: boolean; reason: string } {
    const decoded = decodeArguments(tool.name, tool.parameters, args);
    return decoded.ok
      ? evaluateApprovalPolicy(tool.name, tool.approvalPolicy, decoded.value, context)
      : { required: false, reason: '' };
  }

  /**
   * Runs one call and never throws. In a session, only the current mode's tools run. `signal` is the
   * framework's: its abort stops the tool; one that aborts with a `TimeoutError` (the framework's own
   * time-out) turns a call it stopped into a failed result with code `TIMEOUT`. A call the tool's
   * `ApprovalPolicy` gates is refused (`APPROVAL_REQUIRED`) unless `approved`.
   */
  call(name: string, args: unknown, options: CallOptions = {}): Promise<InvokeResult<string>> {
    if (this.#isMeta(name)) return this.#callMeta(name, args, options);
    const { signal } = options;
    // Not async in the common case: a framework's own hand-written tool awaits nothing more either.
    if (this.session !== undefined || this.registry.get(name)?.approval !== 'never')
      return this.#callChecked(name, args, options);
    const pending = this.executor.execute(name, args, this.#context, signal === undefined ? undefined : { signal });
    return signal === undefined ? pending : pending.then((result) => timedOut(name, result, signal) ?? result);
  }

  async #callChecked(name: string, args: unknown, { signal, approved }: CallOptions): Promise<InvokeResult<string>> {
    let context = this.#context;
    if (this.session !== undefined) {
      const scoped = await this.#sessionContext(name);
      if ('failure' in scoped) return scoped.failure;
      context = scoped.context;
    }
    const tool = this.registry.get(name);
    if (tool !== undefined && tool.approval !== 'never' && approved !== true) {
      const { required, reason } = this.#approval(tool, args, context);
      if (required) {
        return InvokeResult.fromError(
          `${name} was not run: ${reason} Nothing here can ask a person for that approval. Tell the user this call needs approval.`,
          AdapterErrorCode.APPROVAL_REQUIRED,
        );
      }
    }
    const result = await this.executor.execute(name, args, context, signal === undefined ? undefined : { signal });
    return (signal !== undefined && timedOut(name, result, signal)) || result;
  }

  /**
   * `aptix_find_tools` searches the mode as it is now; `aptix_call_tool` runs the tool it names the
   * way {@link call} runs a direct call. Both only in a deferred mode.
   */
  async #callMeta(name: string, args: unknown, options: CallOptions): Promise<InvokeResult<string>> {
    const read = readMetaArguments(name, args, this.session?.sessionId, AdapterErrorCode.SESSION_MISMATCH);
    if ('failure' in read) return read.failure;
    let scope: ModeScope;
    try {
      scope = await this.#scope();
    } catch (error) {
      return InvokeResult.fromError(
        `${name} was not run: ${(error as Error).message}`,
        error instanceof AdapterSetupError ? AdapterErrorCode.SESSION_NOT_FOUND : ExecutionErrorCode.TOOL_UNAVAILABLE,
      );
    }
    if (!scope.deferred)
      return InvokeResult.fromError(
        metaToolNotOfferedMessage(name, scope.mode ?? ALL_TOOLS, scope.offered),
        AdapterErrorCode.TOOL_NOT_IN_MODE,
      );
    if ('find' in read) {
      // Found without the session, so the next step it suggests leaves sessionId out: the agent's session is implicit.
      const found = this.#deferral!.finder(this.registry, scope.mode ?? ALL_TOOLS, scope.modeTools).find(
        read.find,
        null,
      );
      return InvokeResult.create(JSON.stringify({ ...found, sessionId: this.session?.sessionId ?? null }));
    }
    return this.#callChecked(read.call.name, read.call.arguments ?? {}, options);
  }

  #isMeta(name: string): boolean {
    return this.#deferral !== undefined && isMetaTool(name);
  }

  async #sessionContext(
    name: string,
  ): Promise<{ context: AgentToolExecutionContext } | { failure: InvokeResult<string> }> {
    const scope = this.session!;
    let session: AgentSession | undefined;
    try {
      session = await scope.sessionManager.getSession(scope.sessionId);
    } catch {
      return {
        failure: InvokeResult.fromError(
          `${name} was not run: the session store could not be read. Try again later.`,
          ExecutionErrorCode.TOOL_UNAVAILABLE,
        ),
      };
    }
    if (session === undefined) {
      return {
        failure: InvokeResult.fromError(
          `Session ${scope.sessionId} does not exist, so ${name} was not run.`,
          AdapterErrorCode.SESSION_NOT_FOUND,
        ),
      };
    }
    let allowed: string[];
    try {
      allowed = toolNamesForMode(this.registry, scope.modeCatalog, session.mode);
    } catch (error) {
      // The session is in a mode this catalog does not hold: a configuration problem, not the model's.
      return {
        failure: InvokeResult.fromError(
          `${name} was not run: ${(error as Error).message}`,
          ExecutionErrorCode.TOOL_UNAVAILABLE,
        ),
      };
    }
    if (!allowed.includes(name)) {
      // A deferred mode's refusal cannot list a thousand tools: it points to the search instead.
      const offeredIn = scope.modeCatalog.modes.filter((mode) => mode.tools.includes(name)).map((mode) => mode.key);
      const message =
        this.#deferral?.covers(session.mode) === true
          ? deferredToolNotInModeMessage(name, session.mode, session.id, offeredIn)
          : toolNotInModeMessage({ tool: name, mode: session.mode, sessionId: session.id, offered: allowed });
      return { failure: InvokeResult.fromError(message, AdapterErrorCode.TOOL_NOT_IN_MODE) };
    }
    return {
      context: {
        ...this.#context,
        sessionId: session.id,
        ...(session.org === null ? {} : { org: session.org }),
        ...(session.user === null ? {} : { user: session.user }),
        mode: session.mode,
      },
    };
  }

  async #requireSession(): Promise<AgentSession> {
    const { sessionManager, sessionId } = this.session!;
    const session = await sessionManager.getSession(sessionId);
    if (session === undefined)
      throw new AdapterSetupError(
        `Session ${sessionId} does not exist. Fix: create it with the session store first (sessionManager.createSession()).`,
      );
    return session;
  }

  #require(name: string): RegisteredTool {
    const tool = this.registry.get(name);
    if (tool === undefined)
      throw new RangeError(
        `No tool named "${name}" was given to this adapter. Its tools: ${this.names().join(', ') || 'none'}.`,
      );
    return tool;
  }
}

import type { AgentSession, AgentSessionManager } from '@aptix/agent-sessions';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  decodeArguments,
  evaluateApprovalPolicy,
  ExecutionErrorCode,
  InvokeResult,
  silentAdminLogger,
  TOOL_GUIDANCE_TAG,
  toolGuidanceSection,
  type AdminLogger,
  type AgentToolExecutionContext,
  type JsonSchema,
  type RegisteredTool,
} from '@aptix/tool-contract';
import { checkCatalogAgainstRegistry, toolNamesForMode, toolNotInModeMessage, type ModeCatalog } from '@aptix/tool-mode-catalog';
import { AdapterSetupError, buildTools, flattenSources, preparePackages, type ToolSource } from './tool-sources.js';

/** The agent session whose mode decides which tools are offered, and where `agent_change_mode` writes. */
export interface AptixSessionScope {
  /** Any `AgentSessionManager`: the SQLite or PostgreSQL store of `@aptix/agent-sessions`. */
  readonly sessionManager: AgentSessionManager;
  readonly sessionId: string;
  /** The mode catalog the store was opened with: each mode's tools, and `agent_list_modes`'s answer. */
  readonly modeCatalog: ModeCatalog;
}

export interface AptixToolsOptions {
  /** Tool classes and tool packages (`import * as samples from '@aptix/tool-samples'`), in the order they are offered. */
  readonly tools: readonly ToolSource[];
  /** The AdminLogger every tool is built with; contract violations are logged to it too. Default: silent. */
  readonly logger?: AdminLogger;
  /** More constructor dependencies by name; they win over the adapter's and the packages' own. */
  readonly dependencies?: Readonly<Record<string, unknown>>;
  /** Work in an agent session: offer its current mode's tools, and give the mode tools its store. */
  readonly session?: AptixSessionScope;
  /** Put in every call's context (AGN-005 §5: tools echo it in their results). */
  readonly conversationId?: string;
  /** The time-out of a call whose tool sets none. Default 30 000 ms (the executor's). */
  readonly defaultTimeoutMs?: number;
}

/** How a framework should describe one tool to its model. */
export interface ToolDescription {
  readonly name: string;
  readonly description: string;
  /** Aptix's parameters: the strict-mode view when `strict` is true, the declared schema otherwise. */
  readonly parameters: JsonSchema;
  /** Whether strict mode can take this tool (Aptix's strict-mode report, or the tool's own `strict: false`). */
  readonly strict: boolean;
  readonly usageMetadata: string;
}

/** The codes adapters put on failures of their own, beside the executor's (`INVALID_ARGUMENTS`, `TIMEOUT`, …). */
export const AdapterErrorCode = {
  /** The session's mode does not offer the tool (the host's code for the same refusal). */
  TOOL_NOT_IN_MODE: 'TOOL_NOT_IN_MODE',
  /** The session the adapter works in no longer exists. */
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  /** The tool's ApprovalPolicy asks a person to approve this call, and the framework has no approval step wired to it: nothing ran. */
  APPROVAL_REQUIRED: 'APPROVAL_REQUIRED',
} as const;

/** Options of one call. */
export interface CallOptions {
  /** The framework's signal: its abort stops the tool. */
  readonly signal?: AbortSignal | undefined;
  /** A person approved this call through the framework's own approval step (the Agents SDK's `needsApproval`). */
  readonly approved?: boolean;
}

/** The text a model reads for a failed call: `{"error":{"message","code"}}`, as the Reasoner sends it (AGN-005 §9). */
export function failureText(result: InvokeResult<string>): string {
  const message = InvokeResult.errorMessage(result) || 'The tool failed without saying why.';
  const code = result.errors.find((error) => error.code !== undefined)?.code ?? 'TOOL_FAILED';
  return JSON.stringify({ error: { message, code } });
}

/**
 * A failed call, thrown where a framework's idiom for a tool error is an exception. Its message is the
 * model-facing {@link failureText}, so the model reads the message and the code whatever the framework
 * does with it; `code` and `result` are there for the application.
 */
export class AptixToolError extends Error {
  override readonly name = 'AptixToolError';
  /** The first code of the failed result (`INVALID_ARGUMENTS`, `TIMEOUT`, a tool's own…), or `TOOL_FAILED`. */
  readonly code: string;
  readonly toolName: string;
  readonly result: InvokeResult<string>;

  constructor(toolName: string, result: InvokeResult<string>) {
    super(failureText(result));
    this.toolName = toolName;
    this.result = result;
    this.code = result.errors.find((error) => error.code !== undefined)?.code ?? 'TOOL_FAILED';
  }

  /** The model-facing text alone: frameworks that show a model `String(error)` (the AI SDK) then send just the JSON. */
  override toString(): string {
    return this.message;
  }
}

function isTimeout(reason: unknown): reason is { message: string } {
  return reason instanceof Error && reason.name === 'TimeoutError';
}

/** A call the framework's time-out stopped, as the failure it is (the executor reports any abort as a cancellation). */
function timedOut(name: string, result: InvokeResult<string>, signal: AbortSignal): InvokeResult<string> | undefined {
  if (!signal.aborted || !isTimeout(signal.reason) || !wasCancelled(result)) return undefined;
  return InvokeResult.fromError(`${name} did not finish in time and was stopped (${signal.reason.message}). Try a smaller request, or allow more time.`, ExecutionErrorCode.TIMEOUT);
}

function wasCancelled(result: InvokeResult<string>): boolean {
  if (!result.successful) return false;
  try {
    return (JSON.parse(result.result) as { wasCancelled?: unknown }).wasCancelled === true;
  } catch {
    return false;
  }
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
  readonly #context: AgentToolExecutionContext;

  /** Use {@link createAptixTools}: building the tools may wait for a package's `createDependencies`. */
  constructor(registry: AgentToolRegistry, executor: AgentToolExecutor, session: AptixSessionScope | undefined, conversationId: string | undefined) {
    this.registry = registry;
    this.executor = executor;
    this.session = session;
    this.#context = conversationId === undefined ? {} : { conversationId };
  }

  /** Every tool's name, in the order given: the tools a framework may be handed at once. */
  names(): string[] {
    return this.registry.names();
  }

  /** How to describe `name` to a model; `strictMode` asks for the strict view where Aptix allows it. */
  describe(name: string, strictMode: boolean): ToolDescription {
    const tool = this.#require(name);
    const strict = strictMode && tool.strict;
    return { name: tool.name, description: tool.description, parameters: strict ? tool.strictView.parameters : tool.parameters, strict, usageMetadata: tool.usageMetadata };
  }

  /** The names of the tools offered now: the session's current mode's, or every tool without a session. */
  async offeredToolNames(): Promise<string[]> {
    if (this.session === undefined) return this.names();
    const session = await this.#requireSession();
    return toolNamesForMode(this.registry, this.session.modeCatalog, session.mode);
  }

  /**
   * The "# Tool guidance" fragment for a system prompt: each offered tool's usage guide in a
   * `<tool_guidance name="…">` element, as the Reasoner writes it. Read again after a mode change.
   */
  async guidance(names?: readonly string[]): Promise<string> {
    const offered = names ?? (await this.offeredToolNames());
    return toolGuidanceSection(
      offered.map((name) => ({ name, text: this.#require(name).usageMetadata })),
      { inMode: this.session !== undefined },
    );
  }

  /**
   * Whether a call of `name` with `args` needs a person's approval under the tool's `ApprovalPolicy`,
   * and why. Arguments the tool would refuse need none: the executor answers them.
   */
  async approvalFor(name: string, args: unknown): Promise<{ required: boolean; reason: string }> {
    const tool = this.#require(name);
    if (tool.approval === 'never') return { required: false, reason: '' };
    let context = this.#context;
    if (this.session !== undefined) {
      const scoped = await this.#sessionContext(name);
      if ('context' in scoped) context = scoped.context;
    }
    return this.#approval(tool, args, context);
  }

  #approval(tool: RegisteredTool, args: unknown, context: AgentToolExecutionContext): { required: boolean; reason: string } {
    const decoded = decodeArguments(tool.name, tool.parameters, args);
    return decoded.ok ? evaluateApprovalPolicy(tool.name, tool.approvalPolicy, decoded.value, context) : { required: false, reason: '' };
  }

  /**
   * Runs one call and never throws. In a session, only the current mode's tools run. `signal` is the
   * framework's: its abort stops the tool; one that aborts with a `TimeoutError` (the framework's own
   * time-out) turns a call it stopped into a failed result with code `TIMEOUT`. A call the tool's
   * `ApprovalPolicy` gates is refused (`APPROVAL_REQUIRED`) unless `approved`.
   */
  call(name: string, args: unknown, options: CallOptions = {}): Promise<InvokeResult<string>> {
    const { signal } = options;
    // Not async in the common case: a framework's own hand-written tool awaits nothing more either.
    if (this.session !== undefined || this.registry.get(name)?.approval !== 'never') return this.#callChecked(name, args, options);
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

  async #sessionContext(name: string): Promise<{ context: AgentToolExecutionContext } | { failure: InvokeResult<string> }> {
    const scope = this.session!;
    let session: AgentSession | undefined;
    try {
      session = await scope.sessionManager.getSession(scope.sessionId);
    } catch {
      return { failure: InvokeResult.fromError(`${name} was not run: the session store could not be read. Try again later.`, ExecutionErrorCode.TOOL_UNAVAILABLE) };
    }
    if (session === undefined) {
      return { failure: InvokeResult.fromError(`Session ${scope.sessionId} does not exist, so ${name} was not run.`, AdapterErrorCode.SESSION_NOT_FOUND) };
    }
    let allowed: string[];
    try {
      allowed = toolNamesForMode(this.registry, scope.modeCatalog, session.mode);
    } catch (error) {
      // The session is in a mode this catalog does not hold: a configuration problem, not the model's.
      return { failure: InvokeResult.fromError(`${name} was not run: ${(error as Error).message}`, ExecutionErrorCode.TOOL_UNAVAILABLE) };
    }
    if (!allowed.includes(name)) {
      return {
        failure: InvokeResult.fromError(
          toolNotInModeMessage({ tool: name, mode: session.mode, sessionId: session.id, offered: allowed }),
          AdapterErrorCode.TOOL_NOT_IN_MODE,
        ),
      };
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
    if (session === undefined) throw new AdapterSetupError(`Session ${sessionId} does not exist. Fix: create it with the session store first (sessionManager.createSession()).`);
    return session;
  }

  #require(name: string): RegisteredTool {
    const tool = this.registry.get(name);
    if (tool === undefined) throw new RangeError(`No tool named "${name}" was given to this adapter. Its tools: ${this.names().join(', ') || 'none'}.`);
    return tool;
  }
}

/**
 * Checks every tool against the contract (a violation throws the registry's `ToolContractError`, with
 * the message the host gives), runs each package's `createDependencies` and `createTools`, builds each
 * tool once with those dependencies and the caller's, and, with a session, checks that every tool the
 * catalog names is there.
 *
 * @throws {ToolContractError} a tool breaks the contract.
 * @throws {AdapterSetupError} a tool cannot be built, or dependencies clash.
 * @throws {ModeCatalogError} `UNREGISTERED_TOOL`: a mode offers a tool that was not given.
 * @example
 * import * as samples from '@aptix/tool-samples';
 * import * as modeCatalog from '@aptix/tool-mode-catalog';
 * import * as modeChange from '@aptix/tool-mode-change';
 * const aptix = await createAptixTools({ tools: [samples, modeCatalog, modeChange], session: { sessionManager: store, sessionId, modeCatalog: catalog } });
 */
export async function createAptixTools(options: AptixToolsOptions): Promise<AptixTools> {
  const logger = options.logger ?? silentAdminLogger;
  const { classes, packages } = flattenSources(options.tools);
  // The contract check first: a broken static tool stops here, before any package code runs.
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools(classes);
  const { session } = options;
  const provided: Record<string, unknown> = session === undefined ? { logger } : { logger, sessionManager: session.sessionManager, modeCatalog: session.modeCatalog };
  const { dependencies, madeTools } = await preparePackages(packages, provided, options.dependencies ?? {}, logger);
  registry.registerTools(madeTools);
  for (const tool of registry.list()) {
    if (tool.usageMetadata.includes(`</${TOOL_GUIDANCE_TAG}>`)) {
      throw new AdapterSetupError(`The ToolUsageMetadata of "${tool.name}" contains "</${TOOL_GUIDANCE_TAG}>", which would end its section of the tool guidance early. Fix: reword it.`);
    }
  }
  if (session !== undefined) checkCatalogAgainstRegistry(registry, session.modeCatalog);
  const built = buildTools(registry.names().map((name) => registry.get(name)!.toolClass), dependencies);
  const executor = new AgentToolExecutor({
    registry,
    logger,
    createTool: (toolClass) => built.get(toolClass)!,
    ...(options.defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs: options.defaultTimeoutMs }),
  });
  return new AptixTools(registry, executor, session, options.conversationId);
}

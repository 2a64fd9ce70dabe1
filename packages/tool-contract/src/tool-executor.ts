import { silentAdminLogger, type AdminLogger } from './admin-logger.js';
import type { AgentTool, AgentToolExecutionContext, AnyAgentToolClass, ToolDependencies } from './agent-tool.js';
import { decodeArguments } from './arguments.js';
import { cancelledJson } from './cancellation.js';
import { MAX_TIMER_MS } from './deadline-queue.js';
import { ExecutionErrorCode } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import { refusedResult } from './refusal.js';
import { pairs, ResultChecks } from './result-checks.js';
import { observeToolCall, toolCallObserved } from './tool-call-telemetry.js';
import { Call, CallSignal, type CallHooks } from './tool-call.js';
import type { AgentToolRegistry, RegisteredTool } from './tool-registry.js';
import { invokeTool, neverAborted, ownInvokeTool, type Invocation, type SignalSource } from './typed-agent-tool.js';

/**
 * Builds a tool instance for one call: the host's DI. `logger` is the call's logger (see
 * `ExecuteOptions.logger`), which the tool should receive. It may throw (a missing dependency): the
 * call then fails cleanly.
 */
export type ToolFactory = (
  toolClass: AnyAgentToolClass,
  context: AgentToolExecutionContext,
  logger: AdminLogger,
) => AgentTool;

export interface AgentToolExecutorOptions {
  readonly registry: AgentToolRegistry;
  /** Defaults to `new ToolClass({ logger })`, with the call's logger, in a frozen object that calls with the same logger share. */
  readonly createTool?: ToolFactory;
  readonly logger?: AdminLogger;
  /** Time-out of a call when neither the call nor the tool sets one. Default {@link DEFAULT_TOOL_TIMEOUT_MS} (30 s, Story 6.1). */
  readonly defaultTimeoutMs?: number;
  /**
   * After a cancellation or a time-out aborts a call's signal, how long the call waits for the tool to
   * settle, so the answer says what the tool did. Default {@link DEFAULT_CANCEL_GRACE_MS}. A tool that
   * has not settled by then is answered OUTCOME_UNKNOWN, unless it is declared read-only.
   */
  readonly cancelGraceMs?: number;
  /**
   * The largest successful result, in UTF-8 bytes of its JSON text. A larger one becomes a failed result
   * with the code RESULT_TOO_LARGE, and nothing of it is sent on. Default {@link DEFAULT_MAX_RESULT_BYTES} (1 MiB).
   */
  readonly maxResultBytes?: number;
  /** The longest error message a tool may return, in characters; longer ones are cut. Default {@link DEFAULT_MAX_ERROR_MESSAGE_LENGTH}. */
  readonly maxErrorMessageLength?: number;
  /**
   * Record each call's arguments and successful result on its `execute_tool` span, cut to this many
   * characters. Default 0: never (they may hold personal data). Spans exist only when an OpenTelemetry
   * SDK is registered.
   */
  readonly recordContentChars?: number;
}

/** The executor's default bound on a result: 1 MiB of JSON text. */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;
/** The executor's default bound on one error message, in characters. */
export const DEFAULT_MAX_ERROR_MESSAGE_LENGTH = 8192;

export interface ExecuteOptions {
  /**
   * The caller's cancellation: aborts the tool's signal; the call returns a successful result describing
   * it (AGN-005 §8). Or a function that makes the signal, called only if the call is still running after
   * the tool's synchronous start: making an AbortSignal costs more than a whole small call, so a server
   * can spare it to every call that answers at once (see the host's HTTP invoke route).
   */
  readonly signal?: AbortSignal | (() => AbortSignal);
  /** Overrides the tool's and the executor's time-out for this call. */
  readonly timeoutMs?: number;
  /**
   * The logger of this call: the executor's own lines about it and the tool's (given to the tool
   * factory) go there. A server passes one bound to the request, so each line carries the request id
   * with no AsyncLocalStorage. Default: the executor's logger.
   */
  readonly logger?: AdminLogger;
  /**
   * `args` is the object that `decodeArguments` (or `validateArguments`) gave for this tool's
   * registered `parameters`, unchanged since: the executor does not check it again, and neither does a
   * TypedAgentTool whose schema is the same and whose `decode` is its own. An approval gate that
   * validated the arguments to evaluate a policy hands them on this way, so a call is checked once.
   * Ignored when `args` is not an object.
   */
  readonly argumentsValidated?: boolean;
  /** The model's id for this call, recorded as `gen_ai.tool.call.id` on the call's span when tracing is on. */
  readonly callId?: string;
}

/** The time-out of a call when neither the call, the tool nor the executor's options set one (Story 6.1: 30 s). */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
/** How long a cancelled or timed-out call waits for its tool to settle, by default. */
export const DEFAULT_CANCEL_GRACE_MS = 1_000;

interface FastPathTool {
  [invokeTool](
    input: unknown,
    context: AgentToolExecutionContext,
    signals: SignalSource,
  ): Invocation | Promise<Invocation>;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * Runs tool calls by name. `execute` never throws and never rejects: unknown tools, invalid arguments,
 * exceptions, time-outs and malformed results all come back as failed results with a stable code.
 *
 * @example
 * const executor = new AgentToolExecutor({ registry, logger });
 * const result = await executor.execute('testing_calculator', '{"operation":"add","a":2,"b":3}', { sessionId });
 */
export class AgentToolExecutor {
  readonly #registry: AgentToolRegistry;
  readonly #createTool: ToolFactory;
  readonly #logger: AdminLogger;
  readonly #defaultTimeoutMs: number;
  readonly #hooks: CallHooks;
  readonly #checks: ResultChecks;
  #spareSignals: CallSignal | undefined = undefined;
  #dependenciesOf: AdminLogger | undefined = undefined;
  #sharedDependencies: ToolDependencies | undefined = undefined;
  readonly #recordContentChars: number;

  constructor(options: AgentToolExecutorOptions) {
    this.#registry = options.registry;
    this.#logger = options.logger ?? silentAdminLogger;
    this.#createTool =
      options.createTool ?? ((toolClass, _context, callLogger) => new toolClass(this.#dependencies(callLogger)));
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    this.#recordContentChars = Math.max(0, options.recordContentChars ?? 0);
    const grace = options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS;
    if (!Number.isFinite(grace) || grace < 0)
      throw new RangeError(`cancelGraceMs must be a number of milliseconds, 0 or more; got ${String(grace)}.`);
    this.#checks = new ResultChecks(
      options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      options.maxErrorMessageLength ?? DEFAULT_MAX_ERROR_MESSAGE_LENGTH,
    );
    this.#hooks = {
      settle: (name, output, context, trusted, logger, outputSchema) =>
        this.#checks.settle(name, output, context, trusted, logger, outputSchema),
      exception: (name, error, context, logger) => this.#checks.exception(name, error, context, logger),
      timedOut: (name, timeoutMs, context, logger) =>
        logger.addError(
          `[${name}_ExecuteAsync__Timeout]`,
          `${name} did not finish within ${timeoutMs} ms.`,
          pairs(context),
        ),
      settledLate: (name, outcome, context, logger) =>
        logger.addCustomEvent(
          'warn',
          `[${name}_ExecuteAsync__SettledLate]`,
          `${name} settled after its call had been answered without it: it ${outcome}.`,
          pairs(context),
        ),
      cancelGraceMs: grace,
    };
  }

  /**
   * The default factory's `{ logger }`: one frozen object per logger in a row, not one per call (calls
   * with the executor's logger, or one request's, share it). Frozen, since every tool built meanwhile gets it.
   */
  #dependencies(logger: AdminLogger): ToolDependencies {
    if (logger !== this.#dependenciesOf) {
      this.#sharedDependencies = Object.freeze({ logger });
      this.#dependenciesOf = logger;
    }
    return this.#sharedDependencies!;
  }

  /** The time-out of a call when neither the call nor the tool sets one. */
  get defaultTimeoutMs(): number {
    return this.#defaultTimeoutMs;
  }

  /** How long a cancelled or timed-out call waits for its tool to settle. */
  get cancelGraceMs(): number {
    return this.#hooks.cancelGraceMs;
  }

  /** The time-out a call of `name` runs under: the call's own, else the tool's, else the default. Undefined for an unknown tool. */
  timeoutOf(name: string, callTimeoutMs?: number): number | undefined {
    const entry = this.#registry.get(name);
    return entry === undefined
      ? undefined
      : Math.min(callTimeoutMs ?? entry.timeoutMs ?? this.#defaultTimeoutMs, MAX_TIMER_MS);
  }

  /**
   * Runs one call. `args` is the model's JSON text, or an object already parsed (an HTTP body), which
   * is then not serialised again.
   *
   * A tool that answers synchronously is answered without a timer or a signal: nothing can interrupt
   * synchronous JavaScript, so neither could act before it returns. A tool that answers with a promise
   * races its deadline and the caller's cancellation.
   */
  execute(
    name: string,
    args: unknown,
    context: AgentToolExecutionContext = {},
    options?: ExecuteOptions,
  ): Promise<InvokeResult<string>> {
    // With no OpenTelemetry SDK registered, two reads of the API's globals and nothing else.
    if (!toolCallObserved()) return this.#execute(name, args, context, options);
    const call = {
      name,
      args,
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      context: context ?? {},
      callId: options?.callId,
      recordContentChars: this.#recordContentChars,
    };
    return observeToolCall(call, () => this.#execute(name, args, context, options));
  }

  #execute(
    name: string,
    args: unknown,
    context: AgentToolExecutionContext,
    options: ExecuteOptions | undefined,
  ): Promise<InvokeResult<string>> {
    // Not an async function: returning the race's promise from one would cost three more turns of the
    // microtask queue. Everything below is guarded, so nothing throws past here.
    try {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      const outcome = this.#start(name, args, context ?? {}, options);
      return outcome instanceof Promise ? outcome : Promise.resolve(outcome);
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      return Promise.resolve(this.#checks.exception(name, error, context ?? {}, options?.logger ?? this.#logger));
    }
  }

  #start(
    name: string,
    args: unknown,
    context: AgentToolExecutionContext,
    options: ExecuteOptions | undefined,
  ): InvokeResult<string> | Promise<InvokeResult<string>> {
    const entry = this.#registry.get(name);
    if (entry === undefined) {
      return InvokeResult.fromError(
        `Tool "${name}" does not exist. Available tools: ${this.#registry.names().join(', ') || 'none'}.`,
        ExecutionErrorCode.TOOL_NOT_FOUND,
      );
    }
    const signal = options?.signal;
    // Never started, so nothing happened: the cancelled shape is true.
    if (typeof signal === 'object' && signal.aborted) return InvokeResult.create(cancelledJson(name, context, 0));

    // Tools built on TypedAgentTool parse and validate their own input (once); others are checked here
    // first, so invalid arguments never cost building a tool.
    const toolClass = entry.toolClass;
    const fastPath = typeof (toolClass.prototype as Partial<FastPathTool>)[invokeTool] === 'function';
    let input = args;
    const validated = options?.argumentsValidated === true && args !== null && typeof args === 'object';
    if (!fastPath && validated) input = JSON.stringify(args);
    else if (!fastPath) {
      const decoded = decodeArguments<object>(name, entry.parameters, args);
      if (!decoded.ok) return InvokeResult.fromError(decoded.message, ExecutionErrorCode.INVALID_ARGUMENTS);
      input = JSON.stringify(decoded.value);
    }

    const logger = options?.logger ?? this.#logger;
    let tool: AgentTool;
    try {
      tool = this.#createTool(toolClass, context, logger);
    } catch (error) {
      // A constructor that ran into the host's refusal (it tried to end the process) fails with that code.
      const refused = refusedResult(name, error);
      if (refused !== undefined) return refused;
      logger.addException(`[${name}_CreateTool__Exception]`, error, pairs(context));
      return InvokeResult.fromError(
        `${name} is not available: the host could not create it. The host's configuration needs fixing; calling again will not help.`,
        ExecutionErrorCode.TOOL_UNAVAILABLE,
      );
    }

    // Raw JSON text is taken unchecked only from TypedAgentTool's own method, which serialised it itself.
    // Any other (a subclass's override, an instance's own property, another copy of this package) is
    // checked like every result, so no tool can put text that is not JSON into a reply.
    const invoke = fastPath ? (tool as unknown as Partial<FastPathTool>)[invokeTool] : undefined;
    const trusted = invoke === ownInvokeTool;
    // The race state is made only for a tool that answers with a promise; the signal only if the tool asks.
    // The signal source of the last call that answered synchronously, if no call holds it now.
    const signals = this.#spareSignals ?? new CallSignal();
    this.#spareSignals = undefined;
    if (validated) signals.checkedAgainst = entry.parameters;
    let output: unknown;
    try {
      if (invoke !== undefined) {
        output = invoke.call(tool, input, context, signals);
        if (!trusted) output = isThenable(output) ? Promise.resolve(output).then(textAsResult) : textAsResult(output);
      } else {
        // Like TypedAgentTool's run, an execute that declares no signal parameter gets the shared one.
        // One that promises to let go of it when it settles gets a signal reused from an earlier call.
        output = tool.execute(
          input as string,
          context,
          tool.execute.length < 3 ? neverAborted : entry.releasesSignal ? signals.lease() : signals.signal(),
        );
      }
    } catch (error) {
      return this.#checks.exception(name, error, context, logger);
    }
    if (!isThenable(output)) {
      signals.release();
      // Answered: nothing of this call uses the source again, so the next call may (an object less per
      // call). One whose tool made a signal keeps it to itself: that signal is the tool's to hold.
      if (signals.controller === undefined) {
        signals.checkedAgainst = undefined;
        this.#spareSignals = signals;
      }
      return this.#checks.settle(name, output, context, trusted, logger, entry.outputSchema);
    }
    const call = new Call(
      this.#hooks,
      name,
      context,
      signal,
      trusted,
      entry.annotations?.readOnlyHint === true,
      logger,
      entry.outputSchema,
      signals,
    );
    return call.race(output, Math.min(options?.timeoutMs ?? entry.timeoutMs ?? this.#defaultTimeoutMs, MAX_TIMER_MS));
  }
}

/** Raw text from a fast path that is not TypedAgentTool's own: checked as a successful result like any other. */
function textAsResult(output: unknown): unknown {
  return typeof output === 'string' ? InvokeResult.create(output) : output;
}

export type { RegisteredTool };

import { silentAdminLogger, type AdminLogger } from './admin-logger.js';
import type { AgentTool, AgentToolExecutionContext, AnyAgentToolClass } from './agent-tool.js';
import { decodeArguments } from './arguments.js';
import { ExecutionErrorCode } from './errors.js';
import { InvokeResult, type InvokeError } from './invoke-result.js';
import type { AgentToolRegistry, RegisteredTool } from './tool-registry.js';
import { invokeTool, serialisedResults } from './typed-agent-tool.js';

/** Builds a tool instance for one call: the host's DI. It may throw (a missing dependency): the call then fails cleanly. */
export type ToolFactory = (toolClass: AnyAgentToolClass, context: AgentToolExecutionContext) => AgentTool;

export interface AgentToolExecutorOptions {
  readonly registry: AgentToolRegistry;
  /** Defaults to `new ToolClass({ logger })`. */
  readonly createTool?: ToolFactory;
  readonly logger?: AdminLogger;
  /** Time-out of a call when neither the call nor the tool sets one. Default 30 000 ms. */
  readonly defaultTimeoutMs?: number;
  /** How long a cancelled call waits for the tool to describe its own cancellation. Default 100 ms. */
  readonly cancelGraceMs?: number;
}

export interface ExecuteOptions {
  /** The caller's cancellation: aborts the tool's signal; the call returns a successful result describing it (AGN-005 §8). */
  readonly signal?: AbortSignal;
  /** Overrides the tool's and the executor's time-out for this call. */
  readonly timeoutMs?: number;
}

const MAX_TIMER_MS = 2_147_483_647;
const STACK_FRAME = /\n\s+at\s/;

interface FastPathTool {
  [invokeTool](input: unknown, context: AgentToolExecutionContext, signal?: AbortSignal): Promise<unknown>;
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
  readonly #cancelGraceMs: number;

  constructor(options: AgentToolExecutorOptions) {
    this.#registry = options.registry;
    this.#logger = options.logger ?? silentAdminLogger;
    const logger = this.#logger;
    this.#createTool = options.createTool ?? ((toolClass) => new toolClass({ logger }));
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? 30_000;
    this.#cancelGraceMs = options.cancelGraceMs ?? 100;
  }

  /**
   * Runs one call. `args` is the model's JSON text, or an object already parsed (an HTTP body), which
   * is then not serialised again.
   */
  async execute(name: string, args: unknown, context: AgentToolExecutionContext = {}, options: ExecuteOptions = {}): Promise<InvokeResult<string>> {
    const entry = this.#registry.get(name);
    if (entry === undefined) {
      return InvokeResult.fromError(`Tool "${name}" does not exist. Available tools: ${this.#registry.names().join(', ') || 'none'}.`, ExecutionErrorCode.TOOL_NOT_FOUND);
    }
    const { signal } = options;
    if (signal?.aborted) return cancelledResult(name, context, 0);

    // Tools built on TypedAgentTool parse and validate their own input (once); others are checked here
    // first, so invalid arguments never cost building a tool.
    const fastPath = typeof (entry.toolClass.prototype as Partial<FastPathTool>)[invokeTool] === 'function';
    let input = args;
    if (!fastPath) {
      const decoded = decodeArguments<object>(name, entry.parameters, args);
      if (!decoded.ok) return InvokeResult.fromError(decoded.message, ExecutionErrorCode.INVALID_ARGUMENTS);
      input = JSON.stringify(decoded.value);
    }

    let tool: AgentTool;
    try {
      tool = this.#createTool(entry.toolClass, context);
    } catch (error) {
      this.#logger.addException(`[${name}_CreateTool__Exception]`, error, pairs(context));
      return InvokeResult.fromError(`${name} is not available: the host could not create it. The host's configuration needs fixing; calling again will not help.`, ExecutionErrorCode.TOOL_UNAVAILABLE);
    }

    let call: Promise<unknown>;
    const controller = new AbortController();
    try {
      call = fastPath
        ? (tool as unknown as FastPathTool)[invokeTool](input, context, controller.signal)
        : tool.execute(input as string, context, controller.signal);
    } catch (error) {
      return this.#exception(name, error, context);
    }

    const timeoutMs = Math.min(options.timeoutMs ?? entry.timeoutMs ?? this.#defaultTimeoutMs, MAX_TIMER_MS);
    const started = performance.now();
    return new Promise<InvokeResult<string>>((resolve) => {
      let settled = false;
      let graceTimer: ReturnType<typeof setTimeout> | undefined;
      const finish = (result: InvokeResult<string>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (graceTimer !== undefined) clearTimeout(graceTimer);
        signal?.removeEventListener('abort', onAbort);
        resolve(result);
      };
      const timer = setTimeout(() => {
        controller.abort(new DOMException(`${name} timed out after ${timeoutMs} ms`, 'TimeoutError'));
        this.#logger.addError(`[${name}_ExecuteAsync__Timeout]`, `${name} did not finish within ${timeoutMs} ms.`, pairs(context));
        finish(InvokeResult.fromError(`${name} did not finish within ${timeoutMs} ms and was stopped. Try a smaller request, or raise the tool's time-out.`, ExecutionErrorCode.TIMEOUT));
      }, timeoutMs);
      const onAbort = () => {
        controller.abort(signal?.reason);
        // The tool may describe its own cancellation (AGN-005 §8); give it a moment before answering for it.
        graceTimer = setTimeout(() => finish(cancelledResult(name, context, performance.now() - started)), this.#cancelGraceMs);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      call.then(
        (output) => finish(this.#normalise(name, output, context)),
        (error: unknown) => finish(this.#exception(name, error, context)),
      );
    });
  }

  #exception(name: string, error: unknown, context: AgentToolExecutionContext): InvokeResult<string> {
    this.#logger.addException(`[${name}_ExecuteAsync__Exception]`, error, pairs(context));
    return InvokeResult.fromError(`${name} failed to process arguments.`, ExecutionErrorCode.TOOL_EXCEPTION);
  }

  /** Accepts any object shaped like an InvokeResult; a successful one must carry valid JSON text (AGN-005 §9). */
  #normalise(name: string, output: unknown, context: AgentToolExecutionContext): InvokeResult<string> {
    if (serialisedResults.has(output as object)) return output as InvokeResult<string>;
    if (!InvokeResult.isInvokeResult(output)) {
      this.#logger.addError(`[${name}_ExecuteAsync__MalformedResult]`, `${name} returned something that is not an InvokeResult.`, pairs(context));
      return InvokeResult.fromError(`${name} returned a malformed result.`, ExecutionErrorCode.MALFORMED_RESULT);
    }
    if (output.successful) {
      const text = output.result;
      if (typeof text === 'string') {
        try {
          JSON.parse(text);
          return InvokeResult.create(text);
        } catch {
          // fall through: not JSON
        }
      }
      this.#logger.addError(`[${name}_ExecuteAsync__MalformedResult]`, `${name} returned a successful result that is not JSON text.`, pairs(context));
      return InvokeResult.fromError(`${name} returned a result that is not valid JSON.`, ExecutionErrorCode.MALFORMED_RESULT);
    }
    const errors = cleanErrors(output.errors);
    return errors.length > 0 ? { successful: false, result: null, errors } : InvokeResult.fromError(`${name} failed without saying why.`);
  }
}

/** Keeps only well-formed errors, and cuts any stack trace out of their messages. */
function cleanErrors(errors: readonly unknown[] | undefined): InvokeError[] {
  const out: InvokeError[] = [];
  for (const error of errors ?? []) {
    if (error === null || typeof error !== 'object') continue;
    const { message, code } = error as { message?: unknown; code?: unknown };
    if (typeof message !== 'string' || message.trim() === '') continue;
    const frame = message.search(STACK_FRAME);
    const clean = frame === -1 ? message : message.slice(0, frame);
    out.push(typeof code === 'string' ? { message: clean, code } : { message: clean });
  }
  return out;
}

function cancelledResult(name: string, context: AgentToolExecutionContext, elapsedMs: number): InvokeResult<string> {
  return InvokeResult.create(
    JSON.stringify({
      wasCancelled: true,
      message: `${name} was cancelled by the caller before it finished.`,
      elapsedMs: Math.round(elapsedMs),
      sessionId: context.sessionId ?? null,
      conversationId: context.conversationId ?? null,
    }),
  );
}

function pairs(context: AgentToolExecutionContext): Array<[string, string]> {
  return [
    ['SessionId', context.sessionId ?? ''],
    ['ConversationId', context.conversationId ?? ''],
  ];
}

export type { RegisteredTool };

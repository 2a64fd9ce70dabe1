import type { CallToolResult } from '@modelcontextprotocol/client';
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import {
  ExecutionErrorCode,
  InvokeResult,
  parseArgumentsJson,
  validateArguments,
  type AdminLogger,
  type AgentTool,
  type AgentToolClass,
  type AgentToolExecutionContext,
  type FunctionToolSchema,
  type JsonSchema,
  type ToolAnnotations,
  type ToolDependencies,
} from '@aptix/tool-contract';
import { BridgeErrorCode } from './codes.js';
import { reason, ServerUnavailableError, type ServerConnection } from './connection.js';
import { bounded, invalidResultSummary, toInvokeResult } from './remote-result.js';

/** Everything a bridged tool class is made from. */
export interface BridgedToolSpec {
  readonly name: string;
  readonly remoteName: string;
  readonly server: string;
  readonly schema: FunctionToolSchema;
  readonly usage: string;
  readonly timeoutMs: number | undefined;
  readonly annotations: ToolAnnotations | undefined;
  /** The modes the tool joins (its static `Modes`), when the options name any. */
  readonly modes: readonly string[] | undefined;
  /** A person approves each call first (the options' `approval`): its static ApprovalPolicy is "always". */
  readonly approval?: boolean;
}

/** How a bridged tool stands now, after the server's later tool lists. */
export type RemoteToolStatus =
  | { readonly kind: 'offered' }
  | { readonly kind: 'changed'; readonly parameters: JsonSchema }
  | { readonly kind: 'rejected'; readonly why: string }
  | { readonly kind: 'gone' };

/** What a bridged tool needs of its bridge at call time. */
export interface BridgeRuntime {
  readonly connection: ServerConnection;
  status(remoteName: string): RemoteToolStatus;
  /** The time-out a call gets when the tool declares none (the executor's default). */
  readonly defaultTimeoutMs: number;
}

/** A bridged tool class: an ordinary AgentToolClass, plus where it came from. */
export type BridgedToolClass = AgentToolClass<ToolDependencies> & {
  readonly RemoteToolName: string;
  readonly McpServerName: string;
  readonly UsageMetadataGenerated: true;
};

/**
 * Makes the Aptix tool class of one remote tool. The host builds it like any tool (its constructor
 * takes `{ logger }`), registers it, and checks it against the contract; the connection to the server
 * is reached through the closure, so several bridges (one per configured server) never share a
 * dependency name.
 */
export function bridgedToolClass(spec: BridgedToolSpec, runtime: BridgeRuntime): BridgedToolClass {
  const schemaText = JSON.stringify(spec.schema);
  const toolClass = class implements AgentTool {
    static readonly ToolName = spec.name;
    static readonly ToolUsageMetadata = spec.usage;
    static readonly TimeoutMs = spec.timeoutMs;
    static readonly ToolAnnotations = spec.annotations;
    static readonly Modes = spec.modes;
    static readonly ApprovalPolicy = spec.approval === true ? ('always' as const) : ('never' as const);
    static readonly RemoteToolName = spec.remoteName;
    static readonly McpServerName = spec.server;
    /** `execute` hands its signal only to the SDK's request, which removes its listener when it settles. */
    static readonly ReleasesSignal = true as const;
    /** The usage metadata was generated from the server's description and schema (see the README). */
    static readonly UsageMetadataGenerated = true as const;
    static getSchema(): FunctionToolSchema {
      return JSON.parse(schemaText) as FunctionToolSchema;
    }

    readonly name = spec.name;
    readonly isToolFullyExecutedOnServer = true;
    readonly #logger: AdminLogger;

    constructor(dependencies: ToolDependencies) {
      this.#logger = dependencies.logger;
    }

    execute(
      argumentsJson: string,
      context: AgentToolExecutionContext,
      signal: AbortSignal,
    ): Promise<InvokeResult<string>> {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      return forward(spec, runtime, this.#logger, argumentsJson, context ?? {}, signal);
    }
  };
  Object.defineProperty(toolClass, 'name', {
    value: `${spec.name.replace(/(^|_)([a-z0-9])/g, (_m, _u, c: string) => c.toUpperCase())}BridgedTool`,
  });
  return toolClass;
}

async function forward(
  spec: BridgedToolSpec,
  runtime: BridgeRuntime,
  logger: AdminLogger,
  argumentsJson: string,
  context: AgentToolExecutionContext,
  signal: AbortSignal | undefined,
): Promise<InvokeResult<string>> {
  const { name, remoteName, server } = spec;
  const status = runtime.status(remoteName);
  if (status.kind === 'gone')
    return InvokeResult.fromError(
      `${name}: MCP server "${server}" no longer offers the tool "${remoteName}".`,
      BridgeErrorCode.REMOTE_TOOL_GONE,
    );
  if (status.kind === 'rejected')
    return InvokeResult.fromError(
      `${name}: MCP server "${server}" changed the arguments of "${remoteName}" and the new schema cannot be offered (${status.why}). Restart the host once the server is fixed.`,
      BridgeErrorCode.REMOTE_SCHEMA_REJECTED,
    );
  // Checked here too, not only by the executor: `execute` may be called directly, and nothing the
  // schema refuses is sent to the server. After a change, the server's new schema is the one checked.
  const parsed = parseArgumentsJson(name, argumentsJson);
  if (!parsed.ok) return InvokeResult.fromError(parsed.message, ExecutionErrorCode.INVALID_ARGUMENTS);
  const checked = validateArguments<Record<string, unknown>>(
    name,
    status.kind === 'changed' ? status.parameters : spec.schema.parameters,
    parsed.value,
  );
  if (!checked.ok) {
    const note =
      status.kind === 'changed'
        ? ` (MCP server "${server}" changed this tool's arguments since the host started.)`
        : '';
    return InvokeResult.fromError(`${checked.message}${note}`, ExecutionErrorCode.INVALID_ARGUMENTS);
  }
  const args = checked.value;
  const started = performance.now();
  const abort = signal ?? new AbortController().signal;
  let result: CallToolResult;
  try {
    // Progress is asked of the server only when the caller listens (an MCP client's progress token, an
    // HTTP event stream): a progress token costs the SDK a handler per call, and the server work.
    const report = context.reportProgress;
    result = await runtime.connection.call(
      remoteName,
      args,
      abort,
      spec.timeoutMs ?? runtime.defaultTimeoutMs,
      report === undefined
        ? undefined
        : (progress) => {
            report(
              progress.message === undefined
                ? { progress: progress.progress, ...(progress.total === undefined ? {} : { total: progress.total }) }
                : {
                    progress: progress.progress,
                    ...(progress.total === undefined ? {} : { total: progress.total }),
                    message: progress.message,
                  },
            );
            logger.addCustomEvent(
              'debug',
              `[${name}_Progress]`,
              `${progress.progress}${progress.total === undefined ? '' : `/${progress.total}`}${progress.message ? `: ${progress.message}` : ''}`,
              pairs(context),
            );
          },
    );
  } catch (error) {
    if (abort.aborted) return aborted(spec, abort, context, performance.now() - started);
    return failure(spec, runtime, logger, error, context);
  }
  if (abort.aborted) return aborted(spec, abort, context, performance.now() - started);
  return toInvokeResult(spec, result, context);
}

function failure(
  spec: BridgedToolSpec,
  runtime: BridgeRuntime,
  logger: AdminLogger,
  error: unknown,
  context: AgentToolExecutionContext,
): InvokeResult<string> {
  const { name, server } = spec;
  if (error instanceof ServerUnavailableError)
    return InvokeResult.fromError(`${name}: ${error.message}. Try again later.`, BridgeErrorCode.REMOTE_UNAVAILABLE);
  if (error instanceof ProtocolError)
    return InvokeResult.fromError(
      `${name}: MCP server "${server}" refused the call: ${bounded(reason(error))}`,
      BridgeErrorCode.REMOTE_PROTOCOL_ERROR,
    );
  if (error instanceof SdkError && error.code === SdkErrorCode.InvalidResult) {
    // The SDK client refused the answer against MCP's schema (bad base64, a block type MCP does not define…).
    return InvokeResult.fromError(
      `${name}: MCP server "${server}" answered "${spec.remoteName}" with a result that is not a valid MCP tool result: ${invalidResultSummary(error.message)}. ` +
        'The call reached the server and the tool ran there; nothing of its answer was sent. The server needs fixing; calling again will likely get the same answer.',
      BridgeErrorCode.REMOTE_MALFORMED_RESULT,
    );
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    if (spec.annotations?.readOnlyHint !== true) return outcomeUnknown(spec, 'did not answer in time');
    return InvokeResult.fromError(
      `${name}: MCP server "${server}" did not answer in time; the call was cancelled on the server.`,
      ExecutionErrorCode.TIMEOUT,
    );
  }
  if (!isConnectionTrouble(error)) {
    logger.addException(`[${name}_ExecuteAsync__Exception]`, error, pairs(context));
    return InvokeResult.fromError(
      `${name} failed to forward the call to MCP server "${server}"; whether it reached the server is unknown.`,
      ExecutionErrorCode.TOOL_EXCEPTION,
    );
  }
  // The connection's trouble (a dead process, a refused or reset HTTP connection, an unknown session
  // after the server restarted): reconnect, and say honestly that the outcome is unknown.
  logger.addException(`[${name}_ExecuteAsync__RemoteUnavailable]`, error, pairs(context));
  runtime.connection.lost(reason(error));
  return InvokeResult.fromError(
    `${name}: the connection to MCP server "${server}" failed during the call ` +
      `(${bounded(reason(error), 300)}); whether the call took effect on the server is unknown. ` +
      `The host is reconnecting; try again later.`,
    BridgeErrorCode.REMOTE_UNAVAILABLE,
  );
}

/**
 * A call the caller cancelled or the deadline cut. The server was sent notifications/cancelled, but it
 * may have finished first: only for a tool the server marks read-only can the answer promise that
 * nothing happened (the cancelled shape, or TIMEOUT). Otherwise the outcome is unknown, and the answer
 * says so (OUTCOME_UNKNOWN) instead of claiming either (docs/tool-packages.md, "Cancellation").
 */
function aborted(
  spec: BridgedToolSpec,
  signal: AbortSignal,
  context: AgentToolExecutionContext,
  elapsedMs: number,
): InvokeResult<string> {
  const timedOut = (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
  if (spec.annotations?.readOnlyHint !== true)
    return outcomeUnknown(spec, timedOut ? 'did not finish in time' : 'was cancelled by the caller');
  if (timedOut)
    return InvokeResult.fromError(
      `${spec.name} did not finish in time and was cancelled on MCP server "${spec.server}"; the tool changes nothing.`,
      ExecutionErrorCode.TIMEOUT,
    );
  return InvokeResult.create(
    JSON.stringify({
      wasCancelled: true,
      message: `${spec.name} was cancelled by the caller before it finished; MCP server "${spec.server}" was told to stop (the tool changes nothing).`,
      outcome: 'no_effect',
      elapsedMs: Math.round(elapsedMs),
      sessionId: context.sessionId ?? null,
      conversationId: context.conversationId ?? null,
    }),
  );
}

function outcomeUnknown(spec: BridgedToolSpec, what: string): InvokeResult<string> {
  return InvokeResult.fromError(
    `${spec.name} ${what}; MCP server "${spec.server}" was told to stop, but it may have finished first, so whether the call took effect there is unknown. ` +
      'Check the state it changes before calling it again; calling it again may apply the change twice.',
    ExecutionErrorCode.OUTCOME_UNKNOWN,
  );
}

const CONNECTION_CODES: ReadonlySet<string> = new Set([
  SdkErrorCode.ConnectionClosed,
  SdkErrorCode.NotConnected,
  SdkErrorCode.SendFailed,
]);

/** Errors that say the connection, not the call, is broken. */
function isConnectionTrouble(error: unknown): boolean {
  if (error instanceof SdkHttpError) return true;
  if (error instanceof SdkError) return CONNECTION_CODES.has(error.code);
  // fetch failures (ECONNREFUSED, ECONNRESET…) surface as TypeError('fetch failed') with a cause carrying the code.
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return (
    (error instanceof TypeError && /fetch failed/i.test(error.message)) ||
    (typeof cause?.code === 'string' && /^E[A-Z]+$/.test(cause.code))
  );
}

function pairs(context: AgentToolExecutionContext): Array<[string, string]> {
  return [
    ['SessionId', context.sessionId ?? ''],
    ['ConversationId', context.conversationId ?? ''],
  ];
}

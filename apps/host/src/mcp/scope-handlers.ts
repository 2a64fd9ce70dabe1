import {
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolRequestParams,
  type CallToolResult,
  type ListToolsResult,
  type LoggingLevel,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { InvokeResult, type ToolInputChannel } from '@aptix/tool-contract';
import { logForwarder, progressReporter } from './call-notifications.js';
import type { AptixHost, CallOptions } from '../aptix-host.js';
import { callToolResult } from './tool-result.js';
import {
  askForInput,
  askLegacyRounds,
  canBeAsked,
  clientAnswers,
  declaredCapabilities,
  inputChannel,
  isToolState,
  legacyFirstInput,
  missingCapability,
  NO_INPUT,
} from './tool-input.js';
import {
  declaresTasks,
  howItStopped,
  missingTasksCapability,
  startLegacyTask,
  startTask,
  throwIfHostFailure,
  withTaskSupport,
} from './tasks.js';
import {
  askLegacy,
  askModern,
  isApprovalState,
  openState,
  pendingResult,
  resumeModern,
  type ModernCall,
} from './approval-elicitation.js';
import type { McpScope } from './mcp-scope.js';
import { announceUnitChanges } from './unit-notifications.js';
import {
  afterChangeGuidance,
  CALL_TOOL,
  deferredListing,
  FIND_TOOLS,
  findTools,
  modesOffering,
  pairRefusal,
  servesPair,
  unwrapCall,
  withDiscovery,
} from './discovery.js';

export const MODE_CHANGE_TOOL = 'agent_change_mode';

type Outcome = Awaited<ReturnType<AptixHost['call']>>;

function errorText(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * The `tools/list` and `tools/call` handlers of a scope, shared by the SDK server and the HTTP fast
 * lane (fast-lane.ts) so both answer alike. Without `server` (the fast lane) the call can never ask
 * the user a question: the lane takes only requests from clients that declared no form elicitation.
 *
 * One object per request, its handlers methods rather than closures: the fast lane makes one per
 * call, and what a call allocates is what the young-generation collector costs it.
 */
export class ScopeHandlers {
  constructor(
    private readonly host: AptixHost,
    private readonly scope: McpScope,
    private readonly server?: Server,
  ) {}

  #listScope(): { mode?: string; sessionId?: string; actor?: string } {
    const scope = this.scope;
    if (scope.era === 'modern' || scope.agentSessionId === undefined) return { mode: scope.listMode };
    return scope.actor === undefined
      ? { sessionId: scope.agentSessionId }
      : { sessionId: scope.agentSessionId, actor: scope.actor };
  }

  async listTools(): Promise<ListToolsResult> {
    const { host, scope } = this;
    if (scope.era === 'legacy') scope.toolsRevision = host.toolsRevision;
    const listScope = this.#listScope();
    // Only the tools this principal may call (a principal's list is the same from request to request).
    const modeTools = host.permissions.visible(
      scope.actor,
      await host.definitions('mcp', listScope),
      (tool) => tool.name,
    );
    // A deferred mode (deferredModes) is listed as its mode tools and the pair, wherever it is listed.
    const mode =
      host.deferredModes === false ? undefined : (listScope.mode ?? (await host.sessionMode(listScope.sessionId!)));
    const tools =
      mode !== undefined && host.isDeferred(mode)
        ? deferredListing(modeTools)
        : scope.discovery
          ? withDiscovery(modeTools)
          : modeTools;
    if (scope.era === 'modern') return { tools: tools as never };
    // 2025-11-25: a tool that may run as a task says so (the 2026-07-28 listing has no such field).
    return {
      tools: tools.map((tool) =>
        withTaskSupport(tool as { name: string }, host.tool((tool as { name: string }).name)?.taskSupport),
      ) as never,
    };
  }

  async callTool(request: { params: CallToolRequestParams }, ctx: ServerContext): Promise<CallToolResult> {
    const { host, scope } = this;
    const name = request.params.name;
    if ((name === FIND_TOOLS || name === CALL_TOOL) && (await servesPair(host, scope))) {
      if (name === FIND_TOOLS) return findTools(host, scope, request.params.arguments);
      // The pair's call runs as a direct call of the tool it names, in the session it names: the same checks, approvals, tasks and answers.
      const unwrapped = unwrapCall(scope, request.params);
      if ('refused' in unwrapped) return unwrapped.refused;
      const inner = unwrapped.scope === scope ? this : new ScopeHandlers(host, unwrapped.scope, this.server);
      return keepsOutputSchema(host, unwrapped.params.name, await inner.#callTool(unwrapped.params, ctx, true));
    }
    return keepsOutputSchema(host, name, await this.#callTool(request.params, ctx));
  }

  /** `viaPair`: the call came through aptix_call_tool, whose refusals say what a client that calls through it can do. */
  async #callTool(params: CallToolRequestParams, ctx: ServerContext, viaPair = false): Promise<CallToolResult> {
    const { host, scope, server } = this;
    const name = params.name;
    const args = params.arguments ?? {};
    // A 2025 session that listed the tools before they changed learns of it on this request's stream.
    if (scope.era === 'legacy' && scope.toolsRevision !== undefined && scope.toolsRevision !== host.toolsRevision) {
      scope.toolsRevision = host.toolsRevision;
      await ctx.mcpReq.notify({ method: 'notifications/tools/list_changed' }).catch(() => undefined);
    }
    // ...and of prompts and resources that changed since it listed them (nothing to do, and no await, for the others).
    if (scope.era === 'legacy' && (scope.promptsRevision !== undefined || scope.resourcesRevision !== undefined))
      await announceUnitChanges(host, scope, ctx);
    if (scope.era === 'modern' && scope.agentSessionId === undefined) {
      const offered = await host.toolNames({ mode: scope.listMode });
      if (!offered.includes(name))
        return viaPair
          ? pairRefusal(host, scope, name)
          : unknownOrOutside(host, scope, name, offered, `mode "${scope.listMode}"`);
      // The mode change tool works on an agent session: the first one without a handle starts one in this endpoint's mode.
      if (name === MODE_CHANGE_TOOL) {
        scope.agentSessionId = (await host.createSession({ mode: scope.listMode }, scope.actor)).id;
        await scope.onAgentSession?.(scope.agentSessionId);
      }
    }
    // What binds a question's state to this call; made only when a question or an approval needs it.
    let bound: ModernCall | undefined;
    const call = (): ModernCall =>
      (bound ??= { name, args, actor: scope.actor, agentSessionId: scope.agentSessionId, log: scope.log });
    // 2026-07-28: a retry carrying requestState continues a question to the user (an approval).
    const rawState = scope.era === 'modern' ? ctx.mcpReq.requestState<unknown>() : undefined;
    const state = typeof rawState === 'string' ? await openState(host, rawState, ctx) : undefined;
    if (isApprovalState(state)) return resumeModern(host, state, rawState as string, call(), ctx);
    if (state !== undefined && !isToolState(state))
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Invalid requestState: ${name} did not ask for input. Call it again without requestState.`,
        { reason: 'invalid_request_state' },
      );
    // The tool may ask the client (InvokeResult.inputRequired: its user, its model, its roots). 2026-07-28: a retry brings the answers and its state.
    // 2025 revisions, to a client that declared what the tool asks for: the host asks and calls the tool again (askLegacyRounds).
    const legacyCapabilities =
      scope.era === 'legacy' && server !== undefined
        ? (scope.clientCapabilities ?? server.getClientCapabilities())
        : undefined;
    const legacyAsks = legacyCapabilities !== undefined && canBeAsked(legacyCapabilities);
    const input =
      scope.era === 'modern'
        ? ((state === undefined ? firstInput(ctx) : undefined) ?? inputChannel(ctx, state, call()))
        : legacyAsks
          ? legacyFirstInput(legacyCapabilities)
          : undefined;
    // 2026-07-28: a tool that declares TaskSupport runs as a task for a client that declared the extension.
    // 2025-11-25: a client asks for a task with the request's `task` parameter (experimental tasks).
    // A tool that asks before its task (TaskInput 'before') asks on tools/call; the round bringing its answers becomes the task.
    const entry = host.tool(name);
    const taskSupport = entry?.taskSupport ?? 'forbidden';
    if (taskSupport !== 'forbidden') {
      const asksFirst = scope.era === 'modern' && entry?.taskInput === 'before' && declaresTasks(ctx);
      const legacyTask =
        scope.era === 'legacy' &&
        typeof (params as { task?: unknown }).task === 'object' &&
        (params as { task?: unknown }).task !== null;
      if (
        asksFirst
          ? isToolState(state)
          : state === undefined && (scope.era === 'modern' ? declaresTasks(ctx) : legacyTask)
      ) {
        const base = {
          ...(scope.agentSessionId === undefined ? {} : { sessionId: scope.agentSessionId }),
          ...(scope.log === undefined ? {} : { logger: scope.log }),
          ...(scope.actor === undefined ? {} : { actor: scope.actor }),
        };
        const step = async (signal: AbortSignal, taskInput: NonNullable<typeof input>) => {
          // 2025 tasks cannot carry questions: a tool that asks fails with INPUT_REQUIRED there.
          const outcome = await host.call(name, args, {
            ...base,
            signal,
            ...(scope.era === 'modern' ? { input: taskInput } : {}),
          });
          // A task's questions park it (input_required) until tasks/update brings the answers.
          if (outcome.kind === 'result' && !outcome.result.successful && outcome.result.inputRequired !== undefined)
            return { needs: outcome.result.inputRequired };
          // The host ended the call without the tool's answer (its time-out, a worker out of memory): the task fails.
          if (outcome.kind === 'result') throwIfHostFailure(outcome.result);
          return {
            done: await this.#finish(name, ctx, call, outcome, false),
            ...(outcome.kind === 'result' ? howItStopped(outcome.result) : {}),
          };
        };
        return (scope.era === 'modern'
          ? await startTask(
              host,
              scope.actor,
              scope.agentSessionId,
              name,
              step,
              // A task asks whatever it needs in tasks/update rounds; the client's model and roots only if it declared them.
              asksFirst ? input : { ...clientAnswers(declaredCapabilities(ctx)), responses: {} },
            )
          : await startLegacyTask(host, scope.actor, scope.agentSessionId, name, step)) as unknown as CallToolResult;
      }
      if (taskSupport === 'required' && state === undefined && !asksFirst) {
        if (scope.era === 'modern') throw missingTasksCapability(`${name} runs only as a task, so calling it`);
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `${name} runs only as a task: call it with the "task" parameter (experimental tasks of 2025-11-25).`,
        );
      }
    }
    const progress = progressReporter(params._meta?.progressToken, ctx);
    // 2025 sessions: the level set with logging/setLevel, else info; 2026-07-28: only the request's own level.
    const threshold =
      scope.era === 'legacy'
        ? (scope.logLevel ?? 'info')
        : ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as
            LoggingLevel | undefined);
    const logs = threshold === undefined ? undefined : logForwarder(name, threshold, ctx);
    const signal = scope.cancel ? AbortSignal.any([ctx.mcpReq.signal, scope.cancel]) : undefined;
    // Built field by field: spreads of optional parts cost a call more than the rest of this step.
    const options: { -readonly [K in keyof CallOptions]: CallOptions[K] } = {};
    if (scope.agentSessionId !== undefined) options.sessionId = scope.agentSessionId;
    // Made only if the call asks (the fast lane's signal is made on demand; see lazy-abort.ts).
    options.signal = signal ?? (() => ctx.mcpReq.signal);
    if (progress !== undefined) options.onProgress = progress.report;
    if (logs !== undefined) options.onLog = logs.log;
    if (scope.log !== undefined) options.logger = scope.log;
    if (scope.actor !== undefined) options.actor = scope.actor;
    if (input !== undefined) options.input = input;
    let outcome: Outcome;
    try {
      outcome = await host.call(name, args, options);
      if (legacyAsks && server !== undefined) {
        const questions = scope.questions;
        const rounds = await askLegacyRounds(
          outcome,
          (current) =>
            current.kind === 'result' && !current.result.successful ? current.result.inputRequired : undefined,
          (channel: ToolInputChannel) => host.call(name, args, { ...options, input: channel }),
          {
            answers: clientAnswers(legacyCapabilities),
            signal: signal ?? ctx.mcpReq.signal,
            hold: () => questions?.hold(server) ?? true,
            release: () => questions?.release(server),
          },
          ctx,
        );
        if (rounds.kind === 'stopped') return rounds.result;
        outcome = rounds.outcome;
      }
    } finally {
      progress?.end();
      logs?.end();
    }
    return this.#finish(name, ctx, call, outcome, true, viaPair);
  }

  /** The call's outcome as a tool result; `interactive` when the client is there to be asked (not a task running on). */
  async #finish(
    name: string,
    ctx: ServerContext,
    call: () => ModernCall,
    outcome: Outcome,
    interactive: boolean,
    viaPair = false,
  ): Promise<CallToolResult> {
    const { host, scope, server } = this;
    // Through the pair, a tool the session's mode does not offer (or a session that is not there) is refused in the pair's words.
    if (
      viaPair &&
      (outcome.kind === 'not_found' ||
        (outcome.kind === 'refused' && (outcome.code === 'TOOL_NOT_IN_MODE' || outcome.code === 'SESSION_NOT_FOUND')))
    )
      return pairRefusal(host, scope, name);
    if (outcome.kind === 'not_found') {
      const offered = await host.toolNames(this.#listScope());
      return unknownOrOutside(
        host,
        scope,
        name,
        offered,
        scope.agentSessionId === undefined
          ? `mode "${scope.listMode}"`
          : `the mode of agent session ${scope.agentSessionId}`,
      );
    }
    // A client that can ask its user is asked (input_required, or elicitation on 2025 revisions); any other learns that the call waits, and where it is decided.
    if (outcome.kind === 'pending_approval') {
      if (!interactive) return pendingResult(outcome.approval);
      // Separation of duties: a client that authenticated as the principal that asked is never asked to decide.
      if (scope.actor !== undefined && !host.cradle.principals.allowsSelfApproval(outcome.approval.toolName)) {
        return pendingResult(
          outcome.approval,
          'Another principal must decide it: the one that asked for a call never decides it.',
        );
      }
      if (scope.era === 'modern')
        return (await askModern(host, outcome.approval, call(), ctx)) ?? pendingResult(outcome.approval);
      const questions = scope.questions;
      return askLegacy(
        host,
        outcome.approval,
        {
          capabilities: scope.clientCapabilities ?? server?.getClientCapabilities(),
          actor: scope.actor,
          log: scope.log,
          signal: scope.cancel ? AbortSignal.any([ctx.mcpReq.signal, scope.cancel]) : ctx.mcpReq.signal,
          hold: () => (server === undefined ? false : (questions?.hold(server) ?? true)),
          release: () => server !== undefined && questions?.release(server),
        },
        ctx,
      );
    }
    if (outcome.kind !== 'result') return errorText(outcome.message);
    const { result } = outcome;
    if (!result.successful && result.inputRequired !== undefined && interactive && scope.era === 'modern')
      return askForInput(host, result.inputRequired, call());
    // 2026-07-28: needing a capability the request did not declare (sampling, roots) is the protocol's -32021.
    if (!result.successful && scope.era === 'modern') {
      const missing = missingCapability(result, declaredCapabilities(ctx));
      if (missing !== undefined) throw missing;
    }
    if (!result.successful) return errorText(InvokeResult.errorMessage(result));
    if (name === MODE_CHANGE_TOOL) {
      const guidance = await afterModeChange(scope, result.result, ctx);
      if (guidance !== undefined)
        return {
          content: [
            { type: 'text', text: result.result },
            { type: 'text', text: guidance },
          ],
        };
    }
    return callToolResult(result, host.declaresOutputSchema(name));
  }
}

/**
 * A 2026-07-28 first call's input channel when it is the shared {@link NO_INPUT} (the client cannot be
 * asked and sent no answers: every fast-lane call), else undefined ({@link inputChannel} makes it).
 */
function firstInput(ctx: ServerContext): ToolInputChannel | undefined {
  if (ctx.mcpReq.inputResponses !== undefined) return undefined;
  return canBeAsked(declaredCapabilities(ctx)) ? undefined : NO_INPUT;
}

/** The answer for a tool the scope does not offer: unknown tools are a protocol error (-32602), as the specification says. */
async function unknownOrOutside(
  host: AptixHost,
  scope: McpScope,
  name: string,
  offered: readonly string[],
  where: string,
): Promise<CallToolResult> {
  const exists = (await host.toolNames({})).includes(name);
  if (!exists) {
    // A tool a package withdrew while the host runs (a bridged MCP server removed it) says so.
    const withdrawn = host.withdrawnTool(name);
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Unknown tool: "${name}".${withdrawn === undefined ? '' : ` ${withdrawn}`} Tools in ${where}: ${offered.join(', ')}.`,
    );
  }
  if (scope.discovery !== true)
    return errorText(
      `Tool "${name}" is not offered in ${where}. Tools in this mode: ${offered.join(', ')}. To use it, switch to a mode that offers it with agent_change_mode.`,
    );
  // A client whose list cannot follow the session's mode: what it can do is the pair, with the session's id.
  const modes = await modesOffering(host, name);
  const handle =
    scope.agentSessionId === undefined
      ? 'the sessionId agent_change_mode returns'
      : `"sessionId": "${scope.agentSessionId}"`;
  return errorText(
    `Tool "${name}" is not offered in ${where}; it was not run. Tools in this mode: ${offered.join(', ')}.` +
      ` ${name} is in mode ${modes.map((key) => `"${key}"`).join(', ') || '(none)'}: switch with agent_change_mode, then call it through ${CALL_TOOL} with ${handle}.`,
  );
}

/**
 * Follows a successful mode change: a branch moves the scope to the new agent session; a 2025 session's
 * list follows the mode, which `list_changed` announces on this request's stream. A 2026-07-28 list is
 * a function of the endpoint, so the answer says where the new mode's tools are (the returned guidance).
 */
async function afterModeChange(scope: McpScope, resultJson: string, ctx: ServerContext): Promise<string | undefined> {
  const { sessionId, mode } = JSON.parse(resultJson) as { sessionId?: unknown; mode?: unknown };
  if (typeof sessionId === 'string' && sessionId !== scope.agentSessionId) {
    scope.agentSessionId = sessionId;
    await scope.onAgentSession?.(sessionId);
  }
  if (scope.era === 'legacy') await ctx.mcpReq.notify({ method: 'notifications/tools/list_changed' });
  if (scope.discovery === true) return afterChangeGuidance(scope, String(sessionId), String(mode));
  if (scope.era === 'legacy') return undefined;
  return (
    `Agent session ${String(sessionId)} is now in mode "${String(mode)}". Its tools are listed ` +
    `at /modes/${String(mode)}/mcp (over stdio: aptix mcp --session ${String(sessionId)}); send ` +
    `the header "X-Aptix-Session-Id: ${String(sessionId)}" with each request so calls run in this session.`
  );
}

/**
 * A tool that lists an output schema promises structuredContent in every result that is not an error,
 * and SDK clients check that promise. An answer without it (the call waits for approval, or for the
 * user) is sent as an error result: the call has not produced its result, and the text says why.
 */
function keepsOutputSchema(host: AptixHost, name: string, result: CallToolResult): CallToolResult {
  if (
    result.isError === true ||
    result.structuredContent !== undefined ||
    'task' in result ||
    !Array.isArray(result.content)
  )
    return result;
  if ((result as { resultType?: unknown }).resultType === 'input_required') return result;
  return host.tool(name)?.outputSchema === undefined ? result : { ...result, isError: true };
}

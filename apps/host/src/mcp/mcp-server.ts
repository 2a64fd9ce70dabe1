import { LOG_LEVEL_META_KEY, ProtocolError, ProtocolErrorCode, Server, type CallToolRequestParams, type CallToolResult, type ClientCapabilities, type ListToolsResult, type LoggingLevel, type ServerContext } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { InvokeResult, type LevelLogger } from '@aptix/tool-contract';
import { logForwarder, progressReporter } from './call-notifications.js';
import type { AptixHost } from '../aptix-host.js';
import { callToolResult } from './tool-result.js';
import { askForInput, askLegacyRounds, inputChannel, isToolState, LEGACY_FIRST_INPUT } from './tool-input.js';
import { declaresTasks, howItStopped, LEGACY_TASKS_CAPABILITY, missingTasksCapability, registerLegacyTaskMethods, registerTaskMethods, startLegacyTask, startTask, TASKS_EXTENSION, throwIfHostFailure, withTaskSupport } from './tasks.js';
import { askLegacy, askModern, canElicitForm, isApprovalState, openState, pendingResult, resumeModern, type ModernCall } from './approval-elicitation.js';

export const MODE_CHANGE_TOOL = 'agent_change_mode';

/**
 * Which agent session an MCP server instance works in, and which mode's tools it lists.
 *
 * - A 2025-era MCP session is bound to one agent session: `tools/list` gives that session's current
 *   mode, read from the store on every request, and a mode change announces `list_changed`.
 * - A 2026-07-28 request is stateless: `tools/list` is a function of the request (the endpoint's
 *   `listMode`), never of earlier calls. Its calls run in the agent session the request names
 *   explicitly (`agentSessionId`), or in none; either way a tool outside the mode is refused.
 */
export interface McpScope {
  readonly era: 'legacy' | 'modern';
  /** The agent session calls run in. Mutable: a first `agent_change_mode` without one creates it, a branch moves it. */
  agentSessionId: string | undefined;
  /** 2026-07-28: the mode this endpoint lists (and, without a session, allows). */
  readonly listMode?: string;
  /** Aborts the session's call when a `notifications/cancelled` for it arrives on another request. */
  readonly cancel?: AbortSignal;
  /** 2025 sessions: the level `logging/setLevel` chose (kept by the caller across requests). */
  logLevel?: LoggingLevel;
  /**
   * 2025 sessions: the host's tool revision when the session last listed the tools (kept by the caller
   * across requests). When tools changed since (a bridged MCP server added or removed some), the next
   * request's stream carries `notifications/tools/list_changed`.
   */
  toolsRevision?: number;
  /**
   * The server instance lives as long as its connection (stdio): it announces `list_changed` the
   * moment the tools change, rather than on the next request.
   */
  readonly longLived?: boolean;
  /** Over HTTP, the request's logger (it carries the request id): the calls' log lines, the tools' included, go there. */
  readonly log?: LevelLogger;
  /** Called after the scope moved to another agent session (a branch, or a session made on first use). */
  onAgentSession?(agentSessionId: string): void | Promise<void>;
  /** Over HTTP, the name of the API key that authenticated the request: who asked, and who decided an approval asked over MCP. */
  readonly actor?: string;
  /** 2025 sessions over HTTP: the capabilities the client declared on `initialize` (a per-request server never sees it). */
  readonly clientCapabilities?: ClientCapabilities;
  /**
   * 2025 sessions over HTTP: the session's one channel for a question to the user (see ElicitationRelay).
   * Without it (stdio: one server for the connection) a question may always be asked.
   */
  readonly questions?: { hold(server: Server): boolean; release(server: Server): void };
}

/**
 * One validator for every server instance. Without it the SDK builds an Ajv instance per server, and
 * a server is built per request: 10,000 abandoned sessions then cost over 100 MiB of heap high-water.
 */
let sharedValidator: AjvJsonSchemaValidator | undefined;

function errorText(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * A v2 SDK server over the host, for one serving unit: one HTTP request, or one stdio connection.
 * The same factory serves both protocol eras (see {@link McpScope}).
 */
export function createMcpServer(host: AptixHost, scope: McpScope, version: string): Server {
  const mode = () => (scope.listMode ?? 'the session mode');
  const server = new Server(
    { name: 'aptix', version },
    {
      // 2026-07-28: a list that can change (a package follows its tools) is announced on subscriptions/listen.
      capabilities: { tools: { listChanged: scope.era === 'legacy' || host.toolsMayChange }, logging: {}, ...(scope.era === 'modern' ? { extensions: { [TASKS_EXTENSION]: {} } } : { tasks: LEGACY_TASKS_CAPABILITY }) },
      jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()),
      // A 2026-07-28 list is a function of the endpoint and the loaded tool packages: fixed for the
      // process, unless a package can change its tools while the host runs (a bridged MCP server);
      // then no caching is promised.
      ...(host.toolsMayChange ? {} : { cacheHints: { 'tools/list': { ttlMs: 300_000, cacheScope: 'public' as const } } }),
      instructions:
        scope.era === 'legacy'
          ? `Aptix tools for one agent session (over HTTP its id is in the X-Aptix-Session-Id response header). The tools offered depend on the session's mode; use agent_list_modes to see the modes and agent_change_mode (after the user agrees) to switch.`
          : `Aptix tools of mode "${mode()}". Other modes are served at /mcp/modes/<mode>; agent_list_modes lists them and agent_change_mode (after the user agrees) switches the agent session's mode.`,
    },
  );

  const handlers = mcpHandlers(host, scope, server);
  server.setRequestHandler('tools/list', handlers.listTools);

  if (scope.era === 'legacy') {
    if (scope.longLived && host.toolsMayChange) {
      const stop = host.onToolsChanged(() => {
        if (scope.toolsRevision === host.toolsRevision) return;
        scope.toolsRevision = host.toolsRevision;
        server.notification({ method: 'notifications/tools/list_changed' }).catch(() => undefined);
      });
      const closed = server.onclose;
      server.onclose = () => {
        stop();
        closed?.();
      };
    }
    server.setRequestHandler('logging/setLevel', (request) => {
      scope.logLevel = request.params.level;
      return {};
    });
  }

  server.setRequestHandler('tools/call', handlers.callTool);

  if (scope.era === 'modern') registerTaskMethods(server, host, scope.actor);
  else registerLegacyTaskMethods(server, host, scope.actor);

  return server;
}

/**
 * The `tools/list` and `tools/call` handlers of a scope, shared by the SDK server and the HTTP fast
 * lane (fast-lane.ts) so both answer alike. Without `server` (the fast lane) the call can never ask
 * the user a question: the lane takes only requests from clients that declared no form elicitation.
 */
export function mcpHandlers(
  host: AptixHost,
  scope: McpScope,
  server?: Server,
): {
  listTools(): Promise<ListToolsResult>;
  callTool(request: { params: CallToolRequestParams }, ctx: ServerContext): Promise<CallToolResult>;
} {
  const listScope = () => (scope.era === 'modern' || scope.agentSessionId === undefined ? { mode: scope.listMode } : { sessionId: scope.agentSessionId });

  const listTools = async (): Promise<ListToolsResult> => {
    if (scope.era === 'legacy') scope.toolsRevision = host.toolsRevision;
    const tools = await host.definitions('mcp', listScope());
    if (scope.era === 'modern') return { tools: tools as never };
    // 2025-11-25: a tool that may run as a task says so (the 2026-07-28 listing has no such field).
    return { tools: tools.map((tool) => withTaskSupport(tool as { name: string }, host.cradle.registry.get((tool as { name: string }).name)?.taskSupport)) as never };
  };

  return { listTools, callTool: async (request, ctx) => keepsOutputSchema(host, request.params.name, await callTool(request, ctx)) };

  async function callTool(request: { params: CallToolRequestParams }, ctx: ServerContext): Promise<CallToolResult> {
    const { name, arguments: args } = request.params;
    // A 2025 session that listed the tools before they changed learns of it on this request's stream.
    if (scope.era === 'legacy' && scope.toolsRevision !== undefined && scope.toolsRevision !== host.toolsRevision) {
      scope.toolsRevision = host.toolsRevision;
      await ctx.mcpReq.notify({ method: 'notifications/tools/list_changed' }).catch(() => undefined);
    }
    if (scope.era === 'modern' && scope.agentSessionId === undefined) {
      const offered = await host.toolNames({ mode: scope.listMode });
      if (!offered.includes(name)) return unknownOrOutside(host, name, offered, `mode "${scope.listMode}"`);
      // The mode change tool works on an agent session: the first one without a handle starts one in this endpoint's mode.
      if (name === MODE_CHANGE_TOOL) {
        scope.agentSessionId = (await host.createSession({ mode: scope.listMode })).id;
        await scope.onAgentSession?.(scope.agentSessionId);
      }
    }
    const call: ModernCall = { name, args: args ?? {}, actor: scope.actor, agentSessionId: scope.agentSessionId, log: scope.log };
    // 2026-07-28: a retry carrying requestState continues a question to the user (an approval).
    const rawState = scope.era === 'modern' ? ctx.mcpReq.requestState<unknown>() : undefined;
    const state = typeof rawState === 'string' ? await openState(host, rawState, ctx) : undefined;
    if (isApprovalState(state)) return resumeModern(host, state, rawState as string, call, ctx);
    if (state !== undefined && !isToolState(state)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid requestState: ${name} did not ask for input. Call it again without requestState.`, { reason: 'invalid_request_state' });
    // The tool may ask the user (InvokeResult.inputRequired). 2026-07-28: a retry brings the answers and its state.
    // 2025 revisions, to a client that declared form elicitation: the host asks and calls the tool again (askLegacyRounds).
    const legacyAsks = scope.era === 'legacy' && server !== undefined && canElicitForm(scope.clientCapabilities ?? server.getClientCapabilities());
    const input = scope.era === 'modern' ? inputChannel(ctx, state, call) : legacyAsks ? LEGACY_FIRST_INPUT : undefined;
    // 2026-07-28: a tool that declares TaskSupport runs as a task for a client that declared the extension.
    // 2025-11-25: a client asks for a task with the request's `task` parameter (experimental tasks).
    // A tool that asks before its task (TaskInput 'before') asks on tools/call; the round bringing its answers becomes the task.
    const entry = host.cradle.registry.get(name);
    const taskSupport = entry?.taskSupport ?? 'forbidden';
    const asksFirst = scope.era === 'modern' && entry?.taskInput === 'before' && declaresTasks(ctx);
    const legacyTask = scope.era === 'legacy' && typeof (request.params as { task?: unknown }).task === 'object' && (request.params as { task?: unknown }).task !== null;
    if (taskSupport !== 'forbidden' && (asksFirst ? isToolState(state) : state === undefined && (scope.era === 'modern' ? declaresTasks(ctx) : legacyTask))) {
      const base = { ...(scope.agentSessionId === undefined ? {} : { sessionId: scope.agentSessionId }), ...(scope.log === undefined ? {} : { logger: scope.log }), ...(scope.actor === undefined ? {} : { actor: scope.actor }) };
      const step = async (signal: AbortSignal, taskInput: NonNullable<typeof input>) => {
        // 2025 tasks cannot carry questions: a tool that asks fails with INPUT_REQUIRED there.
        const outcome = await host.call(name, args ?? {}, { ...base, signal, ...(scope.era === 'modern' ? { input: taskInput } : {}) });
        // A task's questions park it (input_required) until tasks/update brings the answers.
        if (outcome.kind === 'result' && !outcome.result.successful && outcome.result.inputRequired !== undefined) return { needs: outcome.result.inputRequired };
        // The host ended the call without the tool's answer (its time-out, a worker out of memory): the task fails.
        if (outcome.kind === 'result') throwIfHostFailure(outcome.result);
        return { done: await finish(outcome, false), ...(outcome.kind === 'result' ? howItStopped(outcome.result) : {}) };
      };
      return (scope.era === 'modern' ? await startTask(host, scope.actor, name, step, asksFirst ? input : undefined) : await startLegacyTask(host, scope.actor, name, step)) as unknown as CallToolResult;
    }
    if (taskSupport === 'required' && state === undefined && !asksFirst) {
      if (scope.era === 'modern') throw missingTasksCapability(`${name} runs only as a task, so calling it`);
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `${name} runs only as a task: call it with the "task" parameter (experimental tasks of 2025-11-25).`);
    }
    const progress = progressReporter(request.params._meta?.progressToken, ctx);
    // 2025 sessions: the level set with logging/setLevel, else info; 2026-07-28: only the request's own level.
    const threshold = scope.era === 'legacy' ? (scope.logLevel ?? 'info') : ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined);
    const logs = threshold === undefined ? undefined : logForwarder(name, threshold, ctx);
    const signal = scope.cancel ? AbortSignal.any([ctx.mcpReq.signal, scope.cancel]) : undefined;
    const run = (channel: typeof input) =>
      host.call(name, args ?? {}, {
        ...(scope.agentSessionId === undefined ? {} : { sessionId: scope.agentSessionId }),
        // Made only if the call asks (the fast lane's signal is made on demand; see lazy-abort.ts).
        signal: signal ?? (() => ctx.mcpReq.signal),
        ...(progress ? { onProgress: progress.report } : {}),
        ...(logs ? { onLog: logs.log } : {}),
        ...(scope.log === undefined ? {} : { logger: scope.log }),
        ...(scope.actor === undefined ? {} : { actor: scope.actor }),
        ...(channel === undefined ? {} : { input: channel }),
      });
    let outcome: Awaited<ReturnType<AptixHost['call']>>;
    try {
      outcome = await run(input);
      if (legacyAsks && server !== undefined) {
        const questions = scope.questions;
        const rounds = await askLegacyRounds(
          outcome,
          (current) => (current.kind === 'result' && !current.result.successful ? current.result.inputRequired : undefined),
          run,
          { signal: signal ?? ctx.mcpReq.signal, hold: () => questions?.hold(server) ?? true, release: () => questions?.release(server) },
          ctx,
        );
        if (rounds.kind === 'stopped') return rounds.result;
        outcome = rounds.outcome;
      }
    } finally {
      progress?.end();
      logs?.end();
    }
    return finish(outcome, true);

    /** The call's outcome as a tool result; `interactive` when the client is there to be asked (not a task running on). */
    async function finish(outcome: Awaited<ReturnType<AptixHost['call']>>, interactive: boolean): Promise<CallToolResult> {
    if (outcome.kind === 'not_found') {
      const offered = await host.toolNames(listScope());
      return unknownOrOutside(host, name, offered, scope.agentSessionId === undefined ? `mode "${scope.listMode}"` : `the mode of agent session ${scope.agentSessionId}`);
    }
    // A client that can ask its user is asked (input_required, or elicitation on 2025 revisions); any other learns that the call waits, and where it is decided.
    if (outcome.kind === 'pending_approval') {
      if (!interactive) return pendingResult(outcome.approval);
      if (scope.era === 'modern') return (await askModern(host, outcome.approval, call, ctx)) ?? pendingResult(outcome.approval);
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
    if (!result.successful && result.inputRequired !== undefined && interactive && scope.era === 'modern') return askForInput(host, result.inputRequired, call);
    if (!result.successful) return errorText(InvokeResult.errorMessage(result));
    if (name === MODE_CHANGE_TOOL) {
      const guidance = await afterModeChange(scope, result.result, ctx);
      if (guidance !== undefined) return { content: [{ type: 'text', text: result.result }, { type: 'text', text: guidance }] };
    }
    return callToolResult(result, host.declaresOutputSchema(name));
    }
  }
}

/** The answer for a tool the scope does not offer: unknown tools are a protocol error (-32602), as the specification says. */
async function unknownOrOutside(host: AptixHost, name: string, offered: readonly string[], where: string): Promise<CallToolResult> {
  const exists = (await host.toolNames({})).includes(name);
  if (!exists) {
    // A tool a package withdrew while the host runs (a bridged MCP server removed it) says so.
    const withdrawn = host.withdrawnTool(name);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: "${name}".${withdrawn === undefined ? '' : ` ${withdrawn}`} Tools in ${where}: ${offered.join(', ')}.`);
  }
  return errorText(`Tool "${name}" is not offered in ${where}. Tools in this mode: ${offered.join(', ')}. To use it, switch to a mode that offers it with agent_change_mode.`);
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
  if (scope.era === 'legacy') {
    await ctx.mcpReq.notify({ method: 'notifications/tools/list_changed' });
    return undefined;
  }
  return `Agent session ${String(sessionId)} is now in mode "${String(mode)}". Its tools are listed at /mcp/modes/${String(mode)} (over stdio: aptix mcp --session ${String(sessionId)}); send the header "X-Aptix-Session-Id: ${String(sessionId)}" with each request so calls run in this session.`;
}

/**
 * A tool that lists an output schema promises structuredContent in every result that is not an error,
 * and SDK clients check that promise. An answer without it (the call waits for approval, or for the
 * user) is sent as an error result: the call has not produced its result, and the text says why.
 */
function keepsOutputSchema(host: AptixHost, name: string, result: CallToolResult): CallToolResult {
  if (result.isError === true || result.structuredContent !== undefined || 'task' in result || !Array.isArray(result.content)) return result;
  if ((result as { resultType?: unknown }).resultType === 'input_required') return result;
  return host.cradle.registry.get(name)?.outputSchema === undefined ? result : { ...result, isError: true };
}

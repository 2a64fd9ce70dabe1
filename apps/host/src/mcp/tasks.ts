import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
  type StandardSchemaV1,
} from '@modelcontextprotocol/server';
import { ExecutionErrorCode, InvokeResult, reportsCancellation, type ToolInputChannel } from '@aptix/tool-contract';
import type { AptixHost } from '../aptix-host.js';
import { Permissions } from '../permissions.js';
import { legacyTaskView, taskView } from './task-records.js';
import { McpTasks, type TaskStep } from './task-runner.js';
import { cancelLegacy, getLegacy, listLegacy, resultLegacy } from './legacy-tasks.js';

export type { TaskStep } from './task-runner.js';

/**
 * Long calls as MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663, protocol
 * 2026-07-28; and 2025-11-25's experimental tasks). A call to a tool that declares `TaskSupport`, from a
 * client that declared the extension, answers at once with a task; the call runs on, and `tasks/get`
 * reports it, with the tool's result inlined once it completed. `tasks/cancel` aborts it.
 *
 * The records live in the session store (task-runner.ts), so every host sharing it answers for them.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/**
 * Codes of a failed call that the host, not the tool, produced: it ended the call without the tool's
 * answer (its time-out, a worker out of memory or replaced, a tool it cannot reach or that is shutting
 * down). Such a task is `failed`, with a JSON-RPC error; whatever the tool answered itself, its own
 * errors included, completes the task (`isError`).
 */
const HOST_FAILURES: ReadonlySet<string> = new Set([
  ExecutionErrorCode.TIMEOUT,
  ExecutionErrorCode.RESOURCE_LIMIT,
  ExecutionErrorCode.TOOL_UNAVAILABLE,
]);

/** Throws the JSON-RPC error (-32603, `data.code` the Aptix code) of a call the host ended without the tool's answer. */
export function throwIfHostFailure(result: InvokeResult<string>): void {
  if (result.successful) return;
  const code = result.errors.find((error) => HOST_FAILURES.has(error.code ?? ''))?.code;
  if (code !== undefined)
    throw new ProtocolError(ProtocolErrorCode.InternalError, InvokeResult.errorMessage(result), { code });
}

/** How a call that was asked to stop ended: before it had any effect (`cancelled`), or without confirming it stopped (`unknown`). */
export function howItStopped(result: InvokeResult<string>): { stopped?: 'cancelled' | 'unknown' } {
  if (result.successful) return reportsCancellation(result.result) ? { stopped: 'cancelled' } : {};
  return result.errors.some((error) => error.code === ExecutionErrorCode.OUTCOME_UNKNOWN) ? { stopped: 'unknown' } : {};
}

/** Whether the request's client declared the tasks extension. */
export function declaresTasks(ctx: ServerContext): boolean {
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown> } | undefined;
  const extension = capabilities?.extensions?.[TASKS_EXTENSION];
  return typeof extension === 'object' && extension !== null;
}

export function missingTasksCapability(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as never,
    `${what} needs the ${TASKS_EXTENSION} extension: declare it in the request's clientCapabilities.extensions.`,
  );
}

/** What a 2025 server declares for experimental tasks: tool calls may be tasks, listed and cancelled. */
export const LEGACY_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

const hosts = new WeakMap<AptixHost, McpTasks>();
/** The host's tasks, made on first use; they stop (recorded as such) when the host closes. */
export function tasksOf(host: AptixHost): McpTasks {
  let tasks = hosts.get(host);
  if (tasks === undefined) {
    const { sessionManager, config, pino } = host.cradle;
    const made = new McpTasks({
      store: sessionManager.tasks,
      staleMs: config.mcp.taskStaleMs,
      cancelGraceMs: config.toolCancelGraceMs,
      // A task follows its session's owner (task-runner.ts); besides the owner, a principal configured
      // with `sessions: "all"` sees it. A key without an entry sees its own tasks, as before principals.
      maySee: (_owner, actor) => {
        if (actor === undefined) return false;
        const permissions = host.permissions.of(actor);
        return permissions !== Permissions.ALL && permissions.allSessions;
      },
      logger: pino,
    });
    hosts.set(host, (tasks = made));
    host.beforeClose(() => made.close());
  }
  return tasks;
}

/** Any params object: the handlers read `taskId` themselves. */
const Params: StandardSchemaV1<Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'aptix',
    validate: (value) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? { value: value as Record<string, unknown> }
        : { issues: [{ message: 'params must be an object' }] },
  },
};

/** `tasks/get`, `tasks/update` and `tasks/cancel` on a 2026-07-28 server, gated on the client's declaration. */
export function registerTaskMethods(server: Server, host: AptixHost, actor: string | undefined): void {
  const tasks = tasksOf(host);
  const gated = (
    method: string,
    handle: (params: Record<string, unknown>, ctx: ServerContext) => Promise<Record<string, unknown>>,
  ) =>
    server.setRequestHandler(
      method,
      { params: Params },
      async (params: Record<string, unknown>, ctx: ServerContext) => {
        if (!declaresTasks(ctx)) throw missingTasksCapability(method);
        return (await handle(params, ctx)) as never;
      },
    );
  gated('tasks/get', (params) => tasks.get(params.taskId, actor));
  gated('tasks/cancel', async (params) => (await tasks.cancel(params.taskId, actor), {}));
  // The SDK lifts `inputResponses` out of the params (as for a retried tools/call).
  gated('tasks/update', (params, ctx) =>
    tasks.update(params.taskId, actor, ctx.mcpReq.inputResponses ?? params.inputResponses),
  );
}

/** `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` on a 2025-era server (experimental tasks of 2025-11-25). */
export function registerLegacyTaskMethods(server: Server, host: AptixHost, actor: string | undefined): void {
  const tasks = tasksOf(host);
  const on = (method: string, handle: (params: Record<string, unknown>, ctx: ServerContext) => Promise<unknown>) =>
    server.setRequestHandler(
      method,
      { params: Params },
      async (params: Record<string, unknown>, ctx: ServerContext) => (await handle(params, ctx)) as never,
    );
  on('tasks/get', (params) => getLegacy(tasks, params.taskId, actor));
  on('tasks/result', (params, ctx) => resultLegacy(tasks, params.taskId, actor, ctx.mcpReq.signal));
  on('tasks/list', () => listLegacy(tasks, actor));
  on('tasks/cancel', (params) => cancelLegacy(tasks, params.taskId, actor));
}

/** A 2026-07-28 CreateTaskResult: the task, created and durable. */
export async function startTask(
  host: AptixHost,
  actor: string | undefined,
  agentSessionId: string | undefined,
  toolName: string,
  step: TaskStep,
  firstInput?: ToolInputChannel,
): Promise<Record<string, unknown>> {
  const owner = await taskOwner(host, actor, agentSessionId);
  return { resultType: 'task', ...taskView(await tasksOf(host).start(owner, toolName, step, firstInput)) };
}

/**
 * Who a task belongs to: the owner of the agent session its call runs in (a principal with
 * `sessions: "all"` calling in another's session makes a task of that session's owner, which it may
 * still see), else the caller. A session owned by no one leaves the task to the caller.
 */
async function taskOwner(
  host: AptixHost,
  actor: string | undefined,
  agentSessionId: string | undefined,
): Promise<string | undefined> {
  if (actor === undefined || agentSessionId === undefined) return actor;
  // A store that cannot answer leaves the task to the caller (never to someone wider); creating it then fails on the same store.
  const head = await host.cradle.sessionManager.getSessionHead(agentSessionId).catch(() => undefined);
  return head?.owner ?? actor;
}

/** 2025-11-25 (experimental tasks): the same task, in that revision's CreateTaskResult. */
export async function startLegacyTask(
  host: AptixHost,
  actor: string | undefined,
  agentSessionId: string | undefined,
  toolName: string,
  step: TaskStep,
): Promise<Record<string, unknown>> {
  const owner = await taskOwner(host, actor, agentSessionId);
  // The SDK's 2025 tools/call encoder requires `content` beside `task`; an empty list says the result is not here yet.
  return { task: legacyTaskView(await tasksOf(host).start(owner, toolName, step)), content: [] };
}

/** A 2025-11-25 listing entry, with `execution.taskSupport` when the tool may run as a task. */
export function withTaskSupport(
  tool: { name: string },
  taskSupport: 'forbidden' | 'optional' | 'required' | undefined,
): object {
  return taskSupport === undefined || taskSupport === 'forbidden' ? tool : { ...tool, execution: { taskSupport } };
}

import { randomUUID } from 'node:crypto';
import { CLIENT_CAPABILITIES_META_KEY, MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, type CallToolResult, type Server, type ServerContext, type StandardSchemaV1 } from '@modelcontextprotocol/server';
import { ExecutionErrorCode, InvokeResult, type ToolInputChannel, type ToolInputNeeded } from '@aptix/tool-contract';
import type { AptixHost } from '../aptix-host.js';

/**
 * Long calls as MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663, protocol
 * 2026-07-28). A call to a tool that declares `TaskSupport`, from a client that declared the extension,
 * answers at once with a task; the call runs on, and `tasks/get` reports it, with the tool's result
 * inlined once it completed. `tasks/cancel` aborts it.
 *
 * Task records live in the memory of the host that created them: `tasks/get` on another host, or after
 * a restart, answers that the task is unknown here and why, never a made-up status.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** How long a finished task stays readable. */
const TTL_MS = 15 * 60_000;
/** The poll interval a client is advised to keep. */
const POLL_INTERVAL_MS = 500;
/** At most this many task records per host; the oldest finished ones go first. */
const MAX_TASKS = 10_000;

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
/** Questions rounds a task may go through before it is failed. */
const MAX_ROUNDS = 16;

/** One step of a task: the call's result, or the questions it needs answered to go on. */
export type TaskStep = (signal: AbortSignal, input: ToolInputChannel) => Promise<{ readonly done: CallToolResult } | { readonly needs: ToolInputNeeded }>;

interface TaskRecord {
  readonly taskId: string;
  /** Who may read and cancel it: the API key that created it. */
  readonly owner: string | null;
  status: TaskStatus;
  readonly createdAt: string;
  lastUpdatedAt: string;
  statusMessage?: string;
  result?: CallToolResult;
  error?: { code: number; message: string; data?: unknown };
  /** While `input_required`: the questions not answered yet, and the answers so far. */
  inputRequests?: Record<string, unknown>;
  answers: Record<string, unknown>;
  answered?: () => void;
  /** Resolves once the task is completed, failed or cancelled. */
  readonly settled: Promise<void>;
  readonly abort: AbortController;
  readonly expiresAt: number;
}

/**
 * Codes of a failed call that the host, not the tool, produced: it ended the call without the tool's
 * answer (its time-out, a worker out of memory or replaced, a tool it cannot reach or that is shutting
 * down). Such a task is `failed`, with a JSON-RPC error; whatever the tool answered itself, its own
 * errors included, completes the task (`isError`).
 */
const HOST_FAILURES: ReadonlySet<string> = new Set([ExecutionErrorCode.TIMEOUT, ExecutionErrorCode.RESOURCE_LIMIT, ExecutionErrorCode.TOOL_UNAVAILABLE]);

/** Throws the JSON-RPC error (-32603, `data.code` the Aptix code) of a call the host ended without the tool's answer. */
export function throwIfHostFailure(result: InvokeResult<string>): void {
  if (result.successful) return;
  const code = result.errors.find((error) => HOST_FAILURES.has(error.code ?? ''))?.code;
  if (code !== undefined) throw new ProtocolError(ProtocolErrorCode.InternalError, InvokeResult.errorMessage(result), { code });
}

/** Whether the request's client declared the tasks extension. */
export function declaresTasks(ctx: ServerContext): boolean {
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  const extension = capabilities?.extensions?.[TASKS_EXTENSION];
  return typeof extension === 'object' && extension !== null;
}

export function missingTasksCapability(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as never, `${what} needs the ${TASKS_EXTENSION} extension: declare it in the request's clientCapabilities.extensions.`);
}

/** A task as the wire shows it: the flat Task fields (SEP-2663), without `requestState`. */
function view(task: TaskRecord): Record<string, unknown> {
  return { taskId: task.taskId, status: task.status, createdAt: task.createdAt, lastUpdatedAt: task.lastUpdatedAt, ttlMs: TTL_MS, pollIntervalMs: POLL_INTERVAL_MS, ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }) };
}

/** A task as 2025-11-25's experimental tasks show it (`ttl`, `pollInterval`). */
function legacyView(task: TaskRecord): Record<string, unknown> {
  return { taskId: task.taskId, status: task.status, createdAt: task.createdAt, lastUpdatedAt: task.lastUpdatedAt, ttl: TTL_MS, pollInterval: POLL_INTERVAL_MS, ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }) };
}

/** What a 2025 server declares for experimental tasks: tool calls may be tasks, listed and cancelled. */
export const LEGACY_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** One host's tasks. */
export class McpTasks {
  readonly #tasks = new Map<string, TaskRecord>();

  /** Starts `run` as a task and answers the CreateTaskResult once the record exists (a `tasks/get` right after finds it). */
  start(owner: string | undefined, step: TaskStep, firstInput?: ToolInputChannel): Record<string, unknown> {
    return { resultType: 'task', ...view(this.#create(owner, step, firstInput)) };
  }

  /** 2025-11-25 (experimental tasks): the same task, in that revision's CreateTaskResult. */
  startLegacy(owner: string | undefined, step: TaskStep): Record<string, unknown> {
    // The SDK's 2025 tools/call encoder requires `content` beside `task`; an empty list says the result is not here yet.
    return { task: legacyView(this.#create(owner, step)), content: [] };
  }

  /** `firstInput`: the answers a tool that asks first (TaskInput 'before') gathered on tools/call. */
  #create(owner: string | undefined, step: TaskStep, firstInput?: ToolInputChannel): TaskRecord {
    this.#sweep();
    const now = new Date().toISOString();
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const task: TaskRecord = { taskId: randomUUID(), owner: owner ?? null, status: 'working', createdAt: now, lastUpdatedAt: now, answers: {}, settled, abort: new AbortController(), expiresAt: Date.now() + TTL_MS };
    this.#tasks.set(task.taskId, task);
    void this.#drive(task, step, firstInput)
      .then(
      (result) => this.#settle(task, task.abort.signal.aborted ? { status: 'cancelled', statusMessage: 'Cancelled by the client.' } : { status: 'completed', result }),
      (error: unknown) =>
        this.#settle(task, task.abort.signal.aborted ? { status: 'cancelled', statusMessage: 'Cancelled by the client.' } : { status: 'failed', error: error instanceof ProtocolError ? { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } : { code: ProtocolErrorCode.InternalError, message: 'The host failed while running this task. See the host logs.' } }),
      )
      .finally(settle);
    return task;
  }

  /** Runs the steps: a step that needs answers parks the task (`input_required`) until `tasks/update` brings them all. */
  async #drive(task: TaskRecord, step: TaskStep, firstInput?: ToolInputChannel): Promise<CallToolResult> {
    let input: ToolInputChannel = firstInput === undefined ? { canAsk: true, responses: {} } : { ...firstInput, canAsk: true };
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const outcome = await step(task.abort.signal, input);
      if ('done' in outcome) return outcome.done;
      if (task.abort.signal.aborted) throw new Error('cancelled');
      task.answers = {};
      const answered = new Promise<void>((resolve, reject) => {
        task.answered = resolve;
        task.abort.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
      });
      Object.assign(task, { status: 'input_required', inputRequests: { ...outcome.needs.inputRequests }, lastUpdatedAt: new Date().toISOString() });
      await answered;
      Object.assign(task, { status: 'working', lastUpdatedAt: new Date().toISOString() });
      delete task.inputRequests;
      input = { canAsk: true, responses: task.answers, ...(outcome.needs.state === undefined ? {} : { state: outcome.needs.state }) };
    }
    throw new ProtocolError(ProtocolErrorCode.InternalError, `The task asked for input ${MAX_ROUNDS} times without finishing, so it was stopped.`);
  }

  #settle(task: TaskRecord, outcome: Partial<Pick<TaskRecord, 'status' | 'result' | 'error' | 'statusMessage'>>): void {
    if (task.status !== 'working' && task.status !== 'input_required') return;
    delete task.inputRequests;
    Object.assign(task, outcome, { lastUpdatedAt: new Date().toISOString() });
  }

  #find(taskId: unknown, owner: string | undefined): TaskRecord {
    const task = typeof taskId === 'string' ? this.#tasks.get(taskId) : undefined;
    if (task === undefined || task.expiresAt < Date.now() || task.owner !== (owner ?? null)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown task ${JSON.stringify(taskId)} on this host: tasks live in the memory of the host that created them, until ${TTL_MS / 60_000} minutes after they finish. It may have expired, been created by another API key, or by another host, or before this host restarted (its outcome is then unknown).`,
      );
    }
    return task;
  }

  /** 2025-11-25: the task, `tasks/result` (waits until it is terminal), and the caller's tasks. */
  getLegacy(taskId: unknown, owner: string | undefined): Record<string, unknown> {
    return legacyView(this.#find(taskId, owner));
  }

  async resultLegacy(taskId: unknown, owner: string | undefined): Promise<CallToolResult> {
    const task = this.#find(taskId, owner);
    await task.settled;
    if (task.status === 'completed' && task.result) return { ...task.result, _meta: { ...task.result._meta, 'io.modelcontextprotocol/related-task': { taskId: task.taskId } } };
    if (task.status === 'failed' && task.error) throw new ProtocolError(task.error.code, task.error.message);
    throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Task ${task.taskId} was cancelled, so it has no result.`);
  }

  listLegacy(owner: string | undefined): Record<string, unknown> {
    return { tasks: [...this.#tasks.values()].filter((task) => task.owner === (owner ?? null) && task.expiresAt >= Date.now()).map(legacyView) };
  }

  cancelLegacy(taskId: unknown, owner: string | undefined): Record<string, unknown> {
    const task = this.#find(taskId, owner);
    if (task.status !== 'working' && task.status !== 'input_required') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${task.taskId} is already ${task.status}; it cannot be cancelled.`);
    this.cancel(taskId, owner);
    return legacyView(task);
  }

  /** The DetailedTask: the result inlined once completed, the error once failed. */
  get(taskId: unknown, owner: string | undefined): Record<string, unknown> {
    const task = this.#find(taskId, owner);
    return { ...view(task), ...(task.status === 'input_required' && task.inputRequests ? { inputRequests: task.inputRequests } : {}), ...(task.status === 'completed' && task.result ? { result: task.result } : {}), ...(task.status === 'failed' && task.error ? { error: task.error } : {}) };
  }

  /** Aborts a working task; a finished one is left as it is. Either way an empty ack. */
  cancel(taskId: unknown, owner: string | undefined): Record<string, never> {
    const task = this.#find(taskId, owner);
    if (task.status === 'working' || task.status === 'input_required') {
      task.abort.abort();
      this.#settle(task, { status: 'cancelled', statusMessage: 'Cancelled by the client.' });
    }
    return {};
  }

  /**
   * Answers to a parked task's questions: each answer for a pending key is kept and the key is no longer
   * pending; other keys are ignored. Once none is pending, the task goes on with all the answers.
   */
  update(taskId: unknown, owner: string | undefined, inputResponses: unknown): Record<string, never> {
    const task = this.#find(taskId, owner);
    if (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'tasks/update needs inputResponses: an object of answers keyed like the task\'s inputRequests.');
    if (task.status !== 'input_required' || task.inputRequests === undefined) return {};
    for (const [key, answer] of Object.entries(inputResponses)) {
      if (!(key in task.inputRequests)) continue;
      task.answers[key] = answer;
      delete task.inputRequests[key];
    }
    task.lastUpdatedAt = new Date().toISOString();
    if (Object.keys(task.inputRequests).length === 0) task.answered?.();
    return {};
  }

  /** Forgets expired tasks, and the oldest finished ones over the cap. */
  #sweep(): void {
    const now = Date.now();
    const open = (task: TaskRecord) => task.status === 'working' || task.status === 'input_required';
    for (const task of this.#tasks.values()) if (task.expiresAt < now && !open(task)) this.#tasks.delete(task.taskId);
    if (this.#tasks.size < MAX_TASKS) return;
    for (const task of this.#tasks.values()) {
      if (this.#tasks.size < MAX_TASKS) break;
      if (!open(task)) this.#tasks.delete(task.taskId);
    }
    if (this.#tasks.size >= MAX_TASKS) throw new ProtocolError(ProtocolErrorCode.InternalError, `This host already runs ${MAX_TASKS} tasks, its limit. Retry when some have finished.`);
  }
}

const hosts = new WeakMap<AptixHost, McpTasks>();
export function tasksOf(host: AptixHost): McpTasks {
  let tasks = hosts.get(host);
  if (tasks === undefined) hosts.set(host, (tasks = new McpTasks()));
  return tasks;
}

/** Any params object: the handlers read `taskId` themselves. */
const Params: StandardSchemaV1<Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'aptix',
    validate: (value) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? { value: value as Record<string, unknown> } : { issues: [{ message: 'params must be an object' }] }),
  },
};

/** `tasks/get`, `tasks/update` and `tasks/cancel` on a 2026-07-28 server, gated on the client's declaration. */
export function registerTaskMethods(server: Server, host: AptixHost, actor: string | undefined): void {
  const tasks = tasksOf(host);
  const gated = (method: string, handle: (params: Record<string, unknown>, ctx: ServerContext) => Record<string, unknown>) =>
    server.setRequestHandler(method, { params: Params }, (params: Record<string, unknown>, ctx: ServerContext) => {
      if (!declaresTasks(ctx)) throw missingTasksCapability(method);
      return handle(params, ctx) as never;
    });
  gated('tasks/get', (params) => tasks.get(params.taskId, actor));
  gated('tasks/cancel', (params) => tasks.cancel(params.taskId, actor));
  // The SDK lifts `inputResponses` out of the params (as for a retried tools/call).
  gated('tasks/update', (params, ctx) => tasks.update(params.taskId, actor, ctx.mcpReq.inputResponses ?? params.inputResponses));
}


/** `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` on a 2025-era server (experimental tasks of 2025-11-25). */
export function registerLegacyTaskMethods(server: Server, host: AptixHost, actor: string | undefined): void {
  const tasks = tasksOf(host);
  const on = (method: string, handle: (params: Record<string, unknown>) => unknown) => server.setRequestHandler(method, { params: Params }, (params: Record<string, unknown>) => handle(params) as never);
  on('tasks/get', (params) => tasks.getLegacy(params.taskId, actor));
  on('tasks/result', (params) => tasks.resultLegacy(params.taskId, actor));
  on('tasks/list', () => tasks.listLegacy(actor));
  on('tasks/cancel', (params) => tasks.cancelLegacy(params.taskId, actor));
}

/** A 2025-11-25 listing entry, with `execution.taskSupport` when the tool may run as a task. */
export function withTaskSupport(tool: { name: string }, taskSupport: 'forbidden' | 'optional' | 'required' | undefined): object {
  return taskSupport === undefined || taskSupport === 'forbidden' ? tool : { ...tool, execution: { taskSupport } };
}

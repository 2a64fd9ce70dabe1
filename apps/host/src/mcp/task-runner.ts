import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import {
  OPEN_TASK_STATUSES,
  SessionStoreError,
  type McpTaskChange,
  type McpTaskRecord,
  type McpTaskStore,
} from '@aptix/agent-sessions';
import {
  CANCEL_REQUESTED,
  hostStopped,
  internal,
  storeFailure,
  taskEnd,
  TASK_TTL_MS,
  taskView,
  type Ended,
  type Stop,
} from './task-records.js';
import type { ToolInputChannel, ToolInputNeeded } from '@aptix/tool-contract';

/**
 * The tasks of one host. Records live in the session store, so any host sharing it answers
 * `tasks/get`, `tasks/update` and `tasks/cancel`, and a restart loses none; the call itself runs in
 * the memory of the host that created the task. While it runs, that host marks its tasks alive every
 * second and picks up what other hosts wrote (a cancel request, the answers to its questions). A task
 * whose host stopped marking it alive for `staleMs` is reported `failed`, its outcome unknown.
 *
 * Only the host running a call writes how it ended, and a finished task never changes: a cancel that
 * reaches another host is recorded as a request, which the running host takes on its next tick.
 */

/** At most this many tasks run on one host at once. */
const MAX_RUNNING = 10_000;
/** Question rounds a task may go through before it is failed. */
const MAX_ROUNDS = 16;
/** How often finished tasks past their expiry are deleted (on a task's creation, at most this often). */
const SWEEP_EVERY_MS = 60_000;
const OPEN: readonly string[] = OPEN_TASK_STATUSES;
/** How often a host waiting for another host to record a cancelled task's end reads the record. */
const CANCEL_POLL_MS = 100;

/**
 * One step of a task: the call's result, or the questions it needs answered to go on. `stopped` says
 * how a call that was asked to stop ended: it stopped before it had any effect (`cancelled`), or did
 * not confirm it stopped (`unknown`); absent, the tool answered (it finished, or failed, on its own).
 */
export type TaskStep = (
  signal: AbortSignal,
  input: ToolInputChannel,
) => Promise<
  { readonly done: CallToolResult; readonly stopped?: 'cancelled' | 'unknown' } | { readonly needs: ToolInputNeeded }
>;

interface Running {
  readonly abort: AbortController;
  /**
   * Why the call was asked to stop: the client cancelled (here, or through another host, which recorded
   * the request), this host is shutting down, or another host ended the task (`taken`: it took the task
   * for stopped, its heartbeat stale).
   */
  stop?: Stop;
  /** While parked for answers: the record's version when it parked, and the hand-off of the answers. */
  parkedVersion?: number;
  resume?: (responses: Record<string, unknown>) => void;
  settled?: Promise<void>;
}

export interface TaskRunnerOptions {
  readonly store: McpTaskStore;
  /** See `mcp.taskStaleMs`. */
  readonly staleMs: number;
  /** How long the executor waits for a stopped tool to confirm (see `toolCancelGraceMs`): bounds a cancel's wait for another host. */
  readonly cancelGraceMs: number;
  /**
   * Whether `actor` may read, answer and cancel a task owned by `owner` besides the owner itself: a
   * task follows its session's owner, so a principal that may see every session (`sessions: "all"`)
   * sees its tasks too. Without it, only the owner.
   */
  readonly maySee?: (owner: string | null, actor: string | undefined) => boolean;
  readonly logger: {
    info(fields: object, message: string): void;
    warn(fields: object, message: string): void;
    error(fields: object, message: string): void;
  };
}

export class McpTasks {
  readonly #o: TaskRunnerOptions;
  readonly #running = new Map<string, Running>();
  #ticker: ReturnType<typeof setInterval> | undefined;
  #lastSweep = 0;
  #closed = false;

  constructor(options: TaskRunnerOptions) {
    this.#o = options;
  }

  /**
   * Creates the task (durably: a `tasks/get` on any host finds it once this resolves) and starts its call.
   * `owner`: who may read, answer and cancel it: the owner of the agent session the call runs in, else the caller.
   */
  async start(
    owner: string | undefined,
    toolName: string,
    step: TaskStep,
    firstInput?: ToolInputChannel,
  ): Promise<McpTaskRecord> {
    if (this.#closed)
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        'This host is shutting down, so it starts no task. Call again (another host behind the same URL can take it).',
      );
    if (this.#running.size >= MAX_RUNNING)
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `This host already runs ${MAX_RUNNING} tasks, its limit. Retry when some have finished.`,
      );
    this.#sweep();
    const record = await this.#o.store
      .create({ owner: owner ?? null, toolName, ttlMs: TASK_TTL_MS })
      .catch(storeFailure('create the task, so the call did not run'));
    const running: Running = { abort: new AbortController() };
    this.#running.set(record.id, running);
    running.settled = this.#run(record, running, step, firstInput).finally(() => {
      this.#running.delete(record.id);
      if (this.#running.size === 0) this.#stopTicking();
    });
    this.#startTicking();
    return record;
  }

  async #run(
    record: McpTaskRecord,
    running: Running,
    step: TaskStep,
    firstInput: ToolInputChannel | undefined,
  ): Promise<void> {
    let ended: Ended | undefined;
    let outcome: McpTaskChange | undefined;
    try {
      ended = await this.#drive(record.id, running, step, firstInput);
    } catch (error) {
      if (running.stop === undefined) {
        outcome = {
          status: 'failed',
          error:
            error instanceof ProtocolError
              ? { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) }
              : internal('The host failed while running this task. See the host logs.', 'INTERNAL'),
        };
        if (!(error instanceof ProtocolError))
          this.#o.logger.error(
            { taskId: record.id, err: error },
            `task ${record.id}: the host failed while running it`,
          );
      }
    }
    if (running.stop === 'taken') return;
    outcome ??= taskEnd(running.stop, ended, record.toolName);
    await this.#finish(record, outcome);
  }

  /**
   * Writes the end of the task, once: only from an open status, so an end another host recorded (a
   * stale heartbeat taken for a stopped host) stays. A result too large to keep fails the task, saying the tool ran.
   */
  async #finish(record: McpTaskRecord, outcome: McpTaskChange): Promise<void> {
    // The status message of an open task (a cancel request) gives way to the end's own, or to none.
    const end = (change: McpTaskChange) =>
      this.#o.store.change(
        record.id,
        { statusMessage: null, ...change, inputRequests: null, keepForMs: TASK_TTL_MS },
        { from: OPEN_TASK_STATUSES },
      );
    try {
      await end(outcome);
    } catch (error) {
      if (
        error instanceof SessionStoreError &&
        outcome.status === 'completed' &&
        (error.code === 'VALUE_TOO_LONG' || error.code === 'INVALID_ARGUMENT')
      ) {
        const message =
          `${record.toolName} finished, but its result cannot be kept for this task: ` +
          `${error.message} The tool ran; its result is lost. Call it directly (not as a task), or ask for less.`;
        await end({ status: 'failed', error: internal(message, 'RESULT_TOO_LARGE') }).catch((again: unknown) =>
          this.#lost(record, again),
        );
        return;
      }
      this.#lost(record, error);
    }
  }

  /** The end could not be written: the record stays open, and once its heartbeat is stale it reads failed, outcome unknown. */
  #lost(record: McpTaskRecord, error: unknown): void {
    this.#o.logger.error(
      { taskId: record.id, err: error },
      `task ${record.id}: its end could not be written to the store; it will read failed (outcome unknown) once its heartbeat is stale`,
    );
  }

  /** Runs the steps: a step that needs answers parks the task (`input_required`) until every question is answered, on any host. */
  async #drive(id: string, running: Running, step: TaskStep, firstInput: ToolInputChannel | undefined): Promise<Ended> {
    // A task's client answers in tasks/update whatever the task asks, as it declared on the call that started it.
    const answers = {
      canAsk: true,
      canSample: firstInput?.canSample === true,
      canListRoots: firstInput?.canListRoots === true,
    };
    let input: ToolInputChannel =
      firstInput === undefined ? { ...answers, responses: {} } : { ...firstInput, ...answers };
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const outcome = await step(running.abort.signal, input);
      if ('done' in outcome)
        return { result: outcome.done, ...(outcome.stopped === undefined ? {} : { stopped: outcome.stopped }) };
      if (running.abort.signal.aborted) throw new Error('stopped');
      const answered = new Promise<Record<string, unknown>>((resolve, reject) => {
        running.resume = resolve;
        running.abort.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
      });
      const parked = await this.#o.store.change(
        id,
        { status: 'input_required', inputRequests: { ...outcome.needs.inputRequests }, inputResponses: {} },
        { from: ['working'] },
      );
      if (parked === undefined) {
        // Another host finished it meanwhile (a cancel): nothing to ask.
        running.stop ??= 'taken';
        running.abort.abort();
        throw new Error('stopped');
      }
      running.parkedVersion = parked.version;
      const responses = await answered;
      running.resume = undefined;
      running.parkedVersion = undefined;
      input = { ...answers, responses, ...(outcome.needs.state === undefined ? {} : { state: outcome.needs.state }) };
    }
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `The task asked for input ${MAX_ROUNDS} times without finishing, so it was stopped.`,
    );
  }

  /** The caller's task, failed first when it is open, runs on no host here, and its host stopped marking it alive. */
  async find(taskId: unknown, owner: string | undefined): Promise<McpTaskRecord> {
    const unknown = () =>
      new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown task ${JSON.stringify(typeof taskId === 'string' ? taskId.slice(0, 100) : taskId)}: ` +
          `no task of this API key has that id. Tasks are kept ${TASK_TTL_MS / 60_000} minutes after ` +
          `they finish, so it may have expired.`,
      );
    if (typeof taskId !== 'string') throw unknown();
    let record = await this.#o.store.get(taskId).catch(storeFailure('read the task'));
    if (record === undefined || !(record.owner === (owner ?? null) || this.#o.maySee?.(record.owner, owner) === true))
      throw unknown();
    // Only a record that looks stale by this host's clock is checked by the store's (which decides), so polls of a live task write nothing.
    if (
      OPEN.includes(record.status) &&
      !this.#running.has(record.id) &&
      Date.now() - Date.parse(record.heartbeatAt) >= this.#o.staleMs
    ) {
      const failure = hostStopped(this.#o.staleMs);
      if (
        (await this.#o.store.abandonStale(this.#o.staleMs, failure, record.id).catch(storeFailure('read the task'))) > 0
      )
        record = (await this.#o.store.get(record.id).catch(storeFailure('read the task'))) ?? record;
    }
    return record;
  }

  /** The DetailedTask: the questions while parked, the result once completed, the error once failed. */
  async get(taskId: unknown, owner: string | undefined): Promise<Record<string, unknown>> {
    const task = await this.find(taskId, owner);
    return {
      ...taskView(task),
      ...(task.status === 'input_required' && task.inputRequests !== null ? { inputRequests: task.inputRequests } : {}),
      ...(task.status === 'completed' ? { result: task.result } : {}),
      ...(task.status === 'failed' ? { error: task.error } : {}),
    };
  }

  /**
   * Cancels an open task; a finished one is left as it is. A call running here is stopped, and the task
   * then reads what happened: cancelled, or completed when the tool finished first. For one running on
   * another host the request is recorded; that host stops the call on its next tick and records the
   * end, which this waits for (bounded): past the bound it answers the task as it is, still open,
   * saying a cancel was requested. Never a terminal status the running host might contradict.
   */
  async cancel(taskId: unknown, owner: string | undefined): Promise<McpTaskRecord> {
    const task = await this.find(taskId, owner);
    if (!OPEN.includes(task.status)) return task;
    const running = this.#running.get(task.id);
    if (running !== undefined) {
      running.stop ??= 'cancel';
      running.abort.abort();
      // The executor bounds the wait: a tool that does not stop within its grace period is answered as unknown.
      await running.settled;
      return this.find(taskId, owner);
    }
    let current =
      (await this.#o.store.requestCancel(task.id, CANCEL_REQUESTED).catch(storeFailure('record the cancel request'))) ??
      (await this.find(taskId, owner));
    // The running host sees the request within a tick, then the executor waits up to its grace for the tool.
    const deadline = Date.now() + 4 * this.#tickMs() + this.#o.cancelGraceMs;
    while (OPEN.includes(current.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS));
      // A task whose host stopped marking it alive is failed here, its outcome unknown.
      current = await this.find(taskId, owner);
    }
    return current;
  }

  /**
   * Answers to a parked task's questions: each answer for a pending key is kept and the key is no longer
   * pending; other keys are ignored. Once none is pending, the task goes on with all the answers.
   */
  async update(taskId: unknown, owner: string | undefined, inputResponses: unknown): Promise<Record<string, never>> {
    if (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        "tasks/update needs inputResponses: an object of answers keyed like the task's inputRequests.",
      );
    for (let attempt = 0; attempt < 8; attempt++) {
      const task = await this.find(taskId, owner);
      if (task.status !== 'input_required' || task.inputRequests === null) return {};
      const pending = { ...task.inputRequests };
      const answers = { ...task.inputResponses };
      const keys = Object.keys(inputResponses).filter((key) => Object.hasOwn(pending, key));
      if (keys.length === 0) return {};
      for (const key of keys) {
        answers[key] = (inputResponses as Record<string, unknown>)[key];
        delete pending[key];
      }
      const done = Object.keys(pending).length === 0;
      // All answered: the task is working again, and its host (this one or another) goes on with the answers.
      const next = await this.#o.store
        .change(
          task.id,
          done
            ? { status: 'working', inputRequests: null, inputResponses: answers }
            : { inputRequests: pending, inputResponses: answers },
          { from: ['input_required'], version: task.version },
        )
        .catch((error: unknown) => {
          if (
            error instanceof SessionStoreError &&
            (error.code === 'VALUE_TOO_LONG' || error.code === 'INVALID_ARGUMENT')
          )
            throw new ProtocolError(ProtocolErrorCode.InvalidParams, `These answers cannot be kept: ${error.message}`);
          return storeFailure('save the answers')(error);
        });
      if (next === undefined) continue; // changed meanwhile: read it again
      if (done) this.#resume(next);
      return {};
    }
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      'The task kept changing while these answers were saved; send them again.',
    );
  }

  /** Hands the answers to the parked call, when it runs here and the record is past its parking. */
  #resume(record: McpTaskRecord): void {
    const running = this.#running.get(record.id);
    if (running?.resume === undefined || running.parkedVersion === undefined || record.version <= running.parkedVersion)
      return;
    if (record.status === 'working') running.resume(record.inputResponses);
  }

  /** Once the call of this task, running on this host, has ended and its end was written; undefined when it runs elsewhere. */
  settledHere(taskId: string): Promise<void> | undefined {
    return this.#running.get(taskId)?.settled;
  }

  /** The owner's tasks, newest first (at most 100); those whose host stopped read as what they are, not as working. */
  async list(owner: string | undefined): Promise<McpTaskRecord[]> {
    await this.#o.store
      .abandonStale(this.#o.staleMs, hostStopped(this.#o.staleMs))
      .catch(storeFailure('list the tasks'));
    return this.#o.store.list(owner ?? null, 100).catch(storeFailure('list the tasks'));
  }

  /** Marks this host's tasks alive, and takes what other hosts wrote: a cancel request stops the call, answers resume it. */
  async #tick(): Promise<void> {
    const records = await this.#o.store.heartbeat([...this.#running.keys()]);
    for (const record of records) {
      const running = this.#running.get(record.id);
      if (running === undefined) continue;
      if (!OPEN.includes(record.status)) {
        // Another host took this host for stopped (its heartbeat looked stale): that end stays.
        if (running.stop === undefined)
          this.#o.logger.warn(
            { taskId: record.id, status: record.status },
            `task ${record.id}: another host recorded it ${record.status}, so its call here was stopped`,
          );
        running.stop ??= 'taken';
        running.abort.abort();
      } else if (record.cancelRequestedAt !== null && running.stop === undefined) {
        this.#o.logger.info(
          { taskId: record.id },
          `task ${record.id}: a cancel was requested through another host, so its call here was asked to stop`,
        );
        running.stop = 'cancel';
        running.abort.abort();
      } else this.#resume(record);
    }
  }

  /** How often this host marks its tasks alive. */
  #tickMs(): number {
    return Math.min(1000, Math.floor(this.#o.staleMs / 4));
  }

  #startTicking(): void {
    if (this.#ticker !== undefined) return;
    const every = this.#tickMs();
    let ticking = false;
    this.#ticker = setInterval(() => {
      // A slow store never gets a second tick piled on the first.
      if (ticking) return;
      ticking = true;
      this.#tick()
        .catch((error: unknown) =>
          this.#o.logger.warn(
            { err: error },
            "MCP tasks: marking this host's tasks alive failed; it is tried again in a second",
          ),
        )
        .finally(() => (ticking = false));
    }, every);
    this.#ticker.unref();
  }

  #stopTicking(): void {
    if (this.#ticker !== undefined) clearInterval(this.#ticker);
    this.#ticker = undefined;
  }

  /** Deletes finished tasks past their expiry, at most once a minute, without holding up the caller. */
  #sweep(): void {
    if (Date.now() - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = Date.now();
    this.#o.store
      .deleteExpired()
      .catch((error: unknown) =>
        this.#o.logger.warn({ err: error }, 'MCP tasks: deleting expired tasks failed; it is tried again later'),
      );
  }

  /** Stops every call this host runs and records each task as failed, its outcome unknown (a shutdown). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopTicking();
    const running = [...this.#running.values()];
    for (const entry of running) {
      entry.stop ??= 'shutdown';
      entry.abort.abort();
    }
    await Promise.allSettled(running.flatMap((entry) => entry.settled ?? []));
  }
}

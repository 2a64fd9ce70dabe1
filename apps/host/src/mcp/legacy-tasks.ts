import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import { OPEN_TASK_STATUSES } from '@aptix/agent-sessions';
import { legacyTaskView, POLL_INTERVAL_MS } from './task-records.js';
import type { McpTasks } from './task-runner.js';

/** 2025-11-25's experimental tasks over the same records: the task, its result once it finished (waiting until then), the caller's tasks, a cancel. */

const OPEN: readonly string[] = OPEN_TASK_STATUSES;

export async function getLegacy(
  tasks: McpTasks,
  taskId: unknown,
  owner: string | undefined,
): Promise<Record<string, unknown>> {
  return legacyTaskView(await tasks.find(taskId, owner));
}

export async function resultLegacy(
  tasks: McpTasks,
  taskId: unknown,
  owner: string | undefined,
  signal: AbortSignal,
): Promise<CallToolResult> {
  let task = await tasks.find(taskId, owner);
  while (OPEN.includes(task.status)) {
    const settled = tasks.settledHere(task.id);
    if (settled !== undefined) await settled;
    else await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    if (signal.aborted)
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'tasks/result was cancelled by the client.');
    task = await tasks.find(taskId, owner);
  }
  if (task.status === 'completed') {
    const result = task.result as CallToolResult;
    return { ...result, _meta: { ...result._meta, 'io.modelcontextprotocol/related-task': { taskId: task.id } } };
  }
  if (task.status === 'failed') {
    const error = task.error as { code: number; message: string; data?: unknown };
    throw new ProtocolError(error.code, error.message, error.data);
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Task ${task.id} was cancelled, so it has no result.`);
}

export async function listLegacy(tasks: McpTasks, owner: string | undefined): Promise<Record<string, unknown>> {
  return { tasks: (await tasks.list(owner)).map(legacyTaskView) };
}

/** A finished task is refused, saying what it is; an open one answers as the cancel left it (still open when its host has not recorded the end in time). */
export async function cancelLegacy(
  tasks: McpTasks,
  taskId: unknown,
  owner: string | undefined,
): Promise<Record<string, unknown>> {
  const task = await tasks.find(taskId, owner);
  if (!OPEN.includes(task.status))
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Task ${task.id} is already ${task.status}; it cannot be cancelled.`,
    );
  return legacyTaskView(await tasks.cancel(taskId, owner));
}

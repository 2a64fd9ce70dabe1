import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { SessionStoreError, type McpTaskRecord } from '@aptix/agent-sessions';

/** The wire shapes of a stored MCP task, and the errors a task carries. */

/** How long a finished task stays readable. */
export const TASK_TTL_MS = 15 * 60_000;
/** The poll interval a client is advised to keep. */
export const POLL_INTERVAL_MS = 500;
/** A JSON-RPC error of the host's own (-32603), with the Aptix code in `data.code`. */
export const internal = (message: string, code: string): { code: number; message: string; data: { code: string } } => ({ code: ProtocolErrorCode.InternalError, message, data: { code } });

/** The Task fields of SEP-2663 (without `requestState`). */
export function taskView(task: McpTaskRecord): Record<string, unknown> {
  return { taskId: task.id, status: task.status, createdAt: task.createdAt, lastUpdatedAt: task.updatedAt, ttlMs: TASK_TTL_MS, pollIntervalMs: POLL_INTERVAL_MS, ...(task.statusMessage === null ? {} : { statusMessage: task.statusMessage }) };
}

/** A task as 2025-11-25's experimental tasks show it (`ttl`, `pollInterval`). */
export function legacyTaskView(task: McpTaskRecord): Record<string, unknown> {
  return { taskId: task.id, status: task.status, createdAt: task.createdAt, lastUpdatedAt: task.updatedAt, ttl: TASK_TTL_MS, pollInterval: POLL_INTERVAL_MS, ...(task.statusMessage === null ? {} : { statusMessage: task.statusMessage }) };
}

/** A store failure as the client sees it: what could not be done, and that nothing else is known. */
export function storeFailure(what: string): (error: unknown) => never {
  return (error: unknown) => {
    if (error instanceof ProtocolError) throw error;
    const detail = error instanceof SessionStoreError ? ` ${error.message}` : '';
    throw new ProtocolError(ProtocolErrorCode.InternalError, `The task store could not ${what}.${detail} Retry shortly.`);
  };
}


import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { SessionStoreError, type McpTaskChange, type McpTaskRecord } from '@aptix/agent-sessions';
import type { CallToolResult } from '@modelcontextprotocol/server';

/** The wire shapes of a stored MCP task, the errors a task carries, and what it reads once its call ended. */

/** How long a finished task stays readable. */
export const TASK_TTL_MS = 15 * 60_000;
/** The poll interval a client is advised to keep. */
export const POLL_INTERVAL_MS = 500;
/** A JSON-RPC error of the host's own (-32603), with the Aptix code in `data.code`. */
export const internal = (message: string, code: string): { code: number; message: string; data: { code: string } } => ({
  code: ProtocolErrorCode.InternalError,
  message,
  data: { code },
});

/** The Task fields of SEP-2663 (without `requestState`). */
export function taskView(task: McpTaskRecord): Record<string, unknown> {
  return {
    taskId: task.id,
    status: task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: task.updatedAt,
    ttlMs: TASK_TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
    ...(task.statusMessage === null ? {} : { statusMessage: task.statusMessage }),
  };
}

/** A task as 2025-11-25's experimental tasks show it (`ttl`, `pollInterval`). */
export function legacyTaskView(task: McpTaskRecord): Record<string, unknown> {
  return {
    taskId: task.id,
    status: task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: task.updatedAt,
    ttl: TASK_TTL_MS,
    pollInterval: POLL_INTERVAL_MS,
    ...(task.statusMessage === null ? {} : { statusMessage: task.statusMessage }),
  };
}

/** A store failure as the client sees it: what could not be done, and that nothing else is known. */
export function storeFailure(what: string): (error: unknown) => never {
  return (error: unknown) => {
    if (error instanceof ProtocolError) throw error;
    const detail = error instanceof SessionStoreError ? ` ${error.message}` : '';
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `The task store could not ${what}.${detail} Retry shortly.`,
    );
  };
}

/** What an open task reads once a cancel was requested through a host that does not run it. */
export const CANCEL_REQUESTED =
  'A cancel was requested and the host running this task has been told; it records how the call ends: cancelled if the tool stopped before any effect, completed if it finished first.';

/**
 * Why a call was asked to stop: the client cancelled (here, or through another host, which recorded the
 * request), the host shuts down, or another host ended the task (`taken`: it took the task for stopped,
 * its heartbeat stale).
 */
export type Stop = 'cancel' | 'shutdown' | 'taken';
/** A call's answer, and how it stopped when it was asked to (see TaskStep). */
export type Ended = { readonly result: CallToolResult; readonly stopped?: 'cancelled' | 'unknown' };

/**
 * What the task reads once its call ended. A tool that answered completes it, even after a stop was
 * asked (the stop came too late: its effect happened). A call stopped by its client is cancelled; one
 * stopped because this host shuts down is failed. Either says whether the tool confirmed it stopped
 * before it had any effect, or whether that is unknown.
 */
export function taskEnd(stop: Stop | undefined, ended: Ended | undefined, toolName: string): McpTaskChange {
  if (ended !== undefined && (stop === undefined || ended.stopped === undefined)) {
    return {
      status: 'completed',
      result: ended.result,
      ...(stop === 'cancel'
        ? { statusMessage: 'The tool finished before the cancel reached it: its result stands.' }
        : {}),
    };
  }
  const unknown = ended?.stopped === 'unknown';
  if (stop !== 'shutdown') {
    return {
      status: 'cancelled',
      statusMessage: unknown
        ? 'Cancelled by the client, but the tool did not confirm it stopped: whether it took effect is unknown.'
        : 'Cancelled by the client before it finished.',
    };
  }
  if (ended?.stopped === 'cancelled') {
    return {
      status: 'failed',
      statusMessage: 'The host running this task shut down; the call was stopped before it had any effect.',
      error: internal(
        `The host running this task shut down, so ${toolName} was stopped before it finished; it made no change. Call it again.`,
        'TOOL_UNAVAILABLE',
      ),
    };
  }
  return {
    status: 'failed',
    statusMessage: 'The host running this task shut down before it finished; the outcome is unknown.',
    error: internal(
      `The host running this task shut down before ${toolName} finished, so it was asked to stop; whether the tool took effect is unknown. Check before calling it again.`,
      'OUTCOME_UNKNOWN',
    ),
  };
}

/** What a task whose host stopped marking it alive reads. */
export function hostStopped(staleMs: number): {
  statusMessage: string;
  error: ReturnType<typeof internal>;
  keepForMs: number;
} {
  return {
    statusMessage: 'The host running this task stopped; the outcome is unknown.',
    error: internal(
      `The host running this task stopped: it has not reported for over ${Math.round(staleMs / 1000)} s. Whether the tool finished or took effect is unknown; check before calling it again.`,
      'OUTCOME_UNKNOWN',
    ),
    keepForMs: TASK_TTL_MS,
  };
}

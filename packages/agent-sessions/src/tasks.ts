/**
 * MCP tasks (long tool calls a client polls): the records, kept in the session store so that any host
 * sharing it answers `tasks/get`, and a restart loses none. The host that runs a task keeps the call in
 * its memory and writes each step here; it marks its open tasks alive (`heartbeat`) while it runs them,
 * so a task whose host stopped is found (`abandonStale`) and reported as such, never left `working`.
 *
 * Every change is one conditional UPDATE (`… WHERE status IN <from>`, and the record's `version` when
 * given), so of two hosts changing a task at once (an answer on one, the result on the other) one wins
 * and the other reads the record as the winner left it. A change only ever moves a task from an open
 * status: a finished task (completed, failed, cancelled) never changes again. A cancel that reaches a
 * host not running the task is recorded as a request (`requestCancel`); the running host sees it when it
 * next marks its tasks alive, stops the call, and records how it really ended.
 */

import { SessionStoreError } from './errors.js';

export type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The statuses of a task that has not finished. */
export const OPEN_TASK_STATUSES: readonly McpTaskStatus[] = ['working', 'input_required'];

/** A persisted task. Times are ISO-8601 strings. */
export interface McpTaskRecord {
  readonly id: string;
  /** Who may read, answer and cancel it (an API key's name), or null on a host without keys. */
  readonly owner: string | null;
  readonly toolName: string;
  readonly status: McpTaskStatus;
  readonly statusMessage: string | null;
  /** Once completed: the tool result, as JSON. */
  readonly result: unknown;
  /** Once failed: the JSON-RPC error (`{ code, message, data? }`). */
  readonly error: unknown;
  /** While `input_required`: the questions not answered yet, by key. */
  readonly inputRequests: Record<string, unknown> | null;
  /** The answers given so far to the current questions, by key. */
  readonly inputResponses: Record<string, unknown>;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** When the host running it last said it is alive. */
  readonly heartbeatAt: string;
  /** When a client first asked, through a host not running it, to cancel it; null if nobody did. */
  readonly cancelRequestedAt: string | null;
  /** When a finished task is forgotten (an open one is kept while it runs). */
  readonly expiresAt: string;
  /** Grows by one with every change: a read-modify-write passes it back to change only what it read. */
  readonly version: number;
}

export interface NewMcpTask {
  readonly owner: string | null;
  readonly toolName: string;
  /** How long the record is kept: from now while it runs, and from its end once it finished. */
  readonly ttlMs: number;
}

/** What a change sets; fields left out keep their value. */
export interface McpTaskChange {
  readonly status?: McpTaskStatus;
  readonly statusMessage?: string | null;
  readonly result?: unknown;
  readonly error?: unknown;
  readonly inputRequests?: Record<string, unknown> | null;
  readonly inputResponses?: Record<string, unknown>;
  /** Keep the record this long from now (set when a task finishes). */
  readonly keepForMs?: number;
}

/** The persistence of MCP tasks, on the same database as the sessions. */
export interface McpTaskStore {
  create(input: NewMcpTask): Promise<McpTaskRecord>;
  /** The task, unless it is unknown or finished and past its expiry. */
  get(id: string): Promise<McpTaskRecord | undefined>;
  /** The owner's tasks, newest first (at most `limit`, 1 to 1000), expired ones left out. */
  list(owner: string | null, limit?: number): Promise<McpTaskRecord[]>;
  /**
   * Applies `change` if the task's status is one of `when.from` (and its version is `when.version`,
   * when given). Answers the changed record, or undefined when the condition did not hold.
   * `when.from` names open statuses only ({@link OPEN_TASK_STATUSES}): a finished task never changes, so
   * any other status throws `INVALID_ARGUMENT`.
   * Throws `VALUE_TOO_LONG` for a value over its bound ({@link MCP_TASK_VALUE_MAX_BYTES}); nothing is written then.
   */
  change(
    id: string,
    change: McpTaskChange,
    when: { readonly from: readonly McpTaskStatus[]; readonly version?: number },
  ): Promise<McpTaskRecord | undefined>;
  /**
   * Records that a client asked to cancel the open task (the first request's time is kept), with the
   * status message readers see until the running host records the end; the status stays open. Answers
   * the record, or undefined when the task is unknown or already finished.
   */
  requestCancel(id: string, statusMessage: string): Promise<McpTaskRecord | undefined>;
  /** Marks the given tasks alive now, those still open; answers the records of all of them that exist (a host learns of a cancel or an answer another host took). */
  heartbeat(ids: readonly string[]): Promise<McpTaskRecord[]>;
  /**
   * Open tasks not marked alive for `olderThanMs` (only `id`, when given): their host stopped. They
   * become `failed` with `error` and `statusMessage`, kept `keepForMs` from now. Answers how many.
   */
  abandonStale(
    olderThanMs: number,
    failure: { readonly error: unknown; readonly statusMessage: string; readonly keepForMs: number },
    id?: string,
  ): Promise<number>;
  /** Deletes finished tasks past their expiry; answers how many. */
  deleteExpired(): Promise<number>;
}

/** The largest JSON text of one task value (a result, an error, the questions, the answers). */
export const MCP_TASK_VALUE_MAX_BYTES = 4 * 1024 * 1024;
const MAX_TTL_MS = 366 * 24 * 3600 * 1000;
const MAX_NAME = 256;
const MAX_MESSAGE = 10_000;

/** Checks what a new task would store. */
export function checkNewTask(input: NewMcpTask): NewMcpTask {
  if (
    input.owner !== null &&
    (typeof input.owner !== 'string' || input.owner.length > MAX_NAME || input.owner.includes('\u0000'))
  ) {
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `owner must be null or a string of at most ${MAX_NAME} characters without NUL.`,
    );
  }
  if (
    typeof input.toolName !== 'string' ||
    input.toolName === '' ||
    input.toolName.length > MAX_NAME ||
    input.toolName.includes('\u0000')
  ) {
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `toolName must be a string of 1 to ${MAX_NAME} characters without NUL.`,
    );
  }
  checkTtl(input.ttlMs, 'ttlMs');
  return input;
}

function checkTtl(ms: number, field: string): void {
  if (!Number.isInteger(ms) || ms <= 0 || ms > MAX_TTL_MS)
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `${field} must be a whole number of milliseconds from 1 to ${MAX_TTL_MS}; got ${String(ms)}.`,
    );
}

/** A value as the JSON text a store writes, refused past {@link MCP_TASK_VALUE_MAX_BYTES} or when JSON cannot hold it. */
export function taskJson(field: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value ?? null);
  } catch {
    text = undefined;
  }
  if (text === undefined)
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `The task's ${field} cannot be written as JSON; nothing was saved.`,
    );
  // PostgreSQL's json cannot hold \u0000 in a string.
  if (text.includes('\\u0000'))
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `The task's ${field} contains a NUL character (\\u0000), which cannot be stored; nothing was saved.`,
    );
  const bytes = Buffer.byteLength(text);
  if (bytes > MCP_TASK_VALUE_MAX_BYTES) {
    throw new SessionStoreError(
      'VALUE_TOO_LONG',
      `The task's ${field} is ${bytes} bytes of JSON; the limit is ${MCP_TASK_VALUE_MAX_BYTES}. Nothing was saved.`,
    );
  }
  return text;
}

/** Checks that a change moves a task from open statuses only: a finished task never changes. */
export function checkFrom(from: readonly McpTaskStatus[]): readonly McpTaskStatus[] {
  const closed = from.filter((status) => !OPEN_TASK_STATUSES.includes(status));
  if (closed.length > 0) {
    throw new SessionStoreError(
      'INVALID_ARGUMENT',
      `A task change moves a task from ${OPEN_TASK_STATUSES.join(' or ')} only; got ${closed.map(String).join(', ')}. A finished task never changes.`,
    );
  }
  return from;
}

/** A status message as stored: without NUL, at most {@link MAX_MESSAGE} characters. */
export function taskMessage(message: string | null): string | null {
  return message === null ? null : String(message).replaceAll('\u0000', '').slice(0, MAX_MESSAGE);
}

/** The columns a change sets, as (column, JSON or plain value) pairs, checked and bounded. */
export function changeColumns(change: McpTaskChange): Array<[column: string, value: unknown, json: boolean]> {
  const columns: Array<[string, unknown, boolean]> = [];
  if (change.status !== undefined) columns.push(['status', change.status, false]);
  if (change.statusMessage !== undefined) {
    columns.push(['status_message', taskMessage(change.statusMessage), false]);
  }
  if (change.result !== undefined) columns.push(['result', taskJson('result', change.result), true]);
  if (change.error !== undefined) columns.push(['error', taskJson('error', change.error), true]);
  if (change.inputRequests !== undefined)
    columns.push([
      'input_requests',
      change.inputRequests === null ? null : taskJson('inputRequests', change.inputRequests),
      true,
    ]);
  if (change.inputResponses !== undefined)
    columns.push(['input_responses', taskJson('inputResponses', change.inputResponses), true]);
  if (change.keepForMs !== undefined) checkTtl(change.keepForMs, 'keepForMs');
  return columns;
}

/** A task row as either database returns it: times as text (SQLite) or Date (PostgreSQL), JSON as text or parsed. */
export interface McpTaskRowOf<Time> {
  id: string;
  owner: string | null;
  tool_name: string;
  status: McpTaskStatus;
  status_message: string | null;
  result: unknown;
  error: unknown;
  input_requests: unknown;
  input_responses: unknown;
  created_at: Time;
  updated_at: Time;
  heartbeat_at: Time;
  expires_at: Time;
  cancel_requested_at: Time | null;
  version: number | string;
}

export function rowToTask<Time>(
  row: McpTaskRowOf<Time>,
  time: (value: Time) => string,
  json: (value: unknown) => unknown,
): McpTaskRecord {
  const parsed = (value: unknown) => (value === null || value === undefined ? null : json(value));
  return {
    id: row.id,
    owner: row.owner,
    toolName: row.tool_name,
    status: row.status,
    statusMessage: row.status_message,
    result: parsed(row.result),
    error: parsed(row.error),
    inputRequests: parsed(row.input_requests) as Record<string, unknown> | null,
    inputResponses: (parsed(row.input_responses) as Record<string, unknown> | null) ?? {},
    createdAt: time(row.created_at),
    updatedAt: time(row.updated_at),
    heartbeatAt: time(row.heartbeat_at),
    expiresAt: time(row.expires_at),
    cancelRequestedAt:
      row.cancel_requested_at === null || row.cancel_requested_at === undefined ? null : time(row.cancel_requested_at),
    version: Number(row.version),
  };
}

export function clampTaskLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return 100;
  return Math.max(1, Math.min(1000, Math.trunc(limit)));
}

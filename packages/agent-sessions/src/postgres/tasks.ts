import { randomUUID } from 'node:crypto';
import type { QueryResult, QueryResultRow } from 'pg';
import {
  changeColumns,
  checkFrom,
  checkNewTask,
  clampTaskLimit,
  OPEN_TASK_STATUSES,
  rowToTask,
  taskJson,
  taskMessage,
  type McpTaskChange,
  type McpTaskRecord,
  type McpTaskRowOf,
  type McpTaskStatus,
  type McpTaskStore,
  type NewMcpTask,
} from '../tasks.js';
import { storableId } from '../internal/approval-checks.js';
import type { Queries } from './approvals.js';
import { observeWrite, type WriteSpans } from '../internal/store-telemetry.js';

type TaskRow = McpTaskRowOf<Date> & QueryResultRow;

const COLUMNS =
  'id, owner, tool_name, status, status_message, result, error, input_requests, input_responses, created_at, updated_at, heartbeat_at, expires_at, cancel_requested_at, version::text AS version';
const OPEN = `status IN (${OPEN_TASK_STATUSES.map((status) => `'${status}'`).join(', ')})`;
const ms = (placeholder: string) => `make_interval(secs => ${placeholder}::double precision / 1000)`;

const toTask = (row: TaskRow): McpTaskRecord =>
  rowToTask(
    row,
    (time) => time.toISOString(),
    (value) => value,
  );

/**
 * MCP tasks in the PostgreSQL session schema. Each change is one conditional UPDATE: under READ
 * COMMITTED a concurrent UPDATE of the same row waits, then re-checks its WHERE against the committed
 * row, so of two hosts changing a task at once one gets the row back. Times come from the database's
 * clock, so hosts with skewed clocks agree on expiry and on whose heartbeat is stale.
 */
export class PostgresTaskStore implements McpTaskStore {
  readonly #pool: Queries;
  readonly #t: string;

  constructor(pool: Queries, quotedSchema: string) {
    this.#pool = pool;
    this.#t = `${quotedSchema}.agent_mcp_tasks`;
  }

  async #rows(sql: string, params: readonly unknown[], write?: string): Promise<McpTaskRecord[]> {
    const { rows } = await (write === undefined
      ? this.#pool.query<TaskRow>(sql, params)
      : this.#write(write, sql, params));
    return rows.map(toTask);
  }

  /** One statement that writes, observed as `operation` when telemetry is on (a sweep's or a heartbeat's: `nested`). */
  #write(
    operation: string,
    sql: string,
    params: readonly unknown[],
    spans?: WriteSpans,
  ): Promise<QueryResult<TaskRow>> {
    return observeWrite('postgresql', operation, () => this.#pool.query<TaskRow>(sql, params), spans);
  }

  async create(input: NewMcpTask): Promise<McpTaskRecord> {
    const { owner, toolName, ttlMs } = checkNewTask(input);
    const [task] = await this.#rows(
      `INSERT INTO ${this.#t} (id, owner, tool_name, status, expires_at) VALUES ($1, $2, $3, 'working', clock_timestamp() + ${ms('$4')}) RETURNING ${COLUMNS}`,
      [randomUUID(), owner, toolName, ttlMs],
      'create_mcp_task',
    );
    return task!;
  }

  async get(id: string): Promise<McpTaskRecord | undefined> {
    if (!storableId(id)) return undefined;
    return (
      await this.#rows(
        `SELECT ${COLUMNS} FROM ${this.#t} WHERE id = $1 AND (${OPEN} OR expires_at > clock_timestamp())`,
        [id],
      )
    )[0];
  }

  async list(owner: string | null, limit?: number): Promise<McpTaskRecord[]> {
    return this.#rows(
      `SELECT ${COLUMNS} FROM ${this.#t} WHERE owner IS NOT DISTINCT FROM $1 AND (${OPEN} OR expires_at > clock_timestamp()) ORDER BY created_at DESC, id LIMIT $2`,
      [owner, clampTaskLimit(limit)],
    );
  }

  async change(
    id: string,
    change: McpTaskChange,
    when: { readonly from: readonly McpTaskStatus[]; readonly version?: number },
  ): Promise<McpTaskRecord | undefined> {
    const from = checkFrom(when.from);
    if (!storableId(id) || from.length === 0) return undefined;
    const params: unknown[] = [];
    const at = (value: unknown) => `$${params.push(value)}`;
    const sets = changeColumns(change).map(
      ([column, value, json]) => `${column} = ${at(value)}${json ? '::jsonb' : ''}`,
    );
    sets.push('updated_at = clock_timestamp()', 'version = version + 1');
    if (change.keepForMs !== undefined) sets.push(`expires_at = clock_timestamp() + ${ms(at(change.keepForMs))}`);
    const where = [`id = ${at(id)}`, `status = ANY(${at(from)}::text[])`];
    if (when.version !== undefined) where.push(`version = ${at(when.version)}`);
    return (
      await this.#rows(
        `UPDATE ${this.#t} SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING ${COLUMNS}`,
        params,
        'change_mcp_task',
      )
    )[0];
  }

  async requestCancel(id: string, statusMessage: string): Promise<McpTaskRecord | undefined> {
    if (!storableId(id)) return undefined;
    return (
      await this.#rows(
        `UPDATE ${this.#t} SET cancel_requested_at = COALESCE(cancel_requested_at, clock_timestamp()), status_message = $2, updated_at = clock_timestamp(), version = version + 1 ` +
          `WHERE id = $1 AND ${OPEN} RETURNING ${COLUMNS}`,
        [id, taskMessage(statusMessage)],
        'request_mcp_task_cancel',
      )
    )[0];
  }

  async heartbeat(ids: readonly string[]): Promise<McpTaskRecord[]> {
    const wanted = ids.filter(storableId);
    if (wanted.length === 0) return [];
    await this.#write(
      'heartbeat_mcp_tasks',
      `UPDATE ${this.#t} SET heartbeat_at = clock_timestamp() WHERE id = ANY($1::text[]) AND ${OPEN}`,
      [wanted],
      'nested',
    );
    return this.#rows(`SELECT ${COLUMNS} FROM ${this.#t} WHERE id = ANY($1::text[])`, [wanted]);
  }

  async abandonStale(
    olderThanMs: number,
    failure: { readonly error: unknown; readonly statusMessage: string; readonly keepForMs: number },
    id?: string,
  ): Promise<number> {
    if (id !== undefined && !storableId(id)) return 0;
    const params: unknown[] = [taskJson('error', failure.error), failure.statusMessage, failure.keepForMs, olderThanMs];
    if (id !== undefined) params.push(id);
    const { rowCount } = await this.#write(
      'abandon_stale_mcp_tasks',
      `UPDATE ${this.#t} SET status = 'failed', error = $1::jsonb, status_message = $2, input_requests = NULL, updated_at = clock_timestamp(), ` +
        `expires_at = clock_timestamp() + ${ms('$3')}, version = version + 1 WHERE ${OPEN} AND heartbeat_at <= clock_timestamp() - ${ms('$4')}${id === undefined ? '' : ' AND id = $5'}`,
      params,
      'nested',
    );
    return rowCount ?? 0;
  }

  async deleteExpired(): Promise<number> {
    const { rowCount } = await this.#write(
      'delete_expired_mcp_tasks',
      `DELETE FROM ${this.#t} WHERE NOT ${OPEN} AND expires_at <= clock_timestamp()`,
      [],
      'nested',
    );
    return rowCount ?? 0;
  }
}

import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
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
import { observeWrite, type WriteSpans } from '../internal/store-telemetry.js';

type TaskRow = McpTaskRowOf<string>;

const toTask = (row: TaskRow): McpTaskRecord =>
  rowToTask(
    row,
    (time) => time,
    (text) => JSON.parse(text as string) as unknown,
  );
const iso = (ms: number = Date.now()) => new Date(ms).toISOString();
const OPEN = `status IN (${OPEN_TASK_STATUSES.map((status) => `'${status}'`).join(', ')})`;

/**
 * MCP tasks in the SQLite session database. Each change is one conditional UPDATE, so processes sharing
 * the file (WAL) never both take the same transition.
 */
export class SqliteTaskStore implements McpTaskStore {
  readonly #db: Database.Database;
  readonly #get: Database.Statement<[string, string], TaskRow>;
  readonly #run: <T>(operation: () => T) => Promise<T>;

  constructor(db: Database.Database, run: <T>(operation: () => T) => Promise<T> = async (operation) => operation()) {
    this.#db = db;
    this.#run = run;
    // A finished task past its expiry is gone, even before a sweep deletes it.
    this.#get = db.prepare<[string, string], TaskRow>(
      `SELECT * FROM agent_mcp_tasks WHERE id = ? AND (${OPEN} OR expires_at > ?)`,
    );
  }

  /** Runs one write, observed as `operation` when telemetry is on (a sweep's or a heartbeat's: `nested`). */
  #write<T>(operation: string, write: () => T, spans?: WriteSpans): Promise<T> {
    return observeWrite('sqlite', operation, () => this.#run(write), spans);
  }

  async create(input: NewMcpTask): Promise<McpTaskRecord> {
    const { owner, toolName, ttlMs } = checkNewTask(input);
    const now = Date.now();
    const row: TaskRow = {
      id: randomUUID(),
      owner,
      tool_name: toolName,
      status: 'working',
      status_message: null,
      result: null,
      error: null,
      input_requests: null,
      input_responses: '{}',
      created_at: iso(now),
      updated_at: iso(now),
      heartbeat_at: iso(now),
      expires_at: iso(now + ttlMs),
      cancel_requested_at: null,
      version: 1,
    };
    const insert = this.#db.prepare(
      'INSERT INTO agent_mcp_tasks (id, owner, tool_name, status, input_responses, created_at, updated_at, heartbeat_at, expires_at, version) ' +
        'VALUES (@id, @owner, @tool_name, @status, @input_responses, @created_at, @updated_at, @heartbeat_at, @expires_at, @version)',
    );
    await this.#write('create_mcp_task', () => insert.run(row));
    return toTask(row);
  }

  async get(id: string): Promise<McpTaskRecord | undefined> {
    if (!storableId(id)) return undefined;
    const row = await this.#run(() => this.#get.get(id, iso()));
    return row === undefined ? undefined : toTask(row);
  }

  async list(owner: string | null, limit?: number): Promise<McpTaskRecord[]> {
    const rows = await this.#run(
      () =>
        this.#db
          .prepare(
            `SELECT * FROM agent_mcp_tasks WHERE owner IS ? AND (${OPEN} OR expires_at > ?) ORDER BY created_at DESC, id LIMIT ?`,
          )
          .all(owner, iso(), clampTaskLimit(limit)) as TaskRow[],
    );
    return rows.map(toTask);
  }

  async change(
    id: string,
    change: McpTaskChange,
    when: { readonly from: readonly McpTaskStatus[]; readonly version?: number },
  ): Promise<McpTaskRecord | undefined> {
    const from = checkFrom(when.from);
    if (!storableId(id) || from.length === 0) return undefined;
    const columns = changeColumns(change);
    const now = Date.now();
    const sets = [
      ...columns.map(([column]) => `${column} = ?`),
      'updated_at = ?',
      'version = version + 1',
      ...(change.keepForMs === undefined ? [] : ['expires_at = ?']),
    ];
    const values = [
      ...columns.map(([, value]) => value),
      iso(now),
      ...(change.keepForMs === undefined ? [] : [iso(now + change.keepForMs)]),
    ];
    const where = [
      `id = ?`,
      `status IN (${from.map(() => '?').join(', ')})`,
      ...(when.version === undefined ? [] : ['version = ?']),
    ];
    const params = [...values, id, ...from, ...(when.version === undefined ? [] : [when.version])];
    const statement = this.#db.prepare(
      `UPDATE agent_mcp_tasks SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING *`,
    );
    const row = await this.#write('change_mcp_task', () => statement.get(...params) as TaskRow | undefined);
    return row === undefined ? undefined : toTask(row);
  }

  async requestCancel(id: string, statusMessage: string): Promise<McpTaskRecord | undefined> {
    if (!storableId(id)) return undefined;
    const now = iso();
    const statement = this.#db.prepare(
      `UPDATE agent_mcp_tasks SET cancel_requested_at = COALESCE(cancel_requested_at, ?), status_message = ?, updated_at = ?, version = version + 1 WHERE id = ? AND ${OPEN} RETURNING *`,
    );
    const row = await this.#write(
      'request_mcp_task_cancel',
      () => statement.get(now, taskMessage(statusMessage), now, id) as TaskRow | undefined,
    );
    return row === undefined ? undefined : toTask(row);
  }

  async heartbeat(ids: readonly string[]): Promise<McpTaskRecord[]> {
    const wanted = ids.filter(storableId);
    if (wanted.length === 0) return [];
    const marks = wanted.map(() => '?').join(', ');
    return this.#write(
      'heartbeat_mcp_tasks',
      () =>
        this.#db
          .transaction(() => {
            this.#db
              .prepare(`UPDATE agent_mcp_tasks SET heartbeat_at = ? WHERE id IN (${marks}) AND ${OPEN}`)
              .run(iso(), ...wanted);
            return (
              this.#db.prepare(`SELECT * FROM agent_mcp_tasks WHERE id IN (${marks})`).all(...wanted) as TaskRow[]
            ).map(toTask);
          })
          .immediate(),
      'nested',
    );
  }

  async abandonStale(
    olderThanMs: number,
    failure: { readonly error: unknown; readonly statusMessage: string; readonly keepForMs: number },
    id?: string,
  ): Promise<number> {
    if (id !== undefined && !storableId(id)) return 0;
    const error = taskJson('error', failure.error);
    const now = Date.now();
    const statement = this.#db.prepare(
      `UPDATE agent_mcp_tasks SET status = 'failed', error = ?, status_message = ?, input_requests = NULL, updated_at = ?, expires_at = ?, version = version + 1 ` +
        `WHERE ${OPEN} AND heartbeat_at <= ?${id === undefined ? '' : ' AND id = ?'}`,
    );
    const params = [
      error,
      failure.statusMessage,
      iso(now),
      iso(now + failure.keepForMs),
      iso(now - olderThanMs),
      ...(id === undefined ? [] : [id]),
    ];
    return (await this.#write('abandon_stale_mcp_tasks', () => statement.run(...params), 'nested')).changes;
  }

  async deleteExpired(): Promise<number> {
    const statement = this.#db.prepare(`DELETE FROM agent_mcp_tasks WHERE NOT ${OPEN} AND expires_at <= ?`);
    return (await this.#write('delete_expired_mcp_tasks', () => statement.run(iso()), 'nested')).changes;
  }
}

import type { McpSessionState } from '../types.js';
import type { Queries } from './approvals.js';

/**
 * What the PostgreSQL store keeps of an MCP session beside its binding: when it was last marked used,
 * how often, and whether it was closed. Times come from the database's clock, so hosts whose clocks
 * differ judge a session alike; each change is one conditional UPDATE.
 */
export class PostgresMcpSessions {
  constructor(
    private readonly db: Queries,
    /** The quoted bindings table. */
    private readonly table: string,
  ) {}

  /** Upserts the binding (a rebind, after a branch, counts as a use and never reopens a closed session). */
  async bind(mcpSessionId: string, agentSessionId: string): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.table} (mcp_session_id, agent_session_id) VALUES ($1, $2) ` +
        `ON CONFLICT (mcp_session_id) DO UPDATE SET agent_session_id = excluded.agent_session_id, bound_at = clock_timestamp(), last_used_at = NULL, touches = ${this.table}.touches + 1`,
      [mcpSessionId, agentSessionId],
    );
  }

  async read(mcpSessionId: string): Promise<McpSessionState | undefined> {
    const { rows } = await this.db.query<{
      agent_session_id: string;
      idle_ms: number;
      closed: boolean;
      touches: string;
    }>(
      `SELECT agent_session_id, (extract(epoch FROM clock_timestamp() - coalesce(last_used_at, bound_at)) * 1000)::float8 AS idle_ms, closed_at IS NOT NULL AS closed, touches::text AS touches ` +
        `FROM ${this.table} WHERE mcp_session_id = $1`,
      [mcpSessionId],
    );
    const row = rows[0];
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a query that matched nothing gives no row: rows[0] is undefined, which the type (no noUncheckedIndexedAccess) leaves out
    if (row === undefined) return undefined;
    return {
      agentSessionId: row.agent_session_id,
      idleMs: Math.max(0, row.idle_ms),
      closed: row.closed,
      touches: Number(row.touches),
    };
  }

  /** The new touches count, or `undefined` when the session is closed or unbound. */
  async markUsed(mcpSessionId: string): Promise<number | undefined> {
    const { rows } = await this.db.query<{ touches: string }>(
      `UPDATE ${this.table} SET last_used_at = clock_timestamp(), touches = touches + 1 WHERE mcp_session_id = $1 AND closed_at IS NULL RETURNING touches::text AS touches`,
      [mcpSessionId],
    );
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- an index or key that is not there reads undefined, which the type (no noUncheckedIndexedAccess) leaves out
    return rows[0] === undefined ? undefined : Number(rows[0].touches);
  }

  /** The agent session it was bound to, when this call closed it. */
  async markClosed(mcpSessionId: string, ifTouches: number | undefined): Promise<string | undefined> {
    const { rows } = await this.db.query<{ agent_session_id: string }>(
      `UPDATE ${this.table} SET closed_at = clock_timestamp() WHERE mcp_session_id = $1 AND closed_at IS NULL AND ($2::bigint IS NULL OR touches = $2::bigint) RETURNING agent_session_id`,
      [mcpSessionId, ifTouches ?? null],
    );
    return rows[0]?.agent_session_id;
  }
}

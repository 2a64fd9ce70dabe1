import { assertMigrationSequence, type Migration } from '../internal/migrations.js';

export interface SqliteMigration extends Migration {
  readonly sql: string;
}

/**
 * The SQLite schema, step by step. Released steps are frozen (a database at version 1 in the field
 * must reach the same schema as a fresh one): change the schema by adding a step.
 */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'sessions and mode history',
    sql: `
      CREATE TABLE agent_sessions (
        id TEXT PRIMARY KEY NOT NULL,
        mode TEXT NOT NULL,
        org_id TEXT,
        user_id TEXT,
        parent_id TEXT REFERENCES agent_sessions (id),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX agent_sessions_parent_id ON agent_sessions (parent_id);
      CREATE TABLE agent_session_mode_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
        from_mode TEXT NOT NULL,
        to_mode TEXT NOT NULL,
        reason TEXT NOT NULL,
        branch INTEGER NOT NULL CHECK (branch IN (0, 1)),
        org_id TEXT,
        user_id TEXT,
        changed_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX agent_session_mode_changes_session_seq ON agent_session_mode_changes (session_id, seq);
    `,
  },
  {
    version: 2,
    name: 'MCP session bindings and conversation items',
    sql: `
      CREATE TABLE agent_mcp_session_bindings (
        mcp_session_id TEXT PRIMARY KEY NOT NULL,
        agent_session_id TEXT NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
        bound_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX agent_mcp_session_bindings_agent_session ON agent_mcp_session_bindings (agent_session_id);
      CREATE TABLE agent_conversation_items (
        session_id TEXT NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        item TEXT NOT NULL CHECK (json_valid(item)),
        appended_at TEXT NOT NULL,
        PRIMARY KEY (session_id, position)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    name: 'tool call approvals',
    sql: `
      CREATE TABLE agent_tool_approvals (
        id TEXT PRIMARY KEY NOT NULL,
        session_id TEXT REFERENCES agent_sessions (id) ON DELETE CASCADE,
        tool_name TEXT NOT NULL,
        arguments TEXT NOT NULL CHECK (json_valid(arguments)),
        reason TEXT NOT NULL,
        requested_by TEXT,
        requested_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'executing', 'executed', 'refused', 'outcome_unknown')),
        decided_by TEXT,
        decided_at TEXT,
        note TEXT,
        claimed_by TEXT,
        claimed_at TEXT,
        result TEXT CHECK (result IS NULL OR json_valid(result)),
        completed_at TEXT
      ) STRICT;
      CREATE INDEX agent_tool_approvals_session ON agent_tool_approvals (session_id, requested_at);
      CREATE INDEX agent_tool_approvals_status ON agent_tool_approvals (status, requested_at);
    `,
  },
  {
    version: 4,
    name: 'MCP tasks',
    sql: `
      CREATE TABLE agent_mcp_tasks (
        id TEXT PRIMARY KEY NOT NULL,
        owner TEXT,
        tool_name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
        status_message TEXT,
        result TEXT CHECK (result IS NULL OR json_valid(result)),
        error TEXT CHECK (error IS NULL OR json_valid(error)),
        input_requests TEXT CHECK (input_requests IS NULL OR json_valid(input_requests)),
        input_responses TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(input_responses)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1
      ) STRICT;
      CREATE INDEX agent_mcp_tasks_owner ON agent_mcp_tasks (owner, created_at);
      CREATE INDEX agent_mcp_tasks_status ON agent_mcp_tasks (status, heartbeat_at);
      CREATE INDEX agent_mcp_tasks_expires ON agent_mcp_tasks (expires_at);
    `,
  },
  {
    version: 5,
    name: 'MCP task cancel requests',
    // A cancel that arrives at a host not running the task is recorded here; the running host records how it ended.
    sql: `
      ALTER TABLE agent_mcp_tasks ADD COLUMN cancel_requested_at TEXT;
    `,
  },
  {
    version: 6,
    name: 'MCP session last use and closing',
    sql: `
      ALTER TABLE agent_mcp_session_bindings ADD COLUMN last_used_at TEXT;
      ALTER TABLE agent_mcp_session_bindings ADD COLUMN closed_at TEXT;
      ALTER TABLE agent_mcp_session_bindings ADD COLUMN touches INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 7,
    name: 'session owners',
    // The principal that created the session. Sessions from before it keep NULL: owned by no one.
    sql: `
      ALTER TABLE agent_sessions ADD COLUMN owner_id TEXT;
    `,
  },
  {
    version: 8,
    name: 'audit trail',
    // No foreign key to the sessions: a record outlives its session. AUTOINCREMENT: a pruned seq is never
    // given out again, so a page cursor and a record id always mean the same record.
    sql: `
      CREATE TABLE agent_audit_records (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('tool_call', 'approval_decision', 'mode_change')),
        principal TEXT,
        session_id TEXT,
        tool_name TEXT NOT NULL,
        arguments_hash TEXT,
        outcome TEXT NOT NULL,
        duration_ms INTEGER,
        trace_id TEXT,
        approval_id TEXT,
        decision TEXT CHECK (decision IS NULL OR decision IN ('approve', 'deny')),
        from_mode TEXT,
        to_mode TEXT
      ) STRICT;
      CREATE INDEX agent_audit_records_at ON agent_audit_records (at);
      CREATE INDEX agent_audit_records_tool ON agent_audit_records (tool_name, seq);
      CREATE INDEX agent_audit_records_principal ON agent_audit_records (principal, seq);
      CREATE INDEX agent_audit_records_session ON agent_audit_records (session_id, seq);
    `,
  },
  {
    version: 9,
    name: 'approval trace context',
    // The asking call's W3C traceparent, so the span of a decision or an execution on another host links
    // to it. Approvals from before it keep NULL: nothing to link to.
    sql: `
      ALTER TABLE agent_tool_approvals ADD COLUMN traceparent TEXT;
    `,
  },
];
assertMigrationSequence('SQLite', SQLITE_MIGRATIONS);

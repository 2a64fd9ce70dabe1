import { assertMigrationSequence, type Migration } from '../internal/migrations.js';

export interface PostgresMigration extends Migration {
  /** The step's SQL, given the quoted schema that holds the tables (e.g. `"public"`). */
  readonly sql: (schema: string) => string;
}

/**
 * The PostgreSQL schema, step by step. Released steps are frozen: change the schema by adding a step.
 * Times come from `clock_timestamp()`, read after the row lock was granted, not `now()` (the start of the
 * transaction), so a history row's time never precedes the commit of the change before it.
 */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'sessions and mode history',
    sql: (s) => `
      CREATE TABLE ${s}.agent_sessions (
        id text PRIMARY KEY,
        mode text NOT NULL,
        org_id text,
        user_id text,
        parent_id text REFERENCES ${s}.agent_sessions (id),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX agent_sessions_parent_id ON ${s}.agent_sessions (parent_id);
      CREATE TABLE ${s}.agent_session_mode_changes (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id text NOT NULL REFERENCES ${s}.agent_sessions (id) ON DELETE CASCADE,
        from_mode text NOT NULL,
        to_mode text NOT NULL,
        reason text NOT NULL,
        branch boolean NOT NULL,
        org_id text,
        user_id text,
        changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX agent_session_mode_changes_session_seq ON ${s}.agent_session_mode_changes (session_id, seq);
    `,
  },
  {
    version: 2,
    name: 'MCP session bindings and conversation items',
    sql: (s) => `
      CREATE TABLE ${s}.agent_mcp_session_bindings (
        mcp_session_id text PRIMARY KEY,
        agent_session_id text NOT NULL REFERENCES ${s}.agent_sessions (id) ON DELETE CASCADE,
        bound_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX agent_mcp_session_bindings_agent_session ON ${s}.agent_mcp_session_bindings (agent_session_id);
      CREATE TABLE ${s}.agent_conversation_items (
        session_id text NOT NULL REFERENCES ${s}.agent_sessions (id) ON DELETE CASCADE,
        position bigint NOT NULL,
        item json NOT NULL,
        appended_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (session_id, position)
      );
    `,
  },
  {
    version: 3,
    name: 'tool call approvals',
    sql: (s) => `
      CREATE TABLE ${s}.agent_tool_approvals (
        id text PRIMARY KEY,
        session_id text REFERENCES ${s}.agent_sessions (id) ON DELETE CASCADE,
        tool_name text NOT NULL,
        arguments text NOT NULL,
        reason text NOT NULL,
        requested_by text,
        requested_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'executing', 'executed', 'refused', 'outcome_unknown')),
        decided_by text,
        decided_at timestamptz,
        note text,
        claimed_by text,
        claimed_at timestamptz,
        result jsonb,
        completed_at timestamptz
      );
      CREATE INDEX agent_tool_approvals_session ON ${s}.agent_tool_approvals (session_id, requested_at);
      CREATE INDEX agent_tool_approvals_status ON ${s}.agent_tool_approvals (status, requested_at);
    `,
  },
  {
    version: 4,
    name: 'MCP tasks',
    sql: (s) => `
      CREATE TABLE ${s}.agent_mcp_tasks (
        id text PRIMARY KEY,
        owner text,
        tool_name text NOT NULL,
        status text NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
        status_message text,
        result jsonb,
        error jsonb,
        input_requests jsonb,
        input_responses jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz NOT NULL,
        version bigint NOT NULL DEFAULT 1
      );
      CREATE INDEX agent_mcp_tasks_owner ON ${s}.agent_mcp_tasks (owner, created_at);
      CREATE INDEX agent_mcp_tasks_status ON ${s}.agent_mcp_tasks (status, heartbeat_at);
      CREATE INDEX agent_mcp_tasks_expires ON ${s}.agent_mcp_tasks (expires_at);
    `,
  },
  {
    version: 5,
    name: 'MCP task cancel requests',
    // A cancel that arrives at a host not running the task is recorded here; the running host records how it ended.
    sql: (s) => `
      ALTER TABLE ${s}.agent_mcp_tasks ADD COLUMN cancel_requested_at timestamptz;
    `,
  },
  {
    version: 6,
    name: 'MCP session last use and closing',
    sql: (s) => `
      ALTER TABLE ${s}.agent_mcp_session_bindings
        ADD COLUMN last_used_at timestamptz,
        ADD COLUMN closed_at timestamptz,
        ADD COLUMN touches bigint NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 7,
    name: 'session owners',
    // The principal that created the session. Sessions from before it keep NULL: owned by no one.
    // A nullable column without a default: PostgreSQL adds it without rewriting the table.
    sql: (s) => `
      ALTER TABLE ${s}.agent_sessions ADD COLUMN owner_id text;
    `,
  },
  {
    version: 8,
    name: 'audit trail',
    // No foreign key to the sessions: a record outlives its session.
    sql: (s) => `
      CREATE TABLE ${s}.agent_audit_records (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT clock_timestamp(),
        kind text NOT NULL CHECK (kind IN ('tool_call', 'approval_decision', 'mode_change')),
        principal text,
        session_id text,
        tool_name text NOT NULL,
        arguments_hash text,
        outcome text NOT NULL,
        duration_ms bigint,
        trace_id text,
        approval_id text,
        decision text CHECK (decision IS NULL OR decision IN ('approve', 'deny')),
        from_mode text,
        to_mode text
      );
      CREATE INDEX agent_audit_records_at ON ${s}.agent_audit_records (at);
      CREATE INDEX agent_audit_records_tool ON ${s}.agent_audit_records (tool_name, seq);
      CREATE INDEX agent_audit_records_principal ON ${s}.agent_audit_records (principal, seq);
      CREATE INDEX agent_audit_records_session ON ${s}.agent_audit_records (session_id, seq);
    `,
  },
  {
    version: 9,
    name: 'approval trace context',
    // The asking call's W3C traceparent, so the span of a decision or an execution on another host links
    // to it. Approvals from before it keep NULL. A nullable column without a default: no table rewrite.
    sql: (s) => `
      ALTER TABLE ${s}.agent_tool_approvals ADD COLUMN traceparent text;
    `,
  },
];
assertMigrationSequence('PostgreSQL', POSTGRES_MIGRATIONS);

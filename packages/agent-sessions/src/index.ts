/**
 * @aptix/agent-sessions: the session manager interface and its types. Everything exported here is
 * public API. This entry loads no database driver, so a tool can import it freely: the stores are on
 * the `./sqlite` and `./postgres` subpaths, and `./open` picks one by URL, loading its driver only then.
 */
export type {
  AgentSession,
  AgentSessionManager,
  AgentSessionStore,
  CreateSessionInput,
  HistoryPageRequest,
  McpSessionState,
  ModeChange,
  ModeDirectory,
  PostgresTimeouts,
  SessionHead,
  SessionPage,
  SessionStoreLimits,
  SessionStoreLogger,
  SetSessionModeOptions,
  SetSessionModeResult,
} from './types.js';
export { SessionStoreError, SessionStoreErrorCode } from './errors.js';
export {
  APPROVAL_NOTE_MAX_LENGTH,
  type ApprovalCompletion,
  type ApprovalDecisionOutcome,
  type ApprovalFilter,
  type ApprovalStatus,
  type ApprovalStore,
  type NewToolApproval,
  type ToolApproval,
} from './approvals.js';
export {
  AUDIT_KINDS,
  AUDIT_OUTCOME_OK,
  AUDIT_PAGE_MAX,
  type AuditFilter,
  type AuditKind,
  type AuditPage,
  type AuditRecord,
  type AuditRetention,
  type AuditStore,
  type NewAuditRecord,
} from './audit.js';
export {
  MCP_TASK_VALUE_MAX_BYTES,
  OPEN_TASK_STATUSES,
  type McpTaskChange,
  type McpTaskRecord,
  type McpTaskStatus,
  type McpTaskStore,
  type NewMcpTask,
} from './tasks.js';

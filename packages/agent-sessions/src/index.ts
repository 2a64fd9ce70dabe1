/**
 * @aptix/agent-sessions: the session manager interface and its types. Everything exported here is
 * public API. The stores are on subpaths, so a tool can import this entry without a database driver:
 * `@aptix/agent-sessions/sqlite` and `@aptix/agent-sessions/postgres`.
 */
export type { AgentSession, AgentSessionManager, CreateSessionInput, ModeChange, ModeDirectory, SetSessionModeOptions, SetSessionModeResult } from './types.js';

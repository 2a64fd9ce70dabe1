import type { ClientCapabilities, LoggingLevel, Server } from '@modelcontextprotocol/server';
import type { LevelLogger } from '@aptix/tool-contract';

/**
 * Which agent session an MCP server instance works in, and which mode's tools it lists.
 *
 * - A 2025-era MCP session is bound to one agent session: `tools/list` gives that session's current
 *   mode, read from the store on every request, and a mode change announces `list_changed`.
 * - A 2026-07-28 request is stateless: `tools/list` is a function of the request (the endpoint's
 *   `listMode`), never of earlier calls. Its calls run in the agent session the request names
 *   explicitly (`agentSessionId`), or in none; either way a tool outside the mode is refused.
 */
export interface McpScope {
  readonly era: 'legacy' | 'modern';
  /** The agent session calls run in. Mutable: a first `agent_change_mode` without one creates it, a branch moves it. */
  agentSessionId: string | undefined;
  /** 2026-07-28: the mode this endpoint lists (and, without a session, allows). */
  readonly listMode?: string;
  /**
   * The endpoint also offers aptix_find_tools and aptix_call_tool (see discovery.ts): `/mcp` and
   * `aptix mcp` do; a mode's own URL, which pins that mode, does not.
   */
  readonly discovery?: boolean;
  /** Aborts the session's call when a `notifications/cancelled` for it arrives on another request. */
  readonly cancel?: AbortSignal;
  /** 2025 sessions: the level `logging/setLevel` chose (kept by the caller across requests). */
  logLevel?: LoggingLevel;
  /**
   * 2025 sessions: the host's tool revision when the session last listed the tools (kept by the caller
   * across requests). When tools changed since (a bridged MCP server added or removed some), the next
   * request's stream carries `notifications/tools/list_changed`.
   */
  toolsRevision?: number;
  /**
   * 2025 sessions: the host's prompt (resource) revision when the session last listed them (kept by
   * the caller across requests). When a package changed them since, the next request's stream carries
   * `notifications/prompts/list_changed` (`resources/list_changed`); see unit-notifications.ts.
   */
  promptsRevision?: number;
  resourcesRevision?: number;
  /**
   * The server instance lives as long as its connection (stdio): it announces `list_changed` the
   * moment the tools change, rather than on the next request.
   */
  readonly longLived?: boolean;
  /** Over HTTP, the request's logger (it carries the request id): the calls' log lines, the tools' included, go there. */
  readonly log?: LevelLogger;
  /** Called after the scope moved to another agent session (a branch, or a session made on first use). */
  onAgentSession?(agentSessionId: string): void | Promise<void>;
  /** Over HTTP, the name of the API key that authenticated the request: who asked, and who decided an approval asked over MCP. */
  readonly actor?: string;
  /** 2025 sessions over HTTP: the capabilities the client declared on `initialize` (a per-request server never sees it). */
  readonly clientCapabilities?: ClientCapabilities;
  /**
   * 2025 sessions over HTTP: the session's one channel for a question to the user (see ElicitationRelay).
   * Without it (stdio: one server for the connection) a question may always be asked.
   */
  readonly questions?: { hold(server: Server): boolean; release(server: Server): void };
  /** 2025 sessions over HTTP: the MCP session's id (its resource subscriptions are kept by it). */
  readonly mcpSessionId?: string;
}

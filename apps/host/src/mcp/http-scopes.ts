import type { FastifyReply } from 'fastify';
import type { ClientCapabilities, Implementation, LoggingLevel, Server } from '@modelcontextprotocol/server';
import type { LevelLogger } from '@aptix/tool-contract';
import type { ElicitationRelay } from './elicitation-relay.js';
import type { LegacySession, LegacySessions } from './legacy-sessions.js';
import type { McpScope } from './mcp-scope.js';
import type { FastLaneOptions } from './fast-lane.js';
import type { ResumableAnswer } from './lane-answer.js';
import type { ResumableStreams } from './resumable-streams.js';
import { SSE_HEADERS } from './sse-events.js';
import { cancelledByClient } from './lazy-abort.js';

/** The header that names an agent session: sent by a client to continue one, and answered by the host. */
export const AGENT_SESSION_HEADER = 'x-aptix-session-id';

/** Who asks over HTTP: the request's logger (it carries the request id) and the API key's name. */
export interface Caller {
  readonly log?: LevelLogger;
  readonly actor?: string;
}

/**
 * The scope of one request in a 2025 session over HTTP. A class, not an object literal with closures:
 * one is made per request (the fast lane's calls included), and its handlers are methods.
 */
export class SessionScope implements McpScope {
  readonly era = 'legacy' as const;
  agentSessionId: string | undefined;
  logLevel: LoggingLevel | undefined;
  toolsRevision: number | undefined;
  readonly clientCapabilities: ClientCapabilities | undefined;
  readonly log: LevelLogger | undefined;
  readonly actor: string | undefined;
  /** The request came to `/mcp`, which offers aptix_find_tools and aptix_call_tool (a mode's own URL does not). */
  readonly discovery: boolean;
  /** Aborts the session's call when a `notifications/cancelled` for it arrives on another request (the SDK path). */
  readonly cancel: AbortSignal | undefined;
  readonly #session: LegacySession;
  readonly #sessions: LegacySessions;
  readonly #relay: ElicitationRelay;

  constructor(
    session: LegacySession,
    sessions: LegacySessions,
    relay: ElicitationRelay,
    caller: Caller,
    discovery: boolean,
    cancel?: AbortSignal,
  ) {
    this.agentSessionId = session.agentSessionId;
    this.discovery = discovery;
    this.logLevel = session.logLevel;
    this.toolsRevision = session.toolsRevision;
    this.clientCapabilities = session.clientCapabilities;
    this.log = caller.log;
    this.actor = caller.actor;
    this.cancel = cancel;
    this.#session = session;
    this.#sessions = sessions;
    this.#relay = relay;
  }

  /** The call moved the session to another agent session (a branch): every later request of the MCP session follows it. */
  onAgentSession(agentSessionId: string): Promise<void> {
    return this.#sessions.rebind(this.#session, agentSessionId);
  }

  /**
   * The prompt and resource revisions the session last listed (see unit-notifications.ts): read and
   * written on the session itself, since an answer streamed by the SDK may outlive keep().
   */
  get promptsRevision(): number | undefined {
    return this.#session.promptsRevision;
  }

  set promptsRevision(revision: number | undefined) {
    this.#session.promptsRevision = revision;
  }

  get resourcesRevision(): number | undefined {
    return this.#session.resourcesRevision;
  }

  set resourcesRevision(revision: number | undefined) {
    this.#session.resourcesRevision = revision;
  }

  /** The MCP session's id: its resource subscriptions are kept by it (see unit-subscriptions.ts). */
  get mcpSessionId(): string {
    return this.#session.id;
  }

  /** The session's one channel for a question to the user (see ElicitationRelay). */
  get questions(): { hold(server: Server): boolean; release(server: Server): void } {
    const id = this.#session.id;
    const relay = this.#relay;
    return { hold: (server) => relay.hold(id, server), release: (server) => relay.release(id, server) };
  }

  /**
   * The headers of an event-stream answer: the SSE ones and the agent session's, kept on the session
   * while it stays bound to that agent session (a branch rebinds it), so an answer spreads no objects.
   */
  sseHeaders(): Readonly<Record<string, string>> {
    const kept = this.#session.sseHeaders;
    if (kept !== undefined && kept[AGENT_SESSION_HEADER] === this.agentSessionId) return kept;
    return (this.#session.sseHeaders = Object.freeze({ ...SSE_HEADERS, ...agentHeader(this) }));
  }

  /** Keeps what the request changed (the log level, the revisions it listed) on the session, for its next requests. */
  keep(): void {
    if (this.logLevel !== undefined) this.#session.logLevel = this.logLevel;
    if (this.toolsRevision !== undefined) this.#session.toolsRevision = this.toolsRevision;
  }
}

/**
 * The scope of a 2026-07-28 request: the endpoint's mode, the agent session the request names
 * (`X-Aptix-Session-Id`), and whether the endpoint offers aptix_find_tools and aptix_call_tool (`/mcp` does).
 */
export function modernScope(
  agentSession: string | null | undefined,
  listMode: string,
  caller: Caller,
  discovery: boolean,
): McpScope {
  const handle = agentSession?.trim();
  return {
    era: 'modern',
    agentSessionId: handle || undefined,
    listMode,
    log: caller.log,
    actor: caller.actor,
    discovery,
  };
}

/** The response header naming the agent session a request's calls ran in, when there is one. */
export const agentHeader = (scope: McpScope): Record<string, string> =>
  scope.agentSessionId ? { [AGENT_SESSION_HEADER]: scope.agentSessionId } : {};

/**
 * A fast-lane request's options: one object, its parts methods rather than closures made per request.
 * One class for every request, resumable or not (a subclass per kind cost a derived constructor per call).
 */
export class LaneOptions implements FastLaneOptions {
  constructor(
    readonly serverInfo: Implementation,
    readonly listCacheHint: boolean,
    readonly cancel: { readonly signal: AbortSignal },
    private readonly scope: McpScope,
    /** 2025-11-25 sessions: the streams the answer is recorded in, as a resumable stream of session `sessionId` (see resumable-streams.ts). */
    private readonly streams?: ResumableStreams,
    private readonly sessionId = '',
  ) {}

  headers(): Record<string, string> {
    return agentHeader(this.scope);
  }

  cancelledByClient(): boolean {
    return cancelledByClient.has(this.cancel);
  }

  sseHeaders(): Readonly<Record<string, string>> {
    return this.scope instanceof SessionScope
      ? this.scope.sseHeaders()
      : { ...SSE_HEADERS, ...agentHeader(this.scope) };
  }

  resumable(reply: FastifyReply): ResumableAnswer | undefined {
    return this.streams?.answer(this.sessionId, reply, this);
  }
}

import { randomUUID } from 'node:crypto';
import type { ClientCapabilities, LoggingLevel } from '@modelcontextprotocol/server';
import type { AgentSessionStore } from '@aptix/agent-sessions';

/** A 2025-era MCP session as this host knows it: little more than the agent session it is bound to. */
export interface LegacySession {
  readonly id: string;
  agentSessionId: string;
  /** The level `logging/setLevel` chose; kept on this host only. */
  logLevel?: LoggingLevel;
  /** What the host reads of the capabilities the client declared on `initialize` (see {@link keptCapabilities}); kept on the host that received it (an adopted session has none). */
  clientCapabilities?: ClientCapabilities;
  /** The host's tool revision when this session last listed the tools (see McpScope.toolsRevision). */
  toolsRevision?: number;
  lastSeen: number;
}

export interface LegacySessionLimits {
  /** A session unused for this long is forgotten: its id then answers 404 on this host. */
  readonly idleMs: number;
  /** At most this many sessions are live on this host; a new one over the cap is refused. */
  readonly maxSessions: number;
}

/**
 * What a session keeps of the capabilities a client declares on `initialize`: only what the host reads,
 * whether and how the client can be asked a question (elicitation: form, url, form defaults). A client
 * may declare anything up to the body limit, and the rest was kept for the session's life: 200 sessions
 * declaring 900 KB of `experimental` each held 230 MiB, and the session cap would have allowed 9 GiB.
 */
export function keptCapabilities(declared: unknown): ClientCapabilities | undefined {
  if (typeof declared !== 'object' || declared === null) return undefined;
  const elicitation = (declared as { elicitation?: unknown }).elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return {};
  const { form, url } = elicitation as { form?: { applyDefaults?: unknown }; url?: unknown };
  const applyDefaults = typeof form === 'object' && form !== null && form.applyDefaults === true;
  return { elicitation: { ...(form === undefined ? {} : { form: applyDefaults ? { applyDefaults: true } : {} }), ...(url === undefined ? {} : { url: {} }) } };
}

/** Raised when the cap on live sessions is reached. */
export class SessionCapError extends Error {
  override readonly name = 'SessionCapError';
}

/**
 * The 2025-era MCP sessions of one host. A session holds no transport or server between requests
 * (each request is served by a fresh server instance), so an open session costs one small record.
 * The binding to the agent session is stored, so a session opened on another host that shares the
 * store, or before a restart, is adopted on its first request here; no sticky routing is needed.
 * Idle sessions are swept on every open and lookup, oldest first (the map is kept in last-use order),
 * and by a timer set for the moment the oldest one would expire: sessions abandoned on a host that then
 * gets no request (the Inspector and LangChain never close theirs) are freed too, not kept until traffic returns.
 */
export class LegacySessions {
  readonly #live = new Map<string, LegacySession>();
  /** Ids this host closed or expired, so a stored binding does not bring them back here. Bounded like the live map. */
  readonly #ended = new Set<string>();
  /** Fires when the oldest live session would expire; none while no session is live. */
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Pick<AgentSessionStore, 'bindMcpSession' | 'getMcpBinding'>,
    readonly limits: LegacySessionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#live.size;
  }

  /** Opens a session bound to `agentSessionId`. Throws {@link SessionCapError} when the host is full. */
  async open(agentSessionId: string): Promise<LegacySession> {
    this.#admit();
    const session: LegacySession = { id: randomUUID(), agentSessionId, lastSeen: this.now() };
    await this.store.bindMcpSession(session.id, agentSessionId);
    this.#add(session);
    return session;
  }

  /** Throws {@link SessionCapError} when a new session would go over the cap. */
  #admit(): void {
    this.sweep();
    if (this.#live.size >= this.limits.maxSessions) {
      throw new SessionCapError(this.capMessage());
    }
  }

  capMessage(): string {
    return `This host already serves ${this.limits.maxSessions} MCP sessions, its limit. Retry later, close sessions you no longer use (DELETE /mcp), or use the stateless 2026-07-28 revision, which needs no session.`;
  }

  /** The live session with this id, adopted from the store when another host (or this one before a restart) opened it. */
  async find(id: string): Promise<LegacySession | undefined> {
    this.sweep();
    const known = this.#live.get(id);
    if (known !== undefined) {
      this.#touch(known);
      return known;
    }
    if (this.#ended.has(id)) return undefined;
    const agentSessionId = await this.store.getMcpBinding(id);
    if (agentSessionId === undefined) return undefined;
    this.#admit();
    const adopted: LegacySession = { id, agentSessionId, lastSeen: this.now() };
    this.#add(adopted);
    return adopted;
  }

  /** Moves a session to another agent session (after a branch). */
  async rebind(session: LegacySession, agentSessionId: string): Promise<void> {
    await this.store.bindMcpSession(session.id, agentSessionId);
    session.agentSessionId = agentSessionId;
  }

  /** Ends a session on this host; true when it was live. */
  close(id: string): boolean {
    const had = this.#live.delete(id);
    this.#remember(id);
    return had;
  }

  /** Forgets every session idle longer than the limit. */
  sweep(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const session of this.#live.values()) {
      if (session.lastSeen > cutoff) break;
      this.#live.delete(session.id);
      this.#remember(session.id);
    }
  }

  /** Forgets every session and stops the expiry timer (the host is stopping). */
  clear(): void {
    this.#live.clear();
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #add(session: LegacySession): void {
    this.#live.set(session.id, session);
    this.#schedule();
  }

  /** Sets the timer for the oldest live session's expiry, unless one is set already. */
  #schedule(): void {
    if (this.#timer !== undefined) return;
    const oldest = this.#live.values().next().value as LegacySession | undefined;
    if (oldest === undefined) return;
    // Never more often than once a second, so a host with sessions expiring one by one stays quiet;
    // never past what setTimeout takes (a longer delay would fire at once, and again, forever).
    const delay = Math.min(2 ** 31 - 1, Math.max(1000, oldest.lastSeen + this.limits.idleMs - this.now() + 1));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.sweep();
      this.#schedule();
    }, delay);
    this.#timer.unref();
  }

  #touch(session: LegacySession): void {
    session.lastSeen = this.now();
    this.#live.delete(session.id);
    this.#live.set(session.id, session);
  }

  #remember(id: string): void {
    this.#ended.add(id);
    if (this.#ended.size > this.limits.maxSessions) this.#ended.delete(this.#ended.values().next().value as string);
  }
}

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
  /** The same for prompts and resources (see McpScope.promptsRevision). */
  promptsRevision?: number;
  resourcesRevision?: number;
  /** The headers of its event-stream answers (they name the agent session), made once and reused by every answer while the binding holds. */
  sseHeaders?: Readonly<Record<string, string>>;
  lastSeen: number;
  /** When this host last marked the session used in the store (this host's clock). */
  storedAt: number;
  /** The store's count of marks as this host last wrote or read it: a close for expiry applies only if no other host marked it since. */
  touches: number;
}

export interface LegacySessionLimits {
  /** A session unused for this long expires: its id then answers 404 on this host and, once recorded, on every host. */
  readonly idleMs: number;
  /** At most this many sessions are live on this host; a new one over the cap is refused. */
  readonly maxSessions: number;
}

/**
 * What a session keeps of the capabilities a client declares on `initialize`: only what the host reads,
 * whether and how the client can be asked a question (elicitation: form, url, form defaults), and
 * whether it can be sent sampling and roots requests. A client
 * may declare anything up to the body limit, and the rest was kept for the session's life: 200 sessions
 * declaring 900 KB of `experimental` each held 230 MiB, and the session cap would have allowed 9 GiB.
 */
export function keptCapabilities(declared: unknown): ClientCapabilities | undefined {
  if (typeof declared !== 'object' || declared === null) return undefined;
  const { elicitation, sampling, roots } = declared as { elicitation?: unknown; sampling?: unknown; roots?: unknown };
  const isObject = (value: unknown) => typeof value === 'object' && value !== null;
  // Whether the client can be sent sampling/createMessage and roots/list: the flags only, never their contents.
  const kept: ClientCapabilities = {
    ...(isObject(sampling) ? { sampling: {} } : {}),
    ...(isObject(roots) ? { roots: {} } : {}),
  };
  if (!isObject(elicitation)) return kept;
  const { form, url } = elicitation as { form?: { applyDefaults?: unknown }; url?: unknown };
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  const applyDefaults = typeof form === 'object' && form !== null && form.applyDefaults === true;
  return {
    ...kept,
    elicitation: {
      ...(form === undefined ? {} : { form: applyDefaults ? { applyDefaults: true } : {} }),
      ...(url === undefined ? {} : { url: {} }),
    },
  };
}

/** Raised when the cap on live sessions is reached. */
export class SessionCapError extends Error {
  override readonly name = 'SessionCapError';
}

/** The store operations the session table uses. */
export type LegacySessionStore = Pick<
  AgentSessionStore,
  'bindMcpSession' | 'getMcpSession' | 'touchMcpSession' | 'closeMcpSession'
>;

/**
 * How often a session in use is marked used in the store: at most every quarter of the idle limit, and
 * at least every minute. A busy session costs a write that often, not one per request; in exchange the
 * store's last use lags the real one by up to this much, and a close made through another host reaches
 * a host that serves the session from memory at its next mark.
 */
export function storeEveryMs(idleMs: number): number {
  return Math.max(1, Math.min(Math.floor(idleMs / 4), 60_000));
}

/**
 * The 2025-era MCP sessions of one host. A session holds no transport or server between requests
 * (each request is served by a fresh server instance), so an open session costs one small record.
 *
 * The store holds each session's binding to its agent session, when it was last used and whether it
 * was closed, so every host that shares the store (and this one after a restart) judges a session alike:
 * - a live session is adopted on its first request here; no sticky routing is needed;
 * - a `DELETE` closes it in the store; an expiry this host sees closes it there too, unless another host
 *   marked it used since (then the session is only forgotten here);
 * - a session the store shows unused for longer than the idle limit plus {@link storeEveryMs} (the
 *   most the stored last use can lag) is refused and closed, whichever host (or restart) finds it.
 * The binding is kept after a close, so a refusal can name the agent session to continue in.
 *
 * Idle sessions are swept on every open and lookup, oldest first (the map is kept in last-use order),
 * and by a timer set for the moment the oldest one would expire: sessions abandoned on a host that then
 * gets no request (the Inspector and LangChain never close theirs) are freed too, not kept until traffic returns.
 */
export class LegacySessions {
  readonly #live = new Map<string, LegacySession>();
  /** Ids this host closed or expired, refused without asking the store. Bounded like the live map. */
  readonly #ended = new Set<string>();
  /** Fires when the oldest live session would expire; none while no session is live. */
  #timer: NodeJS.Timeout | undefined;
  readonly #storeEvery: number;
  /** Expired sessions waiting to be closed in the store, one write at a time so a mass expiry never blocks the host. */
  readonly #toClose: LegacySession[] = [];
  #closing = false;

  constructor(
    private readonly store: LegacySessionStore,
    readonly limits: LegacySessionLimits,
    private readonly now: () => number = Date.now,
    /** Told when recording an expiry in the store failed (the store's own rule still refuses the session later). */
    private readonly onStoreError: (error: unknown) => void = () => {},
  ) {
    this.#storeEvery = storeEveryMs(limits.idleMs);
  }

  get size(): number {
    return this.#live.size;
  }

  /** Opens a session bound to `agentSessionId`. Throws {@link SessionCapError} when the host is full. */
  async open(agentSessionId: string): Promise<LegacySession> {
    this.#admit();
    const now = this.now();
    const session: LegacySession = { id: randomUUID(), agentSessionId, lastSeen: now, storedAt: now, touches: 0 };
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
    return (
      `This host already serves ${this.limits.maxSessions} MCP sessions, its limit. Retry later, ` +
      `close sessions you no longer use (DELETE /mcp), or use the stateless 2026-07-28 revision, ` +
      `which needs no session.`
    );
  }

  /**
   * The live session with this id when this host knows it and its mark in the store is not due (the
   * common request of a busy session), marked used here; otherwise undefined, and {@link find} decides.
   * No promise: the fast lane answers most requests of a session without one.
   */
  findLive(id: string): LegacySession | undefined {
    this.sweep();
    const known = this.#live.get(id);
    if (known === undefined || this.now() - known.storedAt >= this.#storeEvery) return undefined;
    this.#touch(known);
    return known;
  }

  /**
   * The live session with this id, adopted from the store when another host (or this one before a
   * restart) opened it; `undefined` when it is unknown, closed or expired, here or on any host.
   */
  async find(id: string): Promise<LegacySession | undefined> {
    this.sweep();
    const known = this.#live.get(id);
    if (known !== undefined) {
      this.#touch(known);
      if (known.lastSeen - known.storedAt < this.#storeEvery) return known;
      known.storedAt = known.lastSeen;
      const touches = await this.store.touchMcpSession(id);
      if (touches === undefined) {
        // Closed through another host since this one last looked.
        this.#live.delete(id);
        this.#remember(id);
        return undefined;
      }
      known.touches = touches;
      return known;
    }
    if (this.#ended.has(id)) return undefined;
    const state = await this.store.getMcpSession(id);
    if (state === undefined) return undefined;
    if (state.closed) {
      this.#remember(id);
      return undefined;
    }
    if (state.idleMs > this.limits.idleMs + this.#storeEvery) {
      // Unused for longer than the limit even if its last use came just before a mark was due.
      this.#remember(id);
      await this.store.closeMcpSession(id, state.touches);
      return undefined;
    }
    this.#admit();
    // Adopting marks it used, so a host that served it before and now sees it idle does not close it.
    const touches = await this.store.touchMcpSession(id);
    if (touches === undefined) {
      this.#remember(id);
      return undefined;
    }
    const now = this.now();
    const adopted: LegacySession = { id, agentSessionId: state.agentSessionId, lastSeen: now, storedAt: now, touches };
    this.#add(adopted);
    return adopted;
  }

  /** Moves a session to another agent session (after a branch). */
  async rebind(session: LegacySession, agentSessionId: string): Promise<void> {
    await this.store.bindMcpSession(session.id, agentSessionId);
    session.agentSessionId = agentSessionId;
    // The rebind counted as a mark (a mark by another host meanwhile makes an expiry's close miss, the safe side).
    session.storedAt = this.now();
    session.touches += 1;
  }

  /** Ends a session for every host sharing the store (DELETE); true when it was live here. */
  async close(id: string): Promise<boolean> {
    const had = this.#live.delete(id);
    this.#remember(id);
    await this.store.closeMcpSession(id);
    return had;
  }

  /** Forgets every session idle longer than the limit, and records each expiry in the store. */
  sweep(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const session of this.#live.values()) {
      if (session.lastSeen > cutoff) break;
      this.#live.delete(session.id);
      this.#remember(session.id);
      this.#toClose.push(session);
    }
    if (this.#toClose.length > 0 && !this.#closing) void this.#closeExpired();
  }

  async #closeExpired(): Promise<void> {
    this.#closing = true;
    try {
      for (let session = this.#toClose.shift(); session !== undefined; session = this.#toClose.shift()) {
        try {
          // Only if no other host marked it used since: a session served by round-robin is idle here, not expired.
          if (!(await this.store.closeMcpSession(session.id, session.touches))) this.#ended.delete(session.id);
        } catch (error) {
          this.onStoreError(error);
        }
      }
    } finally {
      this.#closing = false;
    }
  }

  /** Forgets every session and stops the expiry timer (the host is stopping; open sessions stay open in the store). */
  clear(): void {
    this.#live.clear();
    this.#toClose.length = 0;
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

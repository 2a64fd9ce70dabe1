import type { Server, ServerContext } from '@modelcontextprotocol/server';
import type { HostUnits } from '../units/host-units.js';
import type { McpScope } from './mcp-scope.js';

/** The most resources one 2025 MCP session may subscribe to: each may start a watch in a package. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 64;
/** A session's subscriptions end this long after its last request (the host's MCP sessions expire sooner by default). */
const IDLE_MS = 3_600_000;

interface SessionSubscriptions {
  readonly releases: Map<string, () => void>;
  /** Subscribed URIs that changed since the session's last request. */
  readonly updated: Set<string>;
  lastSeen: number;
}

/** The 2025 subscriptions of one scope: subscribe, unsubscribe, and the updates to send on this request's stream. */
export interface LegacySubscriptions {
  /** Starts one; returns why it cannot be, or undefined. */
  subscribe(uri: string): string | undefined;
  unsubscribe(uri: string): void;
  /** Sends the updates waiting for this session on the request's stream (Streamable HTTP has no other stream here). */
  deliver(ctx: ServerContext): Promise<void>;
}

/** HTTP sessions' subscriptions, per host: each answered by a fresh server, so they live here, by MCP session id. */
const byHost = new WeakMap<HostUnits, Map<string, SessionSubscriptions>>();

function sessionsOf(units: HostUnits): Map<string, SessionSubscriptions> {
  let sessions = byHost.get(units);
  if (sessions === undefined) {
    const created = new Map<string, SessionSubscriptions>();
    byHost.set(units, (sessions = created));
    units.watches.onUpdated((uri) => {
      const ended = !units.watches.watching(uri);
      for (const session of created.values()) {
        if (!session.releases.has(uri)) continue;
        session.updated.add(uri);
        // The resource was withdrawn (see UnitWatches.refresh): the last update goes out, the subscription ends.
        if (ended) session.releases.delete(uri);
      }
    });
  }
  return sessions;
}

function endIdle(sessions: Map<string, SessionSubscriptions>, now: number): void {
  for (const [id, session] of sessions) {
    if (now - session.lastSeen < IDLE_MS) continue;
    for (const release of session.releases.values()) release();
    sessions.delete(id);
  }
}

function subscriber(units: HostUnits, session: SessionSubscriptions): LegacySubscriptions['subscribe'] {
  return (uri) => {
    if (session.releases.has(uri)) return undefined;
    if (session.releases.size >= MAX_SUBSCRIPTIONS_PER_SESSION)
      return `This session already subscribes to ${MAX_SUBSCRIPTIONS_PER_SESSION} resources, the most one may. Unsubscribe from one first.`;
    const watched = units.watches.watch(uri);
    if ('error' in watched) return watched.error;
    session.releases.set(uri, watched.release);
    return undefined;
  };
}

/**
 * The resource subscriptions of a 2025 scope. Over stdio (one server for the connection) an update is
 * sent the moment the package reports it, and the subscriptions end with the connection. Over HTTP an
 * update waits for the session's next request to one of these methods, whose stream carries it: the
 * host keeps no standalone stream (see mcp-http.ts).
 */
export function legacySubscriptions(
  units: HostUnits,
  server: Server,
  scope: McpScope,
): LegacySubscriptions | undefined {
  if (!units.subscribable) return undefined;
  if (scope.longLived === true) {
    const session: SessionSubscriptions = { releases: new Map(), updated: new Set(), lastSeen: 0 };
    const stop = units.watches.onUpdated((uri) => {
      if (!session.releases.has(uri)) return;
      server.notification({ method: 'notifications/resources/updated', params: { uri } }).catch(() => undefined);
      if (!units.watches.watching(uri)) session.releases.delete(uri); // withdrawn: the subscription ends
    });
    const closed = server.onclose;
    server.onclose = () => {
      stop();
      for (const release of session.releases.values()) release();
      session.releases.clear();
      closed?.();
    };
    return {
      subscribe: subscriber(units, session),
      unsubscribe: (uri) => {
        session.releases.get(uri)?.();
        session.releases.delete(uri);
      },
      deliver: async () => undefined,
    };
  }
  const id = scope.mcpSessionId;
  if (id === undefined) return undefined;
  const sessions = sessionsOf(units);
  const now = Date.now();
  endIdle(sessions, now);
  const existing = sessions.get(id);
  const session = existing ?? { releases: new Map<string, () => void>(), updated: new Set<string>(), lastSeen: now };
  session.lastSeen = now;
  const keep = () => {
    if (!sessions.has(id)) sessions.set(id, session);
  };
  return {
    subscribe: (uri) => {
      keep();
      return subscriber(units, session)(uri);
    },
    unsubscribe: (uri) => {
      session.releases.get(uri)?.();
      session.releases.delete(uri);
      session.updated.delete(uri);
    },
    deliver: async (ctx) => {
      if (session.updated.size === 0) return;
      const uris = [...session.updated];
      session.updated.clear();
      for (const uri of uris)
        await ctx.mcpReq.notify({ method: 'notifications/resources/updated', params: { uri } }).catch(() => undefined);
    },
  };
}

/**
 * 2026-07-28: a `subscriptions/listen` request naming `resourceSubscriptions` watches each URI the
 * scope may read and that can be subscribed to (at most {@link MAX_SUBSCRIPTIONS_PER_SESSION}), until
 * the stream closes (`signal`). The SDK's listen router sends the updates (see `notify.resourceUpdated`).
 */
export function watchListenRequest(
  units: HostUnits | undefined,
  body: unknown,
  readable: (uri: string) => Promise<boolean>,
  signal: AbortSignal,
): void {
  if (units === undefined || !units.subscribable) return;
  const message = body as { method?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } } | null;
  if (message?.method !== 'subscriptions/listen') return;
  const uris = message.params?.notifications?.resourceSubscriptions;
  if (!Array.isArray(uris)) return;
  const releases: Array<() => void> = [];
  const end = () => releases.splice(0).forEach((release) => release());
  signal.addEventListener('abort', end, { once: true });
  void (async () => {
    for (const uri of new Set(uris.slice(0, MAX_SUBSCRIPTIONS_PER_SESSION))) {
      if (typeof uri !== 'string' || signal.aborted || !(await readable(uri).catch(() => false))) continue;
      const watched = units.watches.watch(uri);
      if ('release' in watched) releases.push(watched.release);
    }
    if (signal.aborted) end();
  })();
}

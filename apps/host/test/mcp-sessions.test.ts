import { SqliteDatabase as Database } from '@aptix/agent-sessions/sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, vi } from 'vitest';
import { canElicitForm } from '../src/mcp/approval-elicitation.js';
import { keptCapabilities, LegacySessions, SessionCapError, storeEveryMs } from '../src/mcp/legacy-sessions.js';
import { clientAnswers } from '../src/mcp/tool-input.js';
import { hostForSuite } from './support.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'attacker', version: '1' } },
});

/** A store of bindings in memory, as the session table sees a store (the real stores are tested in packages/agent-sessions). */
function memoryStore(clock: () => number = Date.now) {
  const bindings = new Map<string, { agent: string; usedAt: number; closed: boolean; touches: number }>();
  return {
    bindings,
    bindMcpSession: async (mcp: string, agent: string) => {
      const held = bindings.get(mcp);
      bindings.set(mcp, {
        agent,
        usedAt: clock(),
        closed: held?.closed ?? false,
        touches: held === undefined ? 0 : held.touches + 1,
      });
    },
    getMcpSession: async (mcp: string) => {
      const held = bindings.get(mcp);
      return (
        held && {
          agentSessionId: held.agent,
          idleMs: clock() - held.usedAt,
          closed: held.closed,
          touches: held.touches,
        }
      );
    },
    touchMcpSession: async (mcp: string) => {
      const held = bindings.get(mcp);
      if (held === undefined || held.closed) return undefined;
      held.usedAt = clock();
      return ++held.touches;
    },
    closeMcpSession: async (mcp: string, ifTouches?: number) => {
      const held = bindings.get(mcp);
      if (held === undefined || held.closed || (ifTouches !== undefined && held.touches !== ifTouches)) return false;
      held.closed = true;
      return true;
    },
  };
}

describe('the 2025-era MCP session table', () => {
  it('forgets a session idle longer than the limit, and not one in use', async () => {
    let now = 0;
    const sessions = new LegacySessions(memoryStore(), { idleMs: 1000, maxSessions: 10 }, () => now);
    const idle = await sessions.open('agent-1');
    const busy = await sessions.open('agent-2');
    now = 900;
    expect(await sessions.find(busy.id)).toBe(busy);
    now = 1500;
    expect(await sessions.find(idle.id)).toBeUndefined();
    expect(await sessions.find(busy.id)).toBe(busy);
    expect(sessions.size).toBe(1);
  });

  it('refuses a new session over the cap, and makes room once one expires', async () => {
    let now = 0;
    const sessions = new LegacySessions(memoryStore(), { idleMs: 1000, maxSessions: 2 }, () => now);
    await sessions.open('a');
    await sessions.open('b');
    await expect(sessions.open('c')).rejects.toBeInstanceOf(SessionCapError);
    await expect(sessions.open('c')).rejects.toThrow(/limit.*DELETE \/mcp/);
    now = 2000;
    await expect(sessions.open('c')).resolves.toMatchObject({ agentSessionId: 'c' });
  });

  it('frees abandoned sessions when they expire, though no request comes to sweep them', async () => {
    vi.useFakeTimers();
    try {
      const sessions = new LegacySessions(memoryStore(), { idleMs: 60_000, maxSessions: 10 });
      await sessions.open('agent-1');
      vi.advanceTimersByTime(30_000);
      const later = await sessions.open('agent-2');
      vi.advanceTimersByTime(30_001);
      expect(sessions.size).toBe(1);
      vi.advanceTimersByTime(30_000);
      expect(sessions.size).toBe(0);
      // Nothing is left to expire, so nothing keeps waking the host; an expired id stays ended.
      expect(vi.getTimerCount()).toBe(0);
      expect(await sessions.find(later.id)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('never sets a timer setTimeout cannot take, whatever the idle limit', async () => {
    vi.useFakeTimers();
    try {
      const sessions = new LegacySessions(memoryStore(), { idleMs: 10 * 365 * 24 * 3600_000, maxSessions: 10 });
      await sessions.open('agent-1');
      vi.advanceTimersByTime(2 ** 31 - 2);
      expect(sessions.size).toBe(1);
      sessions.clear();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps of a client's declared capabilities only whether and how it can be asked (user, model, roots), never what else it sends", () => {
    const padding = {
      experimental: { pad: { s: 'x'.repeat(900_000) } },
      roots: { listChanged: true },
      sampling: { tools: {} },
    };
    const kept = (declared: unknown) => keptCapabilities(declared);
    expect(JSON.stringify(kept(padding)).length).toBeLessThan(100);
    expect(
      kept({ ...padding, elicitation: { form: { applyDefaults: true, junk: 'y'.repeat(900_000) }, url: { junk: 1 } } }),
    ).toEqual({ sampling: {}, roots: {}, elicitation: { form: { applyDefaults: true }, url: {} } });
    // Sampling and roots are kept as flags, never their contents; what the client can answer is the same on both.
    for (const extra of [
      {},
      { sampling: null },
      { roots: 'yes' },
      { sampling: { tools: { x: 'y'.repeat(900_000) } } },
    ]) {
      const declared = { experimental: padding.experimental, ...extra };
      expect(JSON.stringify(kept(declared)).length).toBeLessThan(100);
      expect(clientAnswers(kept(declared)), JSON.stringify(extra).slice(0, 60)).toEqual(
        clientAnswers(declared as never),
      );
    }
    // The host's decision (ask by form, or not) is the same on what is kept as on what was declared.
    for (const elicitation of [
      undefined,
      null,
      'yes',
      {},
      { form: {} },
      { url: {} },
      { form: {}, url: {} },
      { form: null },
      { form: { applyDefaults: 'no' } },
    ]) {
      const declared = { ...padding, ...(elicitation === undefined ? {} : { elicitation }) };
      expect(canElicitForm(kept(declared)), JSON.stringify(elicitation)).toBe(canElicitForm(declared as never));
    }
    expect(kept(undefined)).toBeUndefined();
    expect(kept('capabilities')).toBeUndefined();
  });

  it('adopts a session another host opened from the stored binding, but not one it closed or expired', async () => {
    const store = memoryStore();
    const sessions = new LegacySessions(store, { idleMs: 1000, maxSessions: 10 }, () => 0);
    await store.bindMcpSession('from-elsewhere', 'agent-9');
    expect(await sessions.find('from-elsewhere')).toMatchObject({ agentSessionId: 'agent-9' });
    expect(await sessions.close('from-elsewhere')).toBe(true);
    expect(await sessions.find('from-elsewhere')).toBeUndefined();
  });
});

describe('2025-era MCP sessions in a store shared by hosts (and by a host after its restart)', () => {
  const limits = { idleMs: 60_000, maxSessions: 10 };
  const every = storeEveryMs(limits.idleMs);
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  /** One store shared by hosts (each `host()` is one host's session table), on a clock the test moves. */
  const sharedStore = () => {
    const clock = { now: 0 };
    const store = memoryStore(() => clock.now);
    return { clock, store, host: () => new LegacySessions(store, limits, () => clock.now) };
  };

  it('marks a busy session used in the store at most once per interval, not on every request', async () => {
    const { clock, store, host } = sharedStore();
    const touch = vi.spyOn(store, 'touchMcpSession');
    const sessions = host();
    const session = await sessions.open('agent-1');
    for (clock.now = 0; clock.now <= 4 * every; clock.now += 1000)
      expect(await sessions.find(session.id)).toBe(session);
    expect(touch).toHaveBeenCalledTimes(4);
    expect((await store.getMcpSession(session.id))!.idleMs).toBeLessThan(every);
    sessions.clear();
  });

  it('findLive answers from memory only while no mark is due, and leaves the mark, the adoption and a close made elsewhere to find', async () => {
    const { clock, store, host } = sharedStore();
    const touch = vi.spyOn(store, 'touchMcpSession');
    const a = host();
    const b = host();
    const session = await a.open('agent-1');
    // Unknown here (opened on another host): find adopts it from the store.
    expect(b.findLive(session.id)).toBeUndefined();
    expect(a.findLive('no-such-session')).toBeUndefined();
    clock.now = every - 1;
    expect(a.findLive(session.id)).toBe(session);
    expect(touch).not.toHaveBeenCalled();
    // A mark is due: findLive steps aside, find marks it used in the store.
    clock.now = every;
    expect(a.findLive(session.id)).toBeUndefined();
    expect(await a.find(session.id)).toBe(session);
    expect(touch).toHaveBeenCalledTimes(1);
    // Closed through another host: the next due mark finds it closed, and findLive never hides that.
    await b.close(session.id);
    clock.now = 2 * every;
    expect(a.findLive(session.id)).toBeUndefined();
    expect(await a.find(session.id)).toBeUndefined();
    expect(a.findLive(session.id)).toBeUndefined();
    // An idle session expires, whichever lookup comes first.
    const idle = await a.open('agent-2');
    clock.now += limits.idleMs + 1;
    expect(a.findLive(idle.id)).toBeUndefined();
    expect(await a.find(idle.id)).toBeUndefined();
    a.clear();
    b.clear();
  });

  it('an expiry on one host closes the session for every host, and a DELETE on one host reaches a host serving it from memory', async () => {
    const { clock, store, host } = sharedStore();
    const a = host();
    const b = host();
    const expiring = await a.open('agent-1');
    clock.now = limits.idleMs + 1;
    a.sweep();
    await settle();
    expect(await store.getMcpSession(expiring.id)).toMatchObject({ closed: true, agentSessionId: 'agent-1' });
    expect(await b.find(expiring.id)).toBeUndefined();

    const deleted = await a.open('agent-2');
    expect(await b.find(deleted.id)).toMatchObject({ agentSessionId: 'agent-2' });
    expect(await a.close(deleted.id)).toBe(true);
    // B serves it from memory until its next mark in the store, which finds it closed.
    clock.now += every;
    expect(await b.find(deleted.id)).toBeUndefined();
    expect(await b.find(deleted.id)).toBeUndefined();
    a.clear();
    b.clear();
  });

  it('a session served by the other host is idle here, not expired: this host forgets it without closing it, and adopts it again', async () => {
    const { clock, store, host } = sharedStore();
    const a = host();
    const b = host();
    const session = await a.open('agent-1');
    for (clock.now = 1000; clock.now <= 2 * limits.idleMs; clock.now += 1000)
      expect(await b.find(session.id)).toMatchObject({ agentSessionId: 'agent-1' });
    a.sweep();
    await settle();
    expect(a.size).toBe(0);
    expect((await store.getMcpSession(session.id))!.closed).toBe(false);
    expect(await a.find(session.id)).toMatchObject({ agentSessionId: 'agent-1' });
    a.clear();
    b.clear();
  });

  it('after a restart, refuses and closes a session the store shows idle past the limit, and adopts one in use', async () => {
    const { clock, store, host } = sharedStore();
    const before = host();
    const idle = await before.open('agent-1');
    const busy = await before.open('agent-2');
    for (clock.now = 0; clock.now < limits.idleMs; clock.now += 1000) await before.find(busy.id);
    before.clear(); // the host stops (or crashes) before the idle one expires: nothing is closed in the store
    expect((await store.getMcpSession(idle.id))!.closed).toBe(false);
    clock.now = limits.idleMs + every + 1;
    const after = host();
    expect(await after.find(busy.id)).toMatchObject({ agentSessionId: 'agent-2' });
    // The idle one's stored last use may lag its real one by up to one interval: refused only past both.
    expect(await after.find(idle.id)).toBeUndefined();
    expect((await store.getMcpSession(idle.id))!.closed).toBe(true);
    after.clear();
  });
});

describe('2025-era MCP sessions over HTTP: lifecycle and refusals', () => {
  const host = hostForSuite({ env: { APTIX_MCP_MAX_SESSIONS: '3', APTIX_MCP_SESSION_IDLE_SECONDS: '2' } });
  const agentSessions = () => {
    const db = new Database(host.db.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM agent_sessions').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${host.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body });

  it('creates no agent session for a refused initialize', async () => {
    await post(INITIALIZE); // make sure the store exists
    const before = agentSessions();
    const badJson = await post('{"jsonrpc":"2.0","id":1,"method":"initialize",');
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
    const plain = await post(INITIALIZE, { 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);
    expect(((await plain.json()) as { error: { message: string } }).error.message).toMatch(
      /Content-Type must be application\/json/,
    );
    const wrongAccept = await post(INITIALIZE, { accept: 'text/html' });
    expect(wrongAccept.status).toBe(406);
    expect(((await wrongAccept.json()) as { error: { message: string } }).error.message).toMatch(/text\/event-stream/);
    expect(agentSessions()).toBe(before);
  });

  it('answers an empty or blank Mcp-Session-Id with a 400 JSON-RPC error naming the header', async () => {
    for (const value of ['', '   ']) {
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }), {
        'mcp-session-id': value,
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { code: number; message: string } };
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toMatch(/Mcp-Session-Id/);
    }
  });

  it('closes a session on DELETE with content-type application/json and an empty body, as the Python SDK sends it', async () => {
    const init = await post(INITIALIZE);
    await init.text();
    const id = init.headers.get('mcp-session-id')!;
    const closed = await fetch(`${host.url}/mcp`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json', 'mcp-session-id': id },
    });
    expect(closed.status).toBe(200);
    const after = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), {
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-11-25',
    });
    expect(after.status).toBe(404);
    expect(await after.json()).toMatchObject({ error: { code: -32001 }, id: 2 });
  });

  it('expires an idle session: its id then answers 404 naming the agent session to continue in', async () => {
    const init = await post(INITIALIZE);
    await init.text();
    const id = init.headers.get('mcp-session-id')!;
    const agentSessionId = init.headers.get('x-aptix-session-id')!;
    // Idle time-out is 2 s: wait until it has certainly passed (this asserts an outcome, not a duration).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const after = await post(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), {
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-11-25',
    });
    expect(after.status).toBe(404);
    expect(((await after.json()) as { error: { message: string } }).error.message).toContain(
      `X-Aptix-Session-Id: ${agentSessionId}`,
    );
  });

  it('refuses a new session over the cap with 503 and a clear message, creating no agent session, while open ones keep working', async () => {
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`)));
    try {
      // Fill the host up to its cap of 3 (sessions of earlier tests may still count).
      let refused = await post(INITIALIZE);
      for (let i = 0; i < 3 && refused.status === 200; i++) {
        await refused.text();
        refused = await post(INITIALIZE);
      }
      const before = agentSessions();
      expect(refused.status).toBe(503);
      await refused.text();
      refused = await post(INITIALIZE);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBeTruthy();
      const body = (await refused.json()) as { error: { message: string } };
      expect(body.error.message).toContain('3 MCP sessions, its limit');
      expect(body.error.message).toContain('DELETE /mcp');
      expect(agentSessions()).toBe(before);
      // The session opened first still answers.
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});

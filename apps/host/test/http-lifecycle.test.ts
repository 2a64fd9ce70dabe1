/**
 * Time-outs, shutdown and readiness, through a real `aptix serve` child process: a client that sends
 * one byte at a time is cut off and cannot hold SIGTERM up; SIGTERM lets short calls finish and closes
 * the rest at the deadline; /readyz follows the session store while /healthz only says the process lives.
 * No assertion is about time: waits are bounded only so that a broken host fails instead of hanging.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  logLine,
  PG_URL,
  postgresAvailable,
  postgresSchema,
  type scratch,
  startHostWithConfig,
  type RunningHost,
} from './support.js';

const hostWith = startHostWithConfig;

interface Drip {
  readonly received: () => string;
  readonly closed: Promise<void>;
  stop(): void;
}

/** Opens a connection, sends `head`, then one byte of `rest` every `everyMs`, forever or until closed. */
function drip(url: string, head: string, rest: string, everyMs: number): Drip {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  let received = '';
  let at = 0;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => {});
  socket.write(head);
  const timer = setInterval(() => {
    if (!socket.writable) return;
    socket.write(rest[at % rest.length]!);
    at += 1;
  }, everyMs);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  void closed.then(() => clearInterval(timer));
  return { received: () => received, closed, stop: () => (clearInterval(timer), socket.destroy()) };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)),
  ]);
}

const slowBodyHead = (url: string) =>
  `POST /v1/tools/testing_ping_pong/invoke HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;

describe('HTTP time-outs', () => {
  it('cuts off a client that sends its body or its headers one byte at a time, with 408, and keeps serving others', async () => {
    const { host, space } = await hostWith({ requestTimeoutMs: 1500, headersTimeoutMs: 1000 });
    try {
      const body = drip(host.url, slowBodyHead(host.url), '{"arguments":{"message":"' + 'x'.repeat(2000), 300);
      const headers = drip(
        host.url,
        `GET /healthz HTTP/1.1\r\nHost: ${new URL(host.url).host}\r\n`,
        'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
        300,
      );
      expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
      await within(Promise.all([body.closed, headers.closed]), 20_000, 'the slow clients being cut off');
      for (const client of [body, headers]) {
        expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
        expect(client.received()).toContain('"code":"REQUEST_TIMEOUT"');
      }
      // The cut-off request's access line says its connection closed, never that the client hung up: the host closed it.
      const line = await logLine(
        host,
        (entry) => entry.url === '/v1/tools/testing_ping_pong/invoke' && String(entry.msg).startsWith('request '),
      );
      expect(line).toMatchObject({
        method: 'POST',
        msg: 'request aborted: the connection closed before its answer was sent',
      });
      expect(line).not.toHaveProperty('statusCode');
      expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });

  it('after a 413, reads the rest of a too-large body only until requestTimeoutMs: a client dripping it is cut off', async () => {
    const { host, space } = await hostWith({ bodyLimitBytes: 1024, requestTimeoutMs: 1500, headersTimeoutMs: 1000 });
    try {
      // Declared within 4 times the limit, so the host keeps reading after its 413 (see keepReadingTooLargeBody).
      const head = `POST /v1/tools/testing_ping_pong/invoke HTTP/1.1\r\nHost: ${new URL(host.url).host}\r\nContent-Type: application/json\r\nContent-Length: 3072\r\n\r\n`;
      const client = drip(host.url, head, 'x', 300);
      await within(client.closed, 20_000, 'the dripping client being cut off');
      expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
      expect(client.received()).toContain('"code":"BODY_TOO_LARGE"');
      expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });

  it('keeps an idle keep-alive connection only keepAliveTimeoutMs', async () => {
    const { host, space } = await hostWith({ keepAliveTimeoutMs: 500 });
    try {
      const { hostname, port } = new URL(host.url);
      const socket = connect(Number(port), hostname);
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      socket.write(`GET /healthz HTTP/1.1\r\nHost: ${new URL(host.url).host}\r\n\r\n`);
      await within(new Promise((resolve) => socket.once('close', resolve)), 15_000, 'the idle connection being closed');
      expect(received).toMatch(/^HTTP\/1\.1 200 /);
      expect(received.toLowerCase()).toContain('keep-alive: timeout=');
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});

describe('a client that hangs up', () => {
  it("cancels its call: the tool's signal aborts, so nothing of it is left running when the host stops", async () => {
    const { host, space } = await hostWith({ shutdownTimeoutMs: 60_000 });
    try {
      // The longest delay (a minute) whose caller leaves after it started: its timer is cleared only by the abort.
      const client = new AbortController();
      const leaving = fetch(`${host.url}/v1/tools/testing_delay/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { milliseconds: 60_000 } }),
        signal: client.signal,
      }).catch((error: Error) => error.name);
      await new Promise((resolve) => setTimeout(resolve, 500));
      client.abort();
      expect(await leaving).toBe('AbortError');
      // The host still serves others, with its own request answered in full.
      expect(
        await (
          await fetch(`${host.url}/v1/tools/testing_ping_pong/invoke`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"arguments":{"message":"still here"}}',
          })
        ).json(),
      ).toMatchObject({ successful: true });
      // Had the call kept running, its one-minute timer would hold the stopped process open, and the host
      // would say so ("work that ignored its cancellation") before exiting.
      expect(await within(host.stop('SIGTERM'), 30_000, 'the host exiting after SIGTERM')).toBe(0);
      expect(host.logs.some((line) => String(line.msg).startsWith('work that ignored its cancellation'))).toBe(false);
      expect(host.logs.some((line) => line.msg === 'shut down')).toBe(true);
    } finally {
      space.cleanup();
    }
  });
});

describe('SIGTERM', () => {
  it('does not wait on the keep-alive connection of a call that finishes while it shuts down', async () => {
    // The connection would stay open keepAliveTimeoutMs after its answer, past the shutdown deadline.
    const { host, space } = await hostWith({ keepAliveTimeoutMs: 120_000, shutdownTimeoutMs: 60_000 });
    try {
      const call = fetch(`${host.url}/v1/tools/testing_delay/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'keep-alive' },
        body: JSON.stringify({ arguments: { milliseconds: 400 } }),
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
      const stopped = host.stop('SIGTERM');
      const answer = await call;
      expect(answer.status).toBe(200);
      await answer.text();
      expect(await within(stopped, 50_000, 'the host exiting after SIGTERM')).toBe(0);
      expect(host.logs.some((line) => String(line.msg).startsWith('closing every remaining connection'))).toBe(false);
    } finally {
      space.cleanup();
    }
  });

  it('finishes short calls, then at the deadline closes slow clients and long calls, and exits 0', async () => {
    const { host, space } = await hostWith({
      requestTimeoutMs: 120_000,
      headersTimeoutMs: 60_000,
      shutdownTimeoutMs: 1500,
    });
    const slow = drip(host.url, slowBodyHead(host.url), '{"arguments":{"message":"' + 'x'.repeat(2000), 500);
    const call = (ms: number) =>
      fetch(`${host.url}/v1/tools/testing_delay/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { milliseconds: ms } }),
      }).then(
        async (response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> }),
        (error: Error) => ({ status: 0, body: { failed: error.message } }),
      );
    const short = call(400);
    const long = call(50_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    try {
      const code = await within(host.stop('SIGTERM'), 30_000, 'the host exiting after SIGTERM');
      expect(code).toBe(0);
      expect(await short).toMatchObject({ status: 200, body: { successful: true, result: { wasCancelled: false } } });
      // The long call's connection was closed at the deadline: no answer, or the tool reports its cancellation.
      const ended = await within(long, 10_000, 'the long call ending');
      expect(
        ended.status === 0 || (ended.body as { result?: { wasCancelled?: boolean } }).result?.wasCancelled === true,
      ).toBe(true);
      await within(slow.closed, 10_000, 'the slow client being disconnected');
      expect(host.logs.some((line) => String(line.msg).startsWith('closing every remaining connection'))).toBe(true);
      expect(host.output()).not.toContain('    at ');
    } finally {
      slow.stop();
      space.cleanup();
    }
  });
});

/** A TCP relay to PostgreSQL that can stop relaying: the server behind it looks frozen, without touching it. */
async function freezableRelay(
  target: URL,
): Promise<{ url: string; freeze(): void; thaw(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let frozen = false;
  // What arrived while frozen is held, and relayed on thaw, so no connection loses a byte.
  const held: Array<{ to: Socket; chunk: Buffer }> = [];
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk: Buffer) => {
        if (frozen) held.push({ to, chunk });
        else to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target.href);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.href,
    freeze: () => (frozen = true),
    thaw: () => {
      frozen = false;
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('liveness and readiness', () => {
  it('/readyz answers 200 when the SQLite store answers', async () => {
    const { host, space } = await hostWith({});
    try {
      const ready = await fetch(`${host.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
    } finally {
      await host.stop();
      space.cleanup();
    }
  });

  it('/readyz answers 503 while PostgreSQL does not answer, /healthz stays 200, and readiness comes back', async () => {
    if (!(await postgresAvailable('the readiness test'))) return;
    const schema = postgresSchema('aptix_ready');
    const relay = await freezableRelay(new URL(PG_URL));
    const db = schema.db.replace(PG_URL, relay.url.replace(/\/$/, ''));
    let host: RunningHost | undefined;
    let space: ReturnType<typeof scratch> | undefined;
    try {
      ({ host, space } = await hostWith({ readinessTimeoutMs: 500 }, { APTIX_DB: db }));
      expect((await fetch(`${host.url}/readyz`)).status).toBe(200);
      relay.freeze();
      const frozen = await within(fetch(`${host.url}/readyz`), 15_000, '/readyz answering while the store is frozen');
      expect(frozen.status).toBe(503);
      const body = (await frozen.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('NOT_READY');
      expect(body.error.message).not.toMatch(/127\.0\.0\.1|postgres/);
      expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
      relay.thaw();
      let again = 0;
      for (let attempt = 0; attempt < 40 && again !== 200; attempt += 1) {
        again = (await fetch(`${host.url}/readyz`)).status;
        if (again !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(again).toBe(200);
    } finally {
      relay.thaw();
      await host?.stop('SIGKILL');
      await relay.close();
      space?.cleanup();
      await schema.dispose();
    }
  });
});

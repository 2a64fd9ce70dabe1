/**
 * The API key, Host and Origin, attacked as a client would, over raw TCP against a real `aptix serve`:
 * every spelling of a protected path a router might map to it, with no key, a wrong key and each
 * right key; duplicate headers; origins that differ only by port or scheme.
 */
import { pino } from 'pino';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { AptixHost } from '../src/aptix-host.js';
import { loadConfig } from '../src/config.js';
import { composeHost } from '../src/container.js';
import { createHttpServer } from '../src/http/server.js';
import {
  hostForSuite,
  rawHttp,
  rawRequest,
  runCli,
  scratch,
  startHost,
  type RawResponse,
  type RunningHost,
} from './support.js';

const KEYS = { default: 'd'.repeat(40), ops: 'o'.repeat(20) + '0123456789abcdef', ci: 'c'.repeat(16) + '=with=equals' };
const WRONG = 'w'.repeat(40);
const STACK = /\n\s+at\s|\bat \S+:\d+:\d+/;

/** Every spelling of `path` a router might decode, normalise or fold to it. */
function spellings(path: string, host: string): string[] {
  const out = new Set<string>();
  for (let i = 0; i < path.length; i += 1) {
    const hex = path.charCodeAt(i).toString(16).padStart(2, '0');
    out.add(`${path.slice(0, i)}%${hex.toUpperCase()}${path.slice(i + 1)}`);
    out.add(`${path.slice(0, i)}%${hex.toLowerCase()}${path.slice(i + 1)}`);
  }
  const last = path.lastIndexOf('/');
  const [head, tail] = [path.slice(0, last), path.slice(last + 1)];
  out.add(`${head}/%25${tail.charCodeAt(0).toString(16)}${tail.slice(1)}`); // double encoding
  out
    .add(`/x/..${path}`)
    .add(`/.${path}`)
    .add(`${head}/./${tail}`)
    .add(`${path}/.`)
    .add(`${head}/x/../${tail}`)
    .add(`${head}/%2e%2e/${path.slice(1)}`);
  out.add(`/${path}`).add(`${head}//${tail}`).add(`${path}/`).add(`${path}//`);
  out
    .add(path.toUpperCase())
    .add(`${head}/${tail.toUpperCase()}`)
    .add(`/${path[1]!.toUpperCase()}${path.slice(2)}`);
  out
    .add(`${path};x`)
    .add(`${path}?x=1`)
    .add(`${path}%3Fx`)
    .add(`${path}%00`)
    .add(`${path}%20`)
    .add(path.replace(/\//g, '\\'));
  out
    .add(`http://${host}${path}`)
    .add(`HTTP://${host.toUpperCase()}${path}`)
    .add(`http://evil.example${path}`)
    .add(`https://${host}${path}`)
    .add(`//${host}${path}`)
    .add(`http://${host}/%2e${path}`);
  return [...out];
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'attacker', version: '1' } },
});

describe('the API key, decided by the route that runs', () => {
  const suite = hostForSuite({
    env: { APTIX_API_KEY: KEYS.default, APTIX_API_KEYS: `ops=${KEYS.ops}, ci=${KEYS.ci}` },
  });
  let host: RunningHost;
  beforeAll(() => {
    host = suite.host;
  });
  const answers: RawResponse[] = [];
  const send = async (text: string) => {
    const answer = await rawHttp(host.url, text);
    answers.push(answer);
    return answer;
  };
  const get = (target: string, key?: string, extra: Record<string, string | string[]> = {}) =>
    send(
      rawRequest(host.url, 'GET', target, {
        ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        ...extra,
      }),
    );
  const initialize = (target: string, key?: string) =>
    send(
      rawRequest(
        host.url,
        'POST',
        target,
        {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        },
        INITIALIZE,
      ),
    );

  it.each(['/v1/modes', '/v1/tools', '/v1/tools/testing_ping_pong'])(
    'refuses every spelling of GET %s without the right key, and serves the key holder',
    async (path) => {
      const served = new URL(host.url).host;
      let reachedWithKey = 0;
      for (const target of spellings(path, served)) {
        for (const key of [undefined, WRONG, `${KEYS.ops} `.trim().slice(0, -1)]) {
          const answer = await get(target, key);
          expect(
            [400, 401, 403, 414],
            `${target} with ${key === undefined ? 'no key' : 'a wrong key'}: ${answer.status} ${answer.body}`,
          ).toContain(answer.status);
          expect(answer.body).not.toMatch(/ddr_authoring|testing_calculator|Primary purpose/);
        }
        const authorized = await get(target, KEYS.ops);
        expect(authorized.status, `${target} with the key: ${authorized.body}`).toBeLessThan(500);
        if (authorized.status === 200) reachedWithKey += 1;
      }
      // The spellings did reach the route (so the refusals above are the key check, not a miss).
      expect(reachedWithKey).toBeGreaterThan(3);
      expect((await get(`/v%31${path.slice(3)}`, KEYS.ci)).status).toBe(200);
      expect((await get(`http://${served}${path}`, KEYS.default)).status).toBe(200);
    },
  );

  it('refuses every spelling of POST /mcp without the right key, and opens an MCP session for the key holder', async () => {
    const served = new URL(host.url).host;
    for (const target of spellings('/mcp', served)) {
      for (const key of [undefined, WRONG]) {
        const answer = await initialize(target, key);
        expect([400, 401, 403, 414], `${target}: ${answer.status} ${answer.body}`).toContain(answer.status);
        expect(answer.head.toLowerCase()).not.toContain('mcp-session-id');
      }
    }
    for (const target of ['/%6dcp', '/%6D%63%70', `http://${served}/mcp`]) {
      const opened = await initialize(target, KEYS.ops);
      expect(opened.status, opened.body).toBe(200);
      expect(opened.head.toLowerCase()).toContain('mcp-session-id');
    }
  });

  it('keeps the public routes public, under any spelling that reaches them', async () => {
    for (const target of ['/healthz', '/%68ealthz', '/readyz', '/openapi.json', '/docs/', '/docs/json'])
      expect((await get(target)).status, target).toBe(200);
  });

  it('answers 401, not 404, for a route that does not exist when the key is missing, and 404 with the key', async () => {
    for (const target of ['/nope', '/v2/anything', '/v1/modes/extra', '/.env', '/admin']) {
      const anonymous = await get(target);
      expect(anonymous.status, target).toBe(401);
      expect(anonymous.body).not.toContain(target);
      const keyed = await get(target, KEYS.default);
      expect(keyed.status).toBe(404);
      expect(keyed.json!.error).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('refuses a request with two Authorization headers, even when both hold the right key', async () => {
    for (const pair of [
      [KEYS.ops, KEYS.ops],
      [WRONG, KEYS.ops],
      [KEYS.ops, WRONG],
    ]) {
      const answer = await get('/v1/modes', undefined, { Authorization: pair.map((key) => `Bearer ${key}`) });
      expect(answer.status).toBe(400);
      expect(answer.json!.error).toMatchObject({
        code: 'DUPLICATE_HEADER',
        message: expect.stringContaining('Authorization'),
      });
    }
    expect(
      (await get('/v1/modes', undefined, { Authorization: `Bearer ${KEYS.ops}`, authorization: `Bearer ${KEYS.ops}` }))
        .status,
    ).toBe(400);
  });

  it('accepts each configured key, and logs its name, never the key', async () => {
    for (const [name, key] of Object.entries(KEYS)) {
      const answer = await get('/v1/modes', key, { 'x-request-id': `who-${name}` });
      expect(answer.status).toBe(200);
    }
    const answer = await send(
      rawRequest(
        host.url,
        'POST',
        '/v1/tools/testing_failure_injection/invoke',
        { authorization: `Bearer ${KEYS.ci}`, 'content-type': 'application/json', 'x-request-id': 'who-tool' },
        JSON.stringify({ arguments: { mode: 'error', payload: 'p' } }),
      ),
    );
    expect(answer.status).toBe(200);
    // The lines reach the test over the host's stdout, which may trail the answers: wait for the last ones.
    await vi.waitFor(
      () => {
        expect(
          host.logs.some(
            (line) => line.reqId === 'who-ops' && line.actor === 'ops' && line.msg === 'request completed',
          ),
        ).toBe(true);
        // The tool's own log lines carry the actor too.
        expect(
          host.logs.some(
            (line) =>
              line.reqId === 'who-tool' && line.actor === 'ci' && line.tag === 'FailureInjectionTool.ExecuteAsync',
          ),
        ).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
    for (const name of Object.keys(KEYS))
      expect(
        host.logs
          .filter((line) => line.reqId === `who-${name}`)
          .every((line) => line.actor === name || line.msg === 'incoming request'),
      ).toBe(true);
  });

  it('shows no key and no stack trace in any answer or log line', () => {
    const everything = [host.output(), ...answers.map((answer) => answer.head + answer.body)].join('\n');
    for (const key of [...Object.values(KEYS), WRONG]) expect(everything).not.toContain(key);
    expect(everything).not.toContain('    at ');
    expect(everything).not.toMatch(STACK);
  });
});

describe('Host and Origin', () => {
  const suite = hostForSuite();
  let host: RunningHost;
  beforeAll(() => {
    host = suite.host;
  });

  it('accepts only an Origin equal to a served origin, port and scheme included', async () => {
    const { port } = new URL(host.url);
    const other = Number(port) === 65535 ? 65534 : Number(port) + 1;
    for (const origin of [
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      `http://[::1]:${port}`,
      `HTTP://LOCALHOST:${port}`,
    ]) {
      expect((await rawHttp(host.url, rawRequest(host.url, 'GET', '/healthz', { origin }))).status, origin).toBe(200);
    }
    for (const origin of [
      'null',
      `http://127.0.0.1:${other}`,
      'http://127.0.0.1',
      'http://localhost',
      `https://127.0.0.1:${port}`,
      `http://127.0.0.1:${port}.evil.example`,
      `http://evil.example:${port}`,
      `http://127.0.0.1:${port}/`,
      `http://user@127.0.0.1:${port}`,
      '',
    ]) {
      const answer = await rawHttp(host.url, rawRequest(host.url, 'GET', '/healthz', { origin }));
      expect(answer.status, `Origin: ${origin}`).toBe(403);
      expect(answer.json!.error.code).toBe('ORIGIN_NOT_ALLOWED');
    }
  });

  it('refuses a request with two Host headers', async () => {
    const { host: served } = new URL(host.url);
    const answer = await rawHttp(host.url, rawRequest(host.url, 'GET', '/healthz', { Host: [served, 'evil.example'] }));
    expect(answer.status).toBe(400);
    expect(answer.json!.error.code).toBe('DUPLICATE_HEADER');
  });
});

describe('IPv6 loopback', () => {
  it.each(['::1', '[::1]'])('APTIX_HOST=%s binds ::1 and serves, with [::1] as its Host', async (address) => {
    const space = scratch();
    const host = await startHost({ env: { APTIX_DB: space.db, APTIX_HOST: address } });
    try {
      expect(host.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      const answer = await fetch(`${host.url}/healthz`);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ status: 'ok' });
      expect((await rawHttp(host.url, rawRequest(host.url, 'GET', '/healthz', { origin: host.url }))).status).toBe(200);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});

describe('a route added later', () => {
  it('needs the key without anyone listing it', async () => {
    const space = scratch();
    const config = await loadConfig({ env: { APTIX_DB: space.db, APTIX_API_KEYS: `ops=${KEYS.ops}` }, cwd: space.dir });
    const host = new AptixHost(await composeHost(config, { pino: pino({ level: 'silent' }) }));
    const server = await createHttpServer(host, '0.0.0-test');
    server.app.get('/v2/added-later', () => ({ secret: 'added-later-data' }));
    server.app.get('/healthz-like', () => ({ secret: 'looks-public' }));
    const url = await server.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      for (const target of ['/v2/added-later', '/v%32/added-later', '/healthz-like', '/docs/../v2/added-later']) {
        const anonymous = await rawHttp(url, rawRequest(url, 'GET', target));
        expect(anonymous.status, target).toBe(401);
        expect(anonymous.body).not.toContain('added-later-data');
      }
      expect(
        (await rawHttp(url, rawRequest(url, 'GET', '/v2/added-later', { authorization: `Bearer ${KEYS.ops}` }))).json,
      ).toEqual({ secret: 'added-later-data' });
    } finally {
      await server.close();
      await host.close();
      space.cleanup();
    }
  });
});

describe('API key configuration', () => {
  it('names the bad entry and the fix, and never prints a key', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ APTIX_API_KEYS: `ops=${KEYS.ops},ci=short` }, /APTIX_API_KEYS entry 2 has a key shorter than 16 characters/],
      [{ APTIX_API_KEYS: `ops=${KEYS.ops},ops=${KEYS.ci}` }, /APTIX_API_KEYS entry 2 repeats the key name "ops"/],
      [
        { APTIX_API_KEY: KEYS.ops, APTIX_API_KEYS: `again=${KEYS.ops}` },
        /APTIX_API_KEYS entry 1 repeats a key already accepted \(as "default"\)/,
      ],
      [{ APTIX_API_KEY: 'short' }, /APTIX_API_KEY is shorter than 16 characters/],
    ];
    for (const [env, message] of cases) {
      const space = scratch();
      const run = await runCli(['serve', '--port', '0'], { env: { APTIX_DB: space.db, ...env } });
      space.cleanup();
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      for (const key of Object.values(KEYS)) expect(run.stderr + run.stdout).not.toContain(key);
    }
  });
});

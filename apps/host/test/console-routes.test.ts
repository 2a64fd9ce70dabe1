/**
 * The web console's routes, attacked as a client would over raw TCP against a real `aptix serve` with
 * an API key: the page is public, so no spelling of a path under /console may reach a file outside the
 * built console or a protected route; and APTIX_CONSOLE is read strictly.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { HOST_ROOT, hostForSuite, rawHttp, rawRequest, runCli, scratch } from './support.js';

const KEY = 'k'.repeat(40);
const STACK = /\n\s+at\s|\bat \S+:\d+:\d+/;
/** Text only files outside the console's dist hold: the host's package.json, its source, a system file. */
const SECRETS = [
  JSON.parse(readFileSync(join(HOST_ROOT, 'package.json'), 'utf8')).description as string,
  'registerConsoleRoutes',
  'root:x:0:0',
];

describe('the console under /console, with an API key on the host', () => {
  const suite = hostForSuite({ env: { APTIX_API_KEY: KEY } });
  const get = (target: string, headers: Record<string, string> = {}) =>
    rawHttp(suite.url, rawRequest(suite.url, 'GET', target, headers), { halfClose: false });

  it('serves the page without the key, under a strict content security policy', async () => {
    const page = await get('/console/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<html');
    expect(page.head.toLowerCase()).toContain("content-security-policy: default-src 'none'");
    expect((await get('/console')).status).toBe(302);
  });

  it('never serves a file outside the built console, whatever the spelling of the path', async () => {
    const escapes = [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/%2E%2E/%2E%2E/package.json',
      '/console/..%2fpackage.json',
      '/console/..%2f..%2fpackage.json',
      '/console/..%5c..%5cpackage.json',
      '/console/%252e%252e/package.json',
      '/console/....//package.json',
      '/console/.%2e/.%2e/src/http/console-routes.ts',
      '/console//etc/passwd',
      '/console/%2fetc%2fpasswd',
      '/console/..\\..\\package.json',
      '/console/index.html%00.json',
      '/console/%c0%ae%c0%ae/package.json',
      '/console/%ff',
      '/console/x/../../src/http/console-routes.ts',
      '/CONSOLE/../package.json',
    ];
    for (const target of escapes) {
      const answer = await get(target);
      expect(answer.status, target).toBeGreaterThanOrEqual(200);
      expect(answer.status, `${target} must not fail the host`).toBeLessThan(500);
      for (const secret of SECRETS)
        expect(answer.body, `${target} leaked a file outside the console`).not.toContain(secret);
      expect(answer.body, target).not.toMatch(STACK);
    }
  });

  it('does not open a protected route through a path that starts under /console', async () => {
    for (const target of [
      '/console/../v1/tools',
      '/console/%2e%2e/v1/tools',
      '/console/..%2fv1%2ftools',
      '/console/../v1/modes',
      '/console/./../mcp',
    ]) {
      const answer = await get(target);
      expect([400, 401, 403, 404], target).toContain(answer.status);
      expect(answer.body, target).not.toContain('testing_ping_pong');
      if (answer.status === 403)
        expect(answer.json?.error, target).toMatchObject({
          code: 'PATH_NOT_ALLOWED',
          message: expect.stringContaining('plain path'),
        });
    }
  });

  it('answers an over-long console path with 414, not a file lookup', async () => {
    const answer = await get(`/console/${'a'.repeat(10_000)}.js`);
    expect(answer.status).toBe(414);
    expect(answer.body).not.toMatch(STACK);
  });

  it('keeps the console page public but the data behind it protected', async () => {
    expect((await get('/v1/tools')).status).toBe(401);
    expect((await get('/v1/tools', { authorization: `Bearer ${KEY}` })).status).toBe(200);
  });
});

describe('APTIX_CONSOLE', () => {
  const load = (value: string) => loadConfig({ env: { APTIX_CONSOLE: value }, cwd: scratch().dir });

  it.each(['off', 'OFF', ' off ', 'false', '0', 'no', 'No'])('"%s" switches the console off', async (value) => {
    expect((await load(value)).console).toBe(false);
  });

  it.each(['on', 'ON', 'true', '1', 'yes'])('"%s" switches it on', async (value) => {
    expect((await load(value)).console).toBe(true);
  });

  it.each(['offf', 'disabled', '2', 'of', '\u200boff', 'x'.repeat(10_000)])(
    'refuses "%s" rather than guess, naming the variable and the words it takes',
    async (value) => {
      const error = await load(value).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('APTIX_CONSOLE');
      expect((error as Error).message).toContain('on or off');
      expect((error as Error).message.length).toBeLessThan(400);
    },
  );

  it('stops `aptix serve` with that message and a non-zero exit, before it listens', async () => {
    const space = scratch();
    const run = await runCli(['serve', '--port', '0'], { env: { APTIX_CONSOLE: 'maybe', APTIX_DB: space.db } });
    space.cleanup();
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('APTIX_CONSOLE "maybe" is neither on nor off');
    expect(run.stderr).not.toMatch(STACK);
  });

  it('switched off, /console is not served and says nothing of the console', async () => {
    const space = scratch();
    const { startHost } = await import('./support.js');
    const host = await startHost({ env: { APTIX_CONSOLE: 'off', APTIX_DB: space.db } });
    try {
      const answer = await rawHttp(host.url, rawRequest(host.url, 'GET', '/console/'), { halfClose: false });
      expect(answer.status).toBe(404);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});

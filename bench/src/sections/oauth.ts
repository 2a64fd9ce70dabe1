/**
 * 3e. OAuth (issue 32): the invoke route of a host that takes API keys only, called with a key, against
 * a host configured as an OAuth resource server, called with a JWT access token. Each token request
 * verifies an RS256 signature against the issuer's keys (cached after the first fetch), checks the
 * claims and carries the token's permissions through the request (an AsyncLocalStorage, which on Node
 * 20 and 22 makes every promise of the process dearer once a token has been served: the third row
 * measures API-key requests on that host). The issuer is a JWKS document served in this process;
 * the token is signed with node:crypto, as any issuer's would be.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { APTIX_BIN } from '../paths.js';
import { freePort, startServer, type Server } from '../processes.js';
import type { Row } from '../report.js';
import { alternate, EXPECTED, INVOKE_BODY, type HttpOptions } from './http.js';

const SECTION = '3e. OAuth (autocannon, 10 connections, same machine)';
const KEY = 'bench-key-0123456789abcdef0123';

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

export async function oauthSection(options: HttpOptions, log: (line: string) => void, dbDir: string): Promise<Row[]> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = JSON.stringify({
    keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256', use: 'sig' }],
  });
  let keyFetches = 0;
  const issuerServer = createServer((_request, response) => {
    keyFetches++;
    response.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
  });
  await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
  const servers: Server[] = [];
  try {
    const keyPort = await freePort();
    const keyed = await startServer([APTIX_BIN, 'serve', '--port', String(keyPort)], {
      port: keyPort,
      cwd: dbDir,
      env: { LOG_LEVEL: 'warn', APTIX_DB: `sqlite:${dbDir}/oauth-keys.db`, APTIX_API_KEYS: `bench=${KEY}` },
    });
    servers.push(keyed);
    const tokenPort = await freePort();
    const resource = `http://127.0.0.1:${tokenPort}`;
    const config = join(dbDir, 'oauth.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        apiKeys: [`bench=${KEY}`],
        oauth: { issuer, resource, jwksUri: `${issuer}/jwks`, scopes: { ping: { tools: ['testing_ping_pong'] } } },
      }),
    );
    const oauth = await startServer([APTIX_BIN, 'serve', '--port', String(tokenPort)], {
      port: tokenPort,
      cwd: dbDir,
      env: { LOG_LEVEL: 'warn', APTIX_DB: `sqlite:${dbDir}/oauth-tokens.db`, APTIX_CONFIG: config },
    });
    servers.push(oauth);
    const now = Math.floor(Date.now() / 1000);
    const signingInput = `${base64url({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' })}.${base64url({
      iss: issuer,
      aud: resource,
      sub: 'bench-service',
      scope: 'ping',
      iat: now,
      exp: now + 3600,
    })}`;
    const token = `${signingInput}.${sign('sha256', Buffer.from(signingInput), privateKey).toString('base64url')}`;
    const invoke = (bearer: string) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: INVOKE_BODY,
    });
    for (const [server, bearer] of [
      [keyed, KEY],
      [oauth, token],
    ] as const) {
      const answer = await fetch(`${server.url}/v1/tools/testing_ping_pong/invoke`, invoke(bearer));
      const text = await answer.text();
      if (text !== EXPECTED) throw new Error(`${server.url} answered ${answer.status} ${text}`);
    }
    log('  oauth: invoke, an API key against a verified JWT access token');
    const [keyLoad, tokenLoad, mixedLoad] = await alternate(
      [
        {
          name: 'API key',
          options: { url: `${keyed.url}/v1/tools/testing_ping_pong/invoke`, ...invoke(KEY) },
          pid: keyed.child.pid,
        },
        {
          name: 'OAuth access token',
          options: { url: `${oauth.url}/v1/tools/testing_ping_pong/invoke`, ...invoke(token) },
          pid: oauth.child.pid,
        },
        {
          name: 'API key, on the host that has served tokens',
          options: { url: `${oauth.url}/v1/tools/testing_ping_pong/invoke`, ...invoke(KEY) },
          pid: oauth.child.pid,
        },
      ],
      options,
      log,
    );
    log(`  oauth: the issuer's keys were fetched ${keyFetches} time(s)`);
    return [
      {
        section: SECTION,
        measure: 'POST /v1/tools/testing_ping_pong/invoke with an OAuth access token (RS256 JWT)',
        figure: tokenLoad!.rps,
        unit: 'req/s',
        baseline: { name: 'the same route with an API key, on a host without oauth', figure: keyLoad!.rps },
        goal: { kind: 'ratio-at-least', value: 0.8 },
        note:
          `The token's RS256 signature, iss, aud and exp are verified with the issuer's cached keys ` +
          `(fetched ${keyFetches} time(s) in the run) on its first request; the verified token is kept ` +
          `(at most a minute, never past exp, dropped when the keys are fetched again), so later ` +
          `requests look it up and run as the token's principal. Verifying on every request, as ` +
          `before, served about 0.37× the key's rate. API key: ${Math.round(keyLoad!.rps)} req/s.`,
      },
      {
        section: SECTION,
        measure: '… its p99 latency',
        figure: tokenLoad!.p99,
        unit: 'ms',
        baseline: { name: 'API key', figure: keyLoad!.p99 },
        goal: { kind: 'ratio-at-most', value: 1 / 0.8 },
        note: `API key: p99 ${keyLoad!.p99.toFixed(2)} ms.`,
      },
      {
        section: SECTION,
        measure: 'the same route with an API key, on the host configured with oauth that has served tokens',
        figure: mixedLoad!.rps,
        unit: 'req/s',
        baseline: { name: 'the same route with an API key, on a host without oauth', figure: keyLoad!.rps },
        goal: { kind: 'ratio-at-least', value: 0.9 },
        note:
          'What the AsyncLocalStorage that carries a token principal costs every request of the ' +
          'process once a token has been served: on Node 20 and 22 it installs promise hooks for the ' +
          'whole process.',
      },
    ];
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await new Promise((resolve) => issuerServer.close(resolve));
  }
}

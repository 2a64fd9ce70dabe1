/**
 * The verified-token cache of TokenVerifier (issue 32): a client that sends the same token on every
 * request pays for one signature check, and a flood of distinct valid tokens cannot grow the cache past
 * its bound. The signature checks are counted at jose's `jwtVerify`, the one place they happen; the keys
 * come from a real JWKS endpoint on loopback.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Jose from 'jose';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { OAuthConfig } from '../src/auth/oauth-config.js';
import { TokenVerifier } from '../src/auth/token-verifier.js';

const checks = vi.hoisted(() => ({ count: 0 }));
vi.mock('jose', async (importOriginal) => {
  const jose = await importOriginal<typeof Jose>();
  return {
    ...jose,
    jwtVerify: (...args: Parameters<typeof jose.jwtVerify>) => {
      checks.count += 1;
      return jose.jwtVerify(...args);
    },
  };
});

const ISSUER = 'https://issuer.example';
const RESOURCE = 'https://tools.example';
let server: Server;
let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let config: OAuthConfig;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  const jwks = JSON.stringify({
    keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }],
  });
  server = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'application/json' }).end(jwks),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  config = {
    issuer: ISSUER,
    resource: RESOURCE,
    audience: [RESOURCE],
    jwksUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    algorithms: ['RS256'],
    scopes: {},
    principalClaim: 'sub',
    scopeClaim: 'scope',
    clockToleranceSeconds: 0,
    jwksCooldownSeconds: 30,
  };
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  checks.count = 0;
});

function token(subject: string): Promise<string> {
  return new SignJWT({ scope: 'tools:hello' })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(RESOURCE)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);
}

describe('verified tokens are kept', () => {
  it('the same token sent 50 times is checked once, and answers the same principal every time', async () => {
    const verifier = new TokenVerifier(config);
    const alice = await token('alice');
    for (let i = 0; i < 50; i++)
      expect(await verifier.verify(alice)).toEqual({ subject: 'alice', scopes: ['tools:hello'] });
    expect(checks.count).toBe(1);
  });

  it('a refused token is not kept: each time it comes, it is checked again', async () => {
    const verifier = new TokenVerifier(config);
    const forged = `${(await token('mallory')).slice(0, -4)}AAAA`;
    for (let i = 0; i < 3; i++) expect(await verifier.verify(forged)).toMatchObject({ kind: 'invalid' });
    expect(checks.count).toBe(3);
  });

  it('at most 1,000 tokens are kept: past it, the oldest is dropped and checked again when it comes back', async () => {
    const verifier = new TokenVerifier(config);
    const tokens = await Promise.all(Array.from({ length: 1_001 }, (_, i) => token(`user-${i}`)));
    for (const each of tokens) await verifier.verify(each);
    expect(checks.count).toBe(1_001);
    // The 1,001st pushed the first out; the newest thousand are all still kept.
    for (const each of tokens.slice(1)) await verifier.verify(each);
    expect(checks.count).toBe(1_001);
    expect(await verifier.verify(tokens[0]!)).toEqual({ subject: 'user-0', scopes: ['tools:hello'] });
    expect(checks.count).toBe(1_002);
  });
});

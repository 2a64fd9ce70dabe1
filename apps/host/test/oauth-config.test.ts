/**
 * The `oauth` section of aptix.config.json (issue 32): what cannot be used stops start-up with a
 * message naming the field and the fix, before any token is seen.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { scratch } from './support.js';

const space = scratch();
afterAll(() => space.cleanup());

const load = (oauth: Record<string, unknown>) => {
  const file = join(space.dir, 'aptix.config.json');
  writeFileSync(file, JSON.stringify({ oauth }));
  return loadConfig({ file, env: {}, cwd: space.dir });
};
const valid = {
  issuer: 'https://issuer.example/',
  resource: 'https://tools.example',
  scopes: { read: { tools: ['agent_*'] } },
};

describe('oauth in the configuration', () => {
  it('resolves the defaults: audience the resource as written and as a URL parser writes it, sub, scope, the asymmetric algorithms', async () => {
    const config = await load(valid);
    expect(config.oauth).toMatchObject({
      issuer: 'https://issuer.example/',
      resource: 'https://tools.example',
      audience: ['https://tools.example', 'https://tools.example/'],
      principalClaim: 'sub',
      scopeClaim: 'scope',
      algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
      clockToleranceSeconds: 5,
      jwksCooldownSeconds: 30,
    });
  });

  it.each([
    [{ ...valid, issuer: 'issuer.example' }, /oauth\.issuer "issuer\.example" is not a URL/],
    [{ ...valid, issuer: 'http://issuer.example' }, /oauth\.issuer .* is not an https URL\. Fix: use https:\/\//],
    [{ ...valid, resource: 'https://tools.example/?x=1' }, /oauth\.resource .* has a query or a fragment/],
    [{ ...valid, jwksUri: 'ftp://keys.example' }, /oauth\.jwksUri .* is not an https URL/],
    [{ ...valid, algorithms: ['none'] }, /oauth\.algorithms\.0/],
    [{ ...valid, algorithms: ['HS256'] }, /oauth\.algorithms\.0/],
    [{ issuer: valid.issuer, resource: valid.resource }, /oauth must have required property 'scopes'/],
    [{ ...valid, scopes: { 'has space': {} } }, /oauth\.scopes/],
    [
      { ...valid, scopes: { read: { tool: ['x'] } } },
      /unknown field "tool" in oauth\.scopes\.read \(did you mean "tools"\?\)/,
    ],
    [{ ...valid, isuer: 'x' }, /unknown field "isuer" in oauth \(did you mean "issuer"\?\)/],
  ])('refuses %j, naming the field', async (oauth, message) => {
    await expect(load(oauth)).rejects.toThrow(message);
  });

  it('accepts http on a loopback name, for development', async () => {
    const config = await load({ ...valid, issuer: 'http://127.0.0.1:9000', resource: 'http://localhost:8787' });
    expect(config.oauth?.issuer).toBe('http://127.0.0.1:9000');
  });
});

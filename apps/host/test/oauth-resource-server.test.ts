/**
 * The host as an OAuth 2.1 resource server (issue 32), against a real authorization server
 * (oidc-provider on loopback, oauth-server.ts): Protected Resource Metadata, the 401 challenge that
 * leads a client to it, tokens from the client credentials grant mapped to permissions by their
 * scopes, API keys beside them, and each way a token is refused.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { craftToken, signingKey, startAuthorizationServer, type AuthorizationServer } from './oauth-server.js';
import { startRouteHost, type RouteHost } from './route-table.js';
import { freePort } from './support.js';

const OPS_KEY = 'ops-key-0123456789abcdef0123';

let issuer: AuthorizationServer;
let host: RouteHost;
let resource: string;

beforeAll(async () => {
  issuer = await startAuthorizationServer();
  const port = await freePort();
  resource = `http://127.0.0.1:${port}`;
  host = await startRouteHost({
    port,
    file: {
      apiKeys: [`ops=${OPS_KEY}`],
      oauth: {
        issuer: issuer.issuer,
        resource,
        // Rotation is checked in this suite: an unknown kid may fetch the keys again at once.
        jwksCooldownSeconds: 0,
        scopes: {
          'tools:hello': { tools: ['agent_hello_world'] },
          'tools:testing': { tools: ['testing_*'] },
          approvals: { approve: ['testing_issue_refund'] },
          admin: { admin: true },
        },
      },
    },
  });
});
afterAll(async () => {
  await host?.close();
  await issuer?.close();
});

async function call(path: string, token: string | undefined, init: { method?: string; body?: unknown } = {}) {
  const response = await fetch(`${host.url}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: text.startsWith('{') ? (JSON.parse(text) as any) : text,
    text,
  };
}

/** The tools an MCP client authorized with `token` is offered. */
async function mcpToolNames(token: string): Promise<string[]> {
  const client = new Client({ name: 'oauth-lister', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
}

const hello = (token: string | undefined) =>
  call('/v1/tools/agent_hello_world/invoke', token, { body: { arguments: { name: 'Ada' } } });

describe('Protected Resource Metadata (RFC 9728)', () => {
  it('is served without a credential and names the resource, its one authorization server and the scopes', async () => {
    const answer = await call('/.well-known/oauth-protected-resource', undefined);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      resource,
      authorization_servers: [issuer.issuer],
      scopes_supported: ['tools:hello', 'tools:testing', 'approvals', 'admin'],
      bearer_methods_supported: ['header'],
      resource_name: 'Aptix host',
    });
  });

  it('a 401 on HTTP and on MCP points to it (WWW-Authenticate: Bearer resource_metadata=…, with the scopes)', async () => {
    const expected = `Bearer realm="aptix", resource_metadata="${resource}/.well-known/oauth-protected-resource", scope="tools:hello tools:testing approvals admin"`;
    const http = await call('/v1/tools', undefined);
    expect(http.status).toBe(401);
    expect(http.challenge).toBe(expected);
    expect(http.body.error.code).toBe('UNAUTHORIZED');
    const mcp = await call('/mcp', undefined, { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(mcp.status).toBe(401);
    expect(mcp.challenge).toBe(expected);
  });
});

describe('a resource with a path (https://host/mcp)', () => {
  it('serves the metadata at the well-known URI with that path appended (RFC 9728 §3.1) and at the bare one, and its challenges name the former', async () => {
    const port = await freePort();
    const mcpResource = `http://127.0.0.1:${port}/mcp`;
    const pathed = await startRouteHost({
      port,
      file: {
        oauth: {
          issuer: issuer.issuer,
          resource: mcpResource,
          scopes: { 'tools:hello': { tools: ['agent_hello_world'] } },
        },
      },
    });
    try {
      for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const answer = await fetch(`${pathed.url}${path}`);
        expect(answer.status, path).toBe(200);
        expect(((await answer.json()) as { resource: string }).resource).toBe(mcpResource);
      }
      const challenge = (await fetch(`${pathed.url}/mcp`, { method: 'POST' })).headers.get('www-authenticate');
      expect(challenge).toContain(
        `resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp"`,
      );
      // A token for that resource is accepted; one for the host's origin alone is not.
      const token = await issuer.clientCredentials(mcpResource, 'tools:hello');
      const answer = await fetch(`${pathed.url}/v1/tools`, { headers: { authorization: `Bearer ${token}` } });
      expect(answer.status).toBe(200);
      const origin = await issuer.clientCredentials(`http://127.0.0.1:${port}`, 'tools:hello');
      expect((await fetch(`${pathed.url}/v1/tools`, { headers: { authorization: `Bearer ${origin}` } })).status).toBe(
        401,
      );
    } finally {
      await pathed.close();
    }
  });
});

describe('tokens from the authorization server', () => {
  it('a service with the client credentials grant calls what its scope allows, and is refused the rest (403 insufficient_scope)', async () => {
    const token = await issuer.clientCredentials(resource, 'tools:hello');
    const allowed = await hello(token);
    expect(allowed.status).toBe(200);
    expect(allowed.body.result).toMatchObject({ message: expect.stringContaining('Ada') });

    const refused = await call('/v1/tools/testing_calculator/invoke', token, {
      body: { arguments: { operation: 'add', a: 1, b: 2 } },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect(refused.body.error.message).toContain('tools: testing_calculator');
    expect(refused.challenge).toContain('error="insufficient_scope"');
    expect(refused.text).not.toContain(token);

    const admin = await call('/v1/approvals', token);
    expect(admin.status).toBe(403);
    expect(admin.body.error.message).toContain('admin');
  });

  it('a token with several scopes may do what any of them grants; its tool list holds only those tools', async () => {
    const token = await issuer.clientCredentials(resource, 'tools:hello admin');
    expect((await hello(token)).status).toBe(200);
    expect((await call('/v1/approvals', token)).status).toBe(200);
    const tools = await call('/v1/tools', token);
    expect(tools.body.tools.map((tool: { name: string }) => tool.name)).toEqual(['agent_hello_world']);
  });

  it('over MCP, a tool the scope does not allow is neither listed nor run', async () => {
    const token = await issuer.clientCredentials(resource, 'tools:hello');
    const client = new Client({ name: 'oauth-service', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).not.toContain('testing_calculator');
      const refused = await client.callTool({
        name: 'testing_calculator',
        arguments: { operation: 'add', a: 1, b: 2 },
      });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('tools: testing_calculator');
      const allowed = await client.callTool({ name: 'agent_hello_world', arguments: { name: 'Grace' } });
      expect(allowed.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('the principal is the token subject, "oauth:<sub>": its sessions are its own, and neither a key nor another subject sees them', async () => {
    const service = await issuer.clientCredentials(resource, 'tools:hello');
    const created = await call('/v1/sessions', service, { body: {} });
    expect(created.status).toBe(201);
    expect((await call(`/v1/sessions/${created.body.id}`, service)).status).toBe(200);
    const other = await craftToken(issuer.key, { sub: 'someone-else' }, { issuer: issuer.issuer, audience: resource });
    const theirs = await call(`/v1/sessions/${created.body.id}`, other);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('SESSION_NOT_FOUND');
  });

  it('two tokens of one subject with different scopes, used at the same time, each keep their own permissions (a narrow token is never widened by a wide one in flight)', async () => {
    const token = (scope: string) =>
      craftToken(issuer.key, { sub: 'alice', scope }, { issuer: issuer.issuer, audience: resource });
    const [narrow, wide] = await Promise.all([token('tools:hello'), token('tools:testing')]);
    const ping = (bearer: string) =>
      call('/v1/tools/testing_ping_pong/invoke', bearer, { body: { arguments: { message: 'hi' } } });
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => ping(i % 2 === 0 ? narrow : wide)));
    expect(answers.map((answer) => answer.status)).toEqual(
      Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? 403 : 200)),
    );
    // Over MCP too: each list is its own.
    const [narrowList, wideList] = await Promise.all([mcpToolNames(narrow), mcpToolNames(wide)]);
    expect(narrowList).toContain('agent_hello_world');
    expect(narrowList).not.toContain('testing_calculator');
    expect(wideList).toContain('testing_calculator');
    expect(wideList).not.toContain('agent_hello_world');
  });

  it('GET /v1/principal tells a token what it may do: its principal, its scopes, and the tools they allow', async () => {
    const token = await issuer.clientCredentials(resource, 'tools:hello approvals');
    const answer = await call('/v1/principal', token);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      principal: expect.stringMatching(/^oauth:/),
      via: 'oauth',
      scopes: ['approvals', 'tools:hello'],
      tools: ['agent_hello_world'],
      modes: expect.arrayContaining(['general']),
      approve: ['testing_issue_refund'],
      admin: false,
      sessions: 'own',
    });
    expect(answer.text).not.toContain(token);
  });

  it('API keys keep working beside OAuth', async () => {
    expect((await hello(OPS_KEY)).status).toBe(200);
    expect((await call('/v1/approvals', OPS_KEY)).status).toBe(200);
  });
});

describe('each refused token answers 401 invalid_token, names what is wrong, and never echoes the token', () => {
  async function refused(token: string, reason: RegExp) {
    const answer = await hello(token);
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('UNAUTHORIZED');
    expect(answer.body.error.message).toMatch(reason);
    expect(answer.challenge).toContain('error="invalid_token"');
    expect(answer.challenge).toContain(`resource_metadata="${resource}/.well-known/oauth-protected-resource"`);
    expect(answer.text + answer.challenge).not.toContain(token);
  }

  it('expired', async () => {
    const token = await craftToken(
      issuer.key,
      {},
      { issuer: issuer.issuer, audience: resource, expiresIn: Math.floor(Date.now() / 1000) - 3600 },
    );
    await refused(token, /expired/);
  });

  it('for another audience', async () => {
    const token = await craftToken(issuer.key, {}, { issuer: issuer.issuer, audience: 'https://elsewhere.example' });
    await refused(token, /not for this resource/);
  });

  it('a real token the authorization server issued for another resource', async () => {
    const token = await issuer.clientCredentials('https://other-resource.example/mcp', 'tools:hello');
    await refused(token, /not for this resource/);
  });

  it('from another issuer, even signed with the right key', async () => {
    const token = await craftToken(issuer.key, {}, { issuer: 'https://evil.example', audience: resource });
    await refused(token, new RegExp(`not issued by ${issuer.issuer}`));
  });

  it('signed with a key the issuer does not publish (unknown kid): the keys are fetched once more, then the token is refused', async () => {
    await hello(await issuer.clientCredentials(resource, 'tools:hello'));
    const before = issuer.keyFetches;
    const stranger = await signingKey('not-published');
    await refused(
      await craftToken(stranger, {}, { issuer: issuer.issuer, audience: resource }),
      /key that .* does not publish/,
    );
    expect(issuer.keyFetches).toBe(before + 1);
  });

  it('a known kid with another key behind it: the signature does not verify', async () => {
    const impostor = { ...(await signingKey(issuer.key.kid)) };
    await refused(await craftToken(impostor, {}, { issuer: issuer.issuer, audience: resource }), /signature/);
  });

  it('alg none (an unsigned token)', async () => {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const token = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ iss: issuer.issuer, aud: resource, sub: 'x', exp: now + 300, scope: 'admin' })}.`;
    await refused(token, /algorithm this host does not accept/);
  });

  it('an HS256 token signed with a guessable secret', async () => {
    const { SignJWT } = await import('jose');
    const token = await new SignJWT({ scope: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(issuer.issuer)
      .setAudience(resource)
      .setSubject('x')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('secret'));
    await refused(token, /algorithm this host does not accept/);
  });

  it('not a JWT at all', async () => {
    await refused('definitely-not-a-jwt-nor-a-key', /not a well-formed signed JWT/);
  });
});

describe('key rotation at the issuer', () => {
  it('after a rotation, a token signed with the new key is accepted (the keys are fetched again), and the old key no longer is', async () => {
    const old = issuer.key;
    await issuer.rotate();
    const token = await issuer.clientCredentials(resource, 'tools:hello');
    expect((await hello(token)).status).toBe(200);
    const stale = await craftToken(old, {}, { issuer: issuer.issuer, audience: resource });
    const answer = await hello(stale);
    expect(answer.status).toBe(401);
    expect(answer.body.error.message).toMatch(/does not publish/);
  });
});

describe('verified tokens kept between requests', () => {
  it('a token that verified is refused once the issuer withdrew its key: the keys fetched again drop what was kept', async () => {
    const old = issuer.key;
    const token = await craftToken(old, {}, { issuer: issuer.issuer, audience: resource });
    expect((await hello(token)).status).toBe(200);
    expect((await hello(token)).status).toBe(200);
    await issuer.rotate();
    // A token of the new key makes the host fetch the keys again.
    expect((await hello(await issuer.clientCredentials(resource, 'tools:hello'))).status).toBe(200);
    const answer = await hello(token);
    expect(answer.status).toBe(401);
    expect(answer.body.error.message).toMatch(/does not publish/);
  });

  it('a token that verified is refused once it expired, though it was kept', async () => {
    // exp 7 s ahead: past the host's 5 s clock tolerance, 2 s after exp, the token is refused.
    const exp = Math.floor(Date.now() / 1000) + 7;
    const token = await craftToken(issuer.key, {}, { issuer: issuer.issuer, audience: resource, expiresIn: exp });
    expect((await hello(token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (exp + 6) * 1000 - Date.now())));
    const answer = await hello(token);
    expect(answer.status).toBe(401);
    expect(answer.body.error.message).toMatch(/expired/);
  }, 20_000);
});

describe('an authorization server that cannot be reached', () => {
  it('answers tokens 503 NOT_READY, saying so without the token, while API keys keep working', async () => {
    const port = await freePort();
    const gone = await startRouteHost({
      file: {
        apiKeys: [`ops=${OPS_KEY}`],
        // Nothing listens there: neither the issuer's metadata nor its keys can be fetched.
        oauth: { issuer: `http://127.0.0.1:${port}`, resource: 'http://127.0.0.1:1', scopes: { any: { admin: true } } },
      },
    });
    try {
      const token = await craftToken(
        issuer.key,
        {},
        { issuer: `http://127.0.0.1:${port}`, audience: 'http://127.0.0.1:1' },
      );
      const refused = await fetch(`${gone.url}/v1/tools`, { headers: { authorization: `Bearer ${token}` } });
      const text = await refused.text();
      expect(refused.status).toBe(503);
      expect(JSON.parse(text).error.code).toBe('NOT_READY');
      expect(text).toContain('could not be fetched');
      expect(text).not.toContain(token);
      const keyed = await fetch(`${gone.url}/v1/tools`, { headers: { authorization: `Bearer ${OPS_KEY}` } });
      expect(keyed.status).toBe(200);
    } finally {
      await gone.close();
    }
  });
});

describe("an attacker's tokens", () => {
  const crafted = (claims: Record<string, unknown>) =>
    craftToken(issuer.key, claims, { issuer: issuer.issuer, audience: resource });

  it('a token whose subject is an API key name is oauth:<that name>, a principal of its own: it never sees the key holder sessions', async () => {
    const created = await call('/v1/sessions', OPS_KEY, { body: {} });
    const posing = await crafted({ sub: 'ops', scope: 'tools:hello' });
    expect((await call('/v1/principal', posing)).body.principal).toBe('oauth:ops');
    const theirs = await call(`/v1/sessions/${created.body.id}`, posing);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('SESSION_NOT_FOUND');
  });

  it('a subject with control characters, an empty one, or one past 200 characters is refused', async () => {
    for (const sub of ['line\nbreak', '', 'x'.repeat(201)]) {
      const answer = await hello(await crafted({ sub }));
      expect(answer.status, JSON.stringify(sub)).toBe(401);
      expect(answer.challenge).toContain('error="invalid_token"');
    }
  });

  it('a scope the host does not know grants nothing, and an admin scope grants no tool', async () => {
    expect((await hello(await crafted({ scope: 'tools:everything root' }))).status).toBe(403);
    expect((await hello(await crafted({ scope: 'admin' }))).status).toBe(403);
    expect((await hello(await crafted({ scope: ['tools:hello'] }))).status).toBe(200);
  });

  it('a token without exp is refused: the host accepts only tokens that expire', async () => {
    const { SignJWT } = await import('jose');
    const token = await new SignJWT({ scope: 'tools:hello' })
      .setProtectedHeader({ alg: 'RS256', kid: issuer.key.kid })
      .setIssuer(issuer.issuer)
      .setAudience(resource)
      .setSubject('no-expiry')
      .sign(issuer.key.privateKey);
    const answer = await hello(token);
    expect(answer.status).toBe(401);
    expect(answer.body.error.message).toContain('exp');
  });

  it('odd spellings: a lowercase scheme is accepted, a token in the query or a second Authorization header is not', async () => {
    const token = await crafted({});
    const lower = await fetch(`${host.url}/v1/tools`, { headers: { authorization: `bearer ${token}` } });
    expect(lower.status).toBe(200);
    const query = await fetch(`${host.url}/v1/tools?access_token=${token}`);
    expect(query.status).toBe(401);
    // Two header lines (fetch would join them into one): node:http sends an array as repeated lines.
    const twice = await new Promise<number>((resolve, reject) => {
      const sent = request(`${host.url}/v1/tools`, {
        headers: { Authorization: [`Bearer ${token}`, `Bearer ${token}`] },
      });
      sent.on('response', (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      sent.on('error', reject);
      sent.end();
    });
    expect(twice).toBe(400);
  });

  it('a kid that is not a key id, and a header 8 KiB long, are refused cleanly (401, no fetch storm)', async () => {
    const before = issuer.keyFetches;
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const forged = `${encode({ alg: 'RS256', kid: '../../etc/passwd' })}.${encode({ sub: 'x' })}.c2ln`;
    expect((await hello(forged)).status).toBe(401);
    const long = `${encode({ alg: 'RS256', kid: 'k'.repeat(6000) })}.${encode({ sub: 'x' })}.c2ln`;
    expect((await hello(long)).status).toBe(401);
    // jwksCooldownSeconds is 0 here: at most one fetch per unknown kid, none for a malformed token.
    expect(issuer.keyFetches - before).toBeLessThanOrEqual(2);
  });
});

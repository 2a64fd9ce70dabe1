/**
 * A real authorization server for the OAuth tests: `oidc-provider` (a certified OpenID provider) on
 * loopback, issuing JWT access tokens for any resource a client names (RFC 8707), with client
 * credentials, dynamic client registration, authorization code with PKCE and its development login and
 * consent pages (any login, any password). Its signing keys can be rotated while it runs: the server
 * behind the port is swapped for one with the new key first, as an issuer rotates its keys.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** The scopes the test resource servers know; the provider grants what a client asks of them. */
export const RESOURCE_SCOPES = ['tools:hello', 'tools:testing', 'approvals', 'admin'] as const;

/** A confidential client for the client credentials grant (a service). */
export const SERVICE_CLIENT = { id: 'refund-service', secret: 'refund-service-secret-0123456789abcdef' } as const;

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  readonly jwk: JWK;
}

export interface AuthorizationServer {
  /** The issuer, as tokens write `iss`. */
  readonly issuer: string;
  /** The key the server signs with now. */
  readonly key: SigningKey;
  /** How often its key set (jwks_uri) was fetched. */
  readonly keyFetches: number;
  /** A client credentials token for `resource` with `scope`. */
  clientCredentials(resource: string, scope: string): Promise<string>;
  /** Replaces the signing key: tokens are signed, and the key set published, with a new key only. */
  rotate(): Promise<SigningKey>;
  close(): Promise<void>;
}

/** A fresh RSA signing key with its own kid. */
export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** Starts the server on a free loopback port. */
export async function startAuthorizationServer(): Promise<AuthorizationServer> {
  let keyFetches = 0;
  let provider: Provider | undefined;
  const server: Server = createServer((request, response) => {
    if (request.url?.startsWith('/jwks')) keyFetches += 1;
    // oidc-provider's callback answers its own errors; its promise only says when it is done.
    void provider!.callback()(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let key = await signingKey('key-1');
  let generation = 1;
  provider = makeProvider(issuer, key);
  return {
    issuer,
    get key() {
      return key;
    },
    get keyFetches() {
      return keyFetches;
    },
    async clientCredentials(resource, scope) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${SERVICE_CLIENT.id}:${SERVICE_CLIENT.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (body.access_token === undefined) throw new Error(`token endpoint: ${body.error}: ${body.error_description}`);
      return body.access_token;
    },
    async rotate() {
      generation += 1;
      key = await signingKey(`key-${generation}`);
      provider = makeProvider(issuer, key);
      return key;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function makeProvider(issuer: string, key: SigningKey): Provider {
  return new Provider(issuer, {
    jwks: { keys: [key.jwk] },
    clients: [
      {
        client_id: SERVICE_CLIENT.id,
        client_secret: SERVICE_CLIENT.secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      },
    ],
    scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES],
    features: {
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A client that names no resource gets one for the issuer's userinfo only (no JWT for a host).
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: RESOURCE_SCOPES.join(' '),
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    // A public client (the MCP clients register as one) must use PKCE; every client may here.
    pkce: { required: () => true },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    ttl: { AccessToken: 300, ClientCredentials: 300, Grant: 3600, Interaction: 600, Session: 3600 },
  });
}

/** A token signed as the test wishes: the failure tests use it with the server's own key, or another. */
export function craftToken(
  key: SigningKey,
  claims: Record<string, unknown>,
  options: { readonly issuer: string; readonly audience: string; readonly expiresIn?: string | number },
): Promise<string> {
  return new SignJWT({ scope: 'tools:hello', ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt' })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setSubject(typeof claims.sub === 'string' ? claims.sub : 'crafted-subject')
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '5m')
    .sign(key.privateKey);
}

/**
 * A real authorization server for the OAuth client suite: `oidc-provider` on loopback, with dynamic
 * client registration, authorization code with PKCE (its development login and consent pages: any
 * login, any password), client credentials for a service, and JWT access tokens for the resource a
 * client names (RFC 8707). `signIn` plays the person at the browser over plain HTTP: it follows the
 * redirects, signs in, consents, and hands back the redirect to the client's callback.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/** What the server grants for a resource; the host also knows tools:testing, which it never grants. */
export const SCOPES = ['tools:hello', 'admin'] as const;
export const SERVICE = { id: 'nightly-report', secret: 'nightly-report-secret-0123456789abcdef' } as const;

export interface AuthorizationServer {
  readonly issuer: string;
  /** Follows an authorization URL as a browser would, signing in as `login` and consenting: the callback URL it ends at (with code and state). */
  signIn(authorizationUrl: URL | string, login: string): Promise<URL>;
  close(): Promise<void>;
}

export async function startAuthorizationServer(): Promise<AuthorizationServer> {
  let provider: Provider | undefined;
  const server = createServer((request, response) => void provider!.callback()(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  provider = new Provider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'e2e-key', alg: 'RS256', use: 'sig' }] },
    clients: [
      {
        client_id: SERVICE.id,
        client_secret: SERVICE.secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      },
    ],
    scopes: ['openid', 'offline_access', 'tools:testing', ...SCOPES],
    features: {
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: SCOPES.join(' '),
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt' as const,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    pkce: { required: () => true },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    ttl: { AccessToken: 300, ClientCredentials: 300, Grant: 600, Interaction: 600, RefreshToken: 600, Session: 600 },
  });
  return {
    issuer,
    signIn: (authorizationUrl, login) => signIn(issuer, new URL(authorizationUrl), login),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The person at the browser: redirects followed by hand (cookies kept), the login and consent forms posted. */
async function signIn(issuer: string, start: URL, login: string): Promise<URL> {
  const cookies = new Map<string, string>();
  let url = start;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 12; step += 1) {
    if (url.origin !== issuer) return url; // The redirect to the client's callback: not followed.
    const response = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form === undefined ? {} : { body: form }),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const equals = pair!.indexOf('=');
      cookies.set(pair!.slice(0, equals), pair!.slice(equals + 1));
    }
    form = undefined;
    const location = response.headers.get('location');
    if (location !== null) {
      await response.body?.cancel();
      url = new URL(location, url);
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${page.slice(0, 500)}`);
    // The login page, then the consent page: each a form posting back to the interaction.
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
    if (action === undefined || prompt === undefined) throw new Error(`no form on ${url}: ${page.slice(0, 500)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url);
    form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
  }
  throw new Error('the sign-in did not end at the callback within 12 steps');
}

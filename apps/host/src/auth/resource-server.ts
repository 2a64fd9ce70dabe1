import type { FastifyInstance } from 'fastify';
import type { ApiKey } from '../api-keys.js';
import { sendError } from '../http/errors.js';
import { actAs, bearerToken, isPublicRoute, keyMatcher, refuseDuplicateAuthorization } from '../http/security.js';
import type { OAuthConfig } from './oauth-config.js';
import { runAsToken, TOKEN_PRINCIPAL_PREFIX, TokenPermissions, type ScopedPermissions } from './token-principals.js';
import { AuthorizationServerUnavailable, TokenVerifier } from './token-verifier.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** What the request's OAuth token may do; undefined for an API key. */
    tokenPermissions: ScopedPermissions | undefined;
  }
}

/** Where Protected Resource Metadata is served (RFC 9728 §3), before the resource's own path. */
export const METADATA_PATH = '/.well-known/oauth-protected-resource';

/** Protected Resource Metadata (RFC 9728 §2), as the MCP authorization specification asks a server to publish. */
export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly resource_name: string;
}

/**
 * The host as an OAuth 2.1 resource server (issue 32), beside its API keys: it publishes Protected
 * Resource Metadata naming the one authorization server it trusts, accepts that server's access tokens
 * (JWT, verified by TokenVerifier) as well as the keys, and answers a missing or refused credential
 * with a 401 whose `WWW-Authenticate` leads a client to the metadata (RFC 6750 §3, RFC 9728 §5.1).
 * The host never issues tokens itself.
 */
export function registerResourceServer(app: FastifyInstance, config: OAuthConfig, keys: readonly ApiKey[]): void {
  const permissions = new TokenPermissions(config.scopes);
  const verifier = new TokenVerifier(config);
  const matchKey = keyMatcher(keys);
  const metadataUrl = metadataUrlOf(config);
  const resourcePath = metadataUrl.slice(metadataUrl.indexOf(METADATA_PATH) + METADATA_PATH.length);
  const metadata: ProtectedResourceMetadata = Object.freeze({
    resource: config.resource,
    authorization_servers: [config.issuer],
    scopes_supported: permissions.known,
    bearer_methods_supported: ['header'],
    resource_name: 'Aptix host',
  });
  const base = `Bearer realm="aptix", resource_metadata="${metadataUrl}"`;
  const scope = permissions.known.length === 0 ? '' : `, scope="${permissions.known.join(' ')}"`;

  // The metadata at the well-known URI of the resource (its path appended, RFC 9728 §3.1), and at the
  // bare one, which clients try when the resource has a path and they did not get the header.
  const serve = () => metadata;
  app.get(METADATA_PATH, { schema: { hide: true } }, serve);
  if (resourcePath !== '') app.get(`${METADATA_PATH}${resourcePath}`, { schema: { hide: true } }, serve);

  app.decorateRequest('tokenPermissions', undefined);
  app.addHook('onRequest', (request, reply, done) => {
    if (isPublicRoute(request.routeOptions.url)) return done();
    if (refuseDuplicateAuthorization(request, reply)) return;
    const given = bearerToken(request);
    if (given === undefined) {
      // No credential: the challenge without an error code (RFC 6750 §3.1).
      void reply.header('www-authenticate', `${base}${scope}`);
      return void sendError(
        reply,
        'UNAUTHORIZED',
        `This host requires an access token from ${config.issuer} or an API key: send the header "Authorization: Bearer <token>". How to get a token: ${metadataUrl}.`,
      );
    }
    const key = matchKey(given);
    if (key !== undefined) {
      actAs(request, reply, key);
      return done();
    }
    verifier.verify(given).then(
      (verified) => {
        if ('kind' in verified) {
          void reply.header(
            'www-authenticate',
            `${base}, error="invalid_token", error_description="${headerSafe(verified.reason)}"`,
          );
          return void sendError(reply, 'UNAUTHORIZED', `The access token was refused: ${verified.reason}.`);
        }
        const granted = permissions.of(`${TOKEN_PRINCIPAL_PREFIX}${verified.subject}`, verified.scopes);
        request.tokenPermissions = granted;
        actAs(request, reply, granted.name!);
        runAsToken(granted, done);
      },
      (error: unknown) => {
        if (!(error instanceof AuthorizationServerUnavailable)) {
          request.log.error({ err: error }, 'access token check failed');
          return void sendError(
            reply,
            'INTERNAL',
            'The host failed to check the access token. See the host logs for the request id.',
          );
        }
        request.log.warn({ err: error }, 'access token not checked: the authorization server is unavailable');
        void sendError(
          reply,
          'NOT_READY',
          `The host cannot check access tokens now: the signing keys of ${config.issuer} could not be fetched. Retry shortly, or use an API key.`,
        );
      },
    );
  });
  // The body is read from socket events, outside the request's async context: the token's permissions
  // are entered again for the handler and everything it starts.
  app.addHook('preHandler', (request, _reply, done) => {
    if (request.tokenPermissions === undefined) return done();
    runAsToken(request.tokenPermissions, done);
  });
  // A refusal of a token principal says which scheme to step up in (RFC 6750 §3.1, insufficient_scope).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 403 && request.tokenPermissions !== undefined)
      void reply.header('www-authenticate', `${base}, error="insufficient_scope"${scope}`);
    done(null, payload);
  });
}

/** The URL of a resource's metadata, as its challenge names it: the well-known path, then the resource's own path. */
export function metadataUrlOf(config: Pick<OAuthConfig, 'resource'>): string {
  const resource = new URL(config.resource);
  const path = resource.pathname === '/' ? '' : resource.pathname.replace(/\/$/, '');
  return `${resource.origin}${METADATA_PATH}${path}`;
}

/** Text as an auth-param's quoted value may hold it (RFC 6750 §3: no `"` nor `\`, printable ASCII). */
function headerSafe(text: string): string {
  return text.replace(/"/g, "'").replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, '?');
}

import { Type, type Static } from 'typebox';
import type { PrincipalEntry } from '../permissions.js';
import { PrincipalPermissions } from './permissions-schema.js';

/**
 * The signature algorithms a token may be signed with. Asymmetric only: the host holds no shared
 * secret with the authorization server, and `none` (an unsigned token) is never on the list.
 */
export const TOKEN_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

/** The algorithms accepted when `oauth.algorithms` is not set. */
export const DEFAULT_TOKEN_ALGORITHMS: readonly string[] = ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'];

/** A scope as RFC 6749 writes one: printable ASCII without space, `"` or `\`. */
const SCOPE_PATTERN = '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,128}$';

/** `oauth` in `aptix.config.json`: the host as an OAuth 2.1 resource server (docs/hosting.md, "OAuth"). */
export const OAuthConfigFile = Type.Object(
  {
    issuer: Type.String({
      minLength: 1,
      description:
        'The authorization server the host trusts, exactly as its tokens write `iss` (e.g. https://tenant.eu.auth0.com/). The host is never its own authorization server.',
    }),
    resource: Type.String({
      minLength: 1,
      description:
        "This host's URL as clients reach it (e.g. https://tools.example.com): the resource its Protected Resource Metadata names and the audience tokens must carry.",
    }),
    audience: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description:
          'The `aud` values accepted instead of resource, for servers that name an API otherwise (an Entra application ID URI, say). Default: [resource].',
      }),
    ),
    jwksUri: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "Where the issuer's signing keys are. Default: the jwks_uri of the issuer's metadata (/.well-known/openid-configuration, then /.well-known/oauth-authorization-server).",
      }),
    ),
    algorithms: Type.Optional(
      Type.Array(Type.Union(TOKEN_ALGORITHMS.map((alg) => Type.Literal(alg))), {
        minItems: 1,
        description: `The signature algorithms accepted (default ${DEFAULT_TOKEN_ALGORITHMS.join(', ')}). Never none, never a shared-secret (HS*) algorithm.`,
      }),
    ),
    scopes: Type.Record(Type.String({ pattern: SCOPE_PATTERN }), PrincipalPermissions, {
      description:
        "What each scope grants, written as a principal's permissions. A token may do what any of " +
        'its scopes grants; a scope not listed grants nothing. E.g. { "tools:refund": { "tools": ' +
        '["refund"] }, "approvals": { "approve": true } }.',
    }),
    principalClaim: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'The claim that names the principal (default sub): sessions belong to it, and it is recorded as who asked for and who decided an approval, as "oauth:<value>".',
      }),
    ),
    scopeClaim: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'The claim holding the granted scopes, space-separated or an array (default scope; Microsoft Entra writes scp).',
      }),
    ),
    clockToleranceSeconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 300, description: 'Leeway for exp and nbf (default 5).' }),
    ),
    jwksCooldownSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 3600,
        description:
          'A token signed with a key the host does not know makes it fetch the keys again (the issuer rotated them), at most once in this many seconds (default 30).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type OAuthConfigFile = Static<typeof OAuthConfigFile>;

/** The resolved `oauth` settings a host runs with. */
export interface OAuthConfig {
  readonly issuer: string;
  /** The resource URL as configured (no query, no fragment). */
  readonly resource: string;
  readonly audience: readonly string[];
  readonly jwksUri: string | undefined;
  readonly algorithms: readonly string[];
  readonly scopes: Readonly<Record<string, PrincipalEntry>>;
  readonly principalClaim: string;
  readonly scopeClaim: string;
  readonly clockToleranceSeconds: number;
  readonly jwksCooldownSeconds: number;
}

/**
 * Resolves the file's `oauth` section, checking what a schema cannot: the URLs parse, are https (or
 * http on a loopback name, for development and tests), and the resource has no query or fragment.
 * Throws a plain Error naming the field and the fix.
 */
export function resolveOAuthConfig(file: OAuthConfigFile): OAuthConfig {
  const resource = checkedUrl(file.resource, 'oauth.resource');
  if (resource.search !== '' || resource.hash !== '')
    throw new Error(
      `oauth.resource "${file.resource}" has a query or a fragment. Fix: give the host's URL alone, e.g. https://tools.example.com.`,
    );
  checkedUrl(file.issuer, 'oauth.issuer');
  // The schema's key pattern is not enforced on a record's keys: a scope with a space could never be granted.
  for (const scope of Object.keys(file.scopes))
    if (!new RegExp(SCOPE_PATTERN).test(scope))
      throw new Error(
        `oauth.scopes names ${JSON.stringify(scope)}, which is not a scope: a scope is 1 to 128 ` +
          `printable characters without spaces, quotes or backslashes. Fix: use the scope exactly as ` +
          `the authorization server grants it.`,
      );
  if (file.jwksUri !== undefined) checkedUrl(file.jwksUri, 'oauth.jwksUri');
  return {
    issuer: file.issuer,
    resource: file.resource,
    // Clients send the resource as they read it, or as their URL parser writes it (https://host/ for https://host).
    audience: file.audience ?? [...new Set([file.resource, resource.href])],
    jwksUri: file.jwksUri,
    algorithms: file.algorithms ?? DEFAULT_TOKEN_ALGORITHMS,
    scopes: file.scopes,
    principalClaim: file.principalClaim ?? 'sub',
    scopeClaim: file.scopeClaim ?? 'scope',
    clockToleranceSeconds: file.clockToleranceSeconds ?? 5,
    jwksCooldownSeconds: file.jwksCooldownSeconds ?? 30,
  };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

function checkedUrl(value: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${field} "${value}" is not a URL. Fix: write an absolute https:// URL.`);
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_NAMES.has(url.hostname))) return url;
  throw new Error(
    `${field} "${value}" is not an https URL. Fix: use https:// (plain http is accepted only on localhost, 127.0.0.1 and [::1], for development).`,
  );
}

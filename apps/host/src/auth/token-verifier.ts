import { createRemoteJWKSet, errors, jwksCache, jwtVerify, type JWKSCacheInput, type JWTPayload } from 'jose';
import type { OAuthConfig } from './oauth-config.js';

/** A verified token: its principal's claim value and its granted scopes. */
export interface VerifiedToken {
  readonly subject: string;
  readonly scopes: readonly string[];
}

/** Why a token was refused, in words for its sender (never the token, nor a value read from it). */
export type TokenRefusal = { readonly kind: 'invalid'; readonly reason: string };

/** The authorization server could not be asked (its metadata or keys unreachable): not the token's fault. */
export class AuthorizationServerUnavailable extends Error {
  override readonly name = 'AuthorizationServerUnavailable';
}

/** How long a fetch of the issuer's metadata or keys may take. */
const FETCH_TIMEOUT_MS = 5_000;
/** Keys are fetched again at least this often even when every token's key is known (jose's cacheMaxAge). */
const KEYS_MAX_AGE_MS = 10 * 60_000;
/** A verified token is taken as verified again, without its signature checked, for at most this long (and never past its exp). */
const VERIFIED_MAX_AGE_MS = 60_000;
/** How many verified tokens are kept (the oldest is dropped first); only tokens that verified are kept. */
const VERIFIED_MAX_ENTRIES = 1_000;
/** Longest principal claim accepted: it becomes a session's owner, which the store bounds. */
const MAX_SUBJECT_LENGTH = 200;

/**
 * Verifies access tokens (JWT) against the configured issuer's keys (RFC 9068 with the MCP
 * authorization specification's checks): the signature with an allowed algorithm, `iss`, `aud` (this
 * resource), `exp` (required) and `nbf`. A token signed with a key not in the cached set makes jose
 * fetch the set again, at most once per cooldown, so a rotation at the issuer is picked up and a flood
 * of unknown kids costs one fetch.
 *
 * A token that verified is kept (at most a minute, never past its `exp`), so a client that sends the
 * same token on every request pays for one signature check, not one per request. What is kept is tied to
 * the key set it verified against: once the keys are fetched again (a rotation, or their ten-minute
 * age), every kept token is verified again, so a key the issuer withdrew stops being honoured as it
 * would without the cache.
 */
export class TokenVerifier {
  #keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  #finding: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  /**
   * jose's record of the key set it holds (its `jwksCache` option): jose puts each key set it fetches
   * here, as a new object, so the object's identity says which fetch a kept token was verified against.
   */
  readonly #keySet: JWKSCacheInput = {};
  readonly #verified = new Map<
    string,
    { readonly token: VerifiedToken; readonly until: number; readonly keySet: object | undefined }
  >();

  constructor(private readonly config: OAuthConfig) {}

  /** The token's principal and scopes, a refusal, or a throw of AuthorizationServerUnavailable. */
  async verify(token: string): Promise<VerifiedToken | TokenRefusal> {
    const keys = await this.#jwks();
    const kept = this.#verified.get(token);
    if (kept !== undefined) {
      if (Date.now() < kept.until && this.#keySet.jwks === kept.keySet) return kept.token;
      this.#verified.delete(token);
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.config.issuer,
        audience: [...this.config.audience],
        algorithms: [...this.config.algorithms],
        clockTolerance: this.config.clockToleranceSeconds,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      return { kind: 'invalid', reason: this.#why(error) };
    }
    const subject = payload[this.config.principalClaim];
    if (typeof subject !== 'string' || subject.length === 0 || subject.length > MAX_SUBJECT_LENGTH)
      return {
        kind: 'invalid',
        reason: `the token has no usable "${this.config.principalClaim}" claim (a string of 1 to ${MAX_SUBJECT_LENGTH} characters), which names its principal`,
      };
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(subject))
      return { kind: 'invalid', reason: `the token's "${this.config.principalClaim}" claim holds control characters` };
    const verified: VerifiedToken = { subject, scopes: scopesOf(payload[this.config.scopeClaim]) };
    this.#keep(token, verified, payload.exp, this.#keySet.jwks);
    return verified;
  }

  #keep(token: string, verified: VerifiedToken, exp: number | undefined, keySet: object | undefined): void {
    if (exp === undefined || keySet === undefined) return;
    const until = Math.min(Date.now() + VERIFIED_MAX_AGE_MS, exp * 1000);
    if (until <= Date.now()) return;
    if (this.#verified.size >= VERIFIED_MAX_ENTRIES) {
      const oldest = this.#verified.keys().next();
      if (oldest.done !== true) this.#verified.delete(oldest.value);
    }
    this.#verified.set(token, { token: verified, until, keySet });
  }

  #why(error: unknown): string {
    if (error instanceof errors.JWTExpired) return 'the token has expired; get a new one from the authorization server';
    if (error instanceof errors.JWTClaimValidationFailed) {
      if (error.claim === 'iss')
        return `the token was not issued by ${this.config.issuer}, the issuer this host trusts`;
      if (error.claim === 'aud')
        return `the token is not for this resource: its audience must be ${this.config.audience.join(' or ')} (ask the authorization server for a token with resource=${this.config.resource})`;
      if (error.claim === 'nbf') return 'the token is not valid yet (nbf is in the future)';
      if (error.claim === 'exp') return 'the token has no expiry (exp); this host accepts only tokens that expire';
      return `the token's "${error.claim}" claim is not valid`;
    }
    if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
      return `the token is signed with an algorithm this host does not accept (accepted: ${this.config.algorithms.join(', ')})`;
    if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
      return `the token is signed with a key that ${this.config.issuer} does not publish`;
    if (error instanceof errors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
    if (
      error instanceof errors.JWKSTimeout ||
      error instanceof errors.JWKSInvalid ||
      !(error instanceof errors.JOSEError)
    )
      throw new AuthorizationServerUnavailable(`The signing keys of ${this.config.issuer} could not be fetched.`, {
        cause: error,
      });
    return 'the token is not a well-formed signed JWT';
  }

  /** The issuer's key set: `jwksUri`, or the jwks_uri its metadata names (looked up once, again after a failure). */
  #jwks(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.#keys !== undefined) return Promise.resolve(this.#keys);
    this.#finding ??= this.#jwksUri()
      .then((uri) => {
        this.#keys = createRemoteJWKSet(new URL(uri), {
          timeoutDuration: FETCH_TIMEOUT_MS,
          cooldownDuration: this.config.jwksCooldownSeconds * 1000,
          cacheMaxAge: KEYS_MAX_AGE_MS,
          [jwksCache]: this.#keySet,
        });
        return this.#keys;
      })
      .finally(() => {
        this.#finding = undefined;
      });
    return this.#finding;
  }

  async #jwksUri(): Promise<string> {
    if (this.config.jwksUri !== undefined) return this.config.jwksUri;
    const issuer = this.config.issuer.replace(/\/$/, '');
    const url = new URL(this.config.issuer);
    const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
    const candidates = [
      `${issuer}/.well-known/openid-configuration`,
      `${url.origin}/.well-known/oauth-authorization-server${path}`,
    ];
    for (const candidate of candidates) {
      const metadata = await fetchJson(candidate).catch((error: unknown) => {
        throw new AuthorizationServerUnavailable(`The metadata of ${this.config.issuer} could not be fetched.`, {
          cause: error,
        });
      });
      if (metadata === undefined) continue;
      if (metadata.issuer !== this.config.issuer)
        throw new AuthorizationServerUnavailable(
          `The metadata at ${candidate} names issuer ${JSON.stringify(metadata.issuer)}, not ${this.config.issuer}; set oauth.issuer to the issuer exactly as the server writes it.`,
        );
      if (typeof metadata.jwks_uri === 'string') return metadata.jwks_uri;
    }
    throw new AuthorizationServerUnavailable(
      `${this.config.issuer} publishes no jwks_uri in its metadata; set oauth.jwksUri to the URL of its signing keys.`,
    );
  }
}

/** The metadata document at `url`, or undefined when there is none (404). */
async function fetchJson(url: string): Promise<Record<string, unknown> | undefined> {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
  if (response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const body = (await response.json()) as unknown;
  if (body === null || typeof body !== 'object') throw new Error(`${url} is not a JSON object`);
  return body as Record<string, unknown>;
}

/** The granted scopes: a space-separated string (RFC 9068 `scope`) or an array of strings. */
function scopesOf(claim: unknown): string[] {
  if (typeof claim === 'string') return claim.split(' ').filter(Boolean);
  if (Array.isArray(claim)) return claim.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

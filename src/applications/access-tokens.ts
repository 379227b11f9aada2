import { createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { ACCESS_TOKEN_LIFETIME_S, type Keystore } from '../keystore/index.js';
import type { Application } from './applications.js';
import { ChargegateError } from '../errors/index.js';

/** Claims of an access token, RFC 9068 section 2.2 (plus `groups`, section 2.2.3.1). */
export interface AccessTokenClaims extends JWTPayload {
  iss: string;
  aud: string;
  sub: string;
  client_id: string;
  scope: string;
  groups: string[];
  iat: number;
  exp: number;
  jti: string;
}

/** A bearer token the API must refuse with 401; `message` says why, for the WWW-Authenticate error_description. */
export class InvalidAccessTokenError extends ChargegateError {
  override name = 'InvalidAccessTokenError';
  readonly code = 'CHARGEGATE_INVALID_ACCESS_TOKEN';
}

const ACCESS_TOKEN_TYPE = 'at+jwt';

/**
 * Signs an access token for an application. The audience is the API, which lives at the issuer's base URL
 * (docs/partners/tokens.md#getting-a-token-partners: the token endpoint's URL is the issuer's).
 */
export async function issueAccessToken(options: {
  keystore: Keystore;
  issuer: string;
  application: Application;
  scope: string;
  now?: Date;
}): Promise<{ token: string; claims: AccessTokenClaims }> {
  const iat = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const claims: AccessTokenClaims = {
    iss: options.issuer,
    aud: options.issuer,
    sub: options.application.clientId,
    client_id: options.application.clientId,
    scope: options.scope,
    groups: options.application.groupIds,
    iat,
    exp: iat + ACCESS_TOKEN_LIFETIME_S,
    jti: randomUUID(),
  };
  const key = options.keystore.accessTokenSigningKey();
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, typ: ACCESS_TOKEN_TYPE, kid: key.kid })
    .sign(key.privateKey);
  return { token, claims };
}

/**
 * Verifies a token locally against the published access-token keys only (a webhook key never authenticates an
 * API call): RS256, typ at+jwt, our issuer and audience, not expired, every RFC 9068 claim present.
 */
export class AccessTokenVerifier {
  /** Public keys by kid, imported once and kept while the keystore publishes them. */
  private readonly imported = new Map<string, { n: string | undefined; key: KeyObject }>();

  constructor(private readonly options: { keystore: Keystore; issuer: () => string; now?: () => Date }) {}

  async verify(token: string): Promise<AccessTokenClaims> {
    const issuer = this.options.issuer();
    try {
      const { payload } = await jwtVerify(token, (header) => this.publishedKey(header.kid), {
        issuer,
        audience: issuer,
        algorithms: ['RS256'],
        typ: ACCESS_TOKEN_TYPE,
        requiredClaims: ['iss', 'aud', 'sub', 'client_id', 'scope', 'iat', 'exp', 'jti'],
        currentDate: this.options.now?.(),
      });
      if (
        typeof payload.client_id !== 'string' ||
        typeof payload.scope !== 'string' ||
        payload.client_id !== payload.sub
      )
        throw new InvalidAccessTokenError('token claims are malformed');
      return {
        ...payload,
        groups: Array.isArray(payload.groups) ? payload.groups.filter((g): g is string => typeof g === 'string') : [],
      } as AccessTokenClaims;
    } catch (err) {
      throw err instanceof InvalidAccessTokenError ? err : new InvalidAccessTokenError(describeJoseError(err));
    }
  }

  /**
   * The access-token key the keystore publishes under this kid right now. Asking the keystore on every call is
   * what honours a rotation at once: it costs a stat of the keystore file unless the file changed. Only the key
   * import is cached, per kid and modulus, and forgotten once the keystore stops publishing the kid.
   */
  private publishedKey(kid: string | undefined): KeyObject {
    const published = this.options.keystore.jwks('token').keys;
    const jwk = published.find((k) => k.kid === kid);
    if (!jwk) throw new errors.JWKSNoMatchingKey();
    const cached = this.imported.get(jwk.kid);
    if (cached && cached.n === jwk.n) return cached.key;
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    this.imported.set(jwk.kid, { n: jwk.n, key });
    for (const known of this.imported.keys()) if (!published.some((k) => k.kid === known)) this.imported.delete(known);
    return key;
  }
}

function describeJoseError(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'token expired';
  if (err instanceof errors.JWTClaimValidationFailed)
    return `token claim "${err.claim}" ${err.reason === 'missing' ? 'missing' : 'invalid'}`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'token signature invalid';
  if (err instanceof errors.JWKSNoMatchingKey) return 'token not signed by a published access-token key';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'token algorithm not allowed';
  if (err instanceof errors.JOSENotSupported) return 'token algorithm not supported';
  return 'token malformed';
}

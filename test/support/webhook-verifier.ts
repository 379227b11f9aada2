import {
  constants,
  createHash,
  createPublicKey,
  generateKeyPairSync,
  KeyObject,
  verify,
  type JsonWebKey,
} from 'node:crypto';
import { createRemoteJWKSet } from 'jose';
import type { IncomingHttpHeaders } from 'node:http';
import { createVerifier, httpbis } from 'http-message-signatures';
import type { WebhookSigningKeys } from '../../src/webhooks/index.js';

/** What a partner's receiver sees of a request. */
export interface SignedRequest {
  method: string;
  /** The request target as sent, e.g. /webhook/events. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const DOCUMENTED_INPUT = /^sig1=created=(\d+);keyId="([^"]*)";alg="([^"]*)";headers="([^"]*)"$/;
const SIGNATURE = /^sig1=:([A-Za-z0-9+/=]+):$/;
const KEYID = /;keyid="([^"]*)"/;

function header(request: SignedRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The `documented` profile, verified exactly as contract section 5 words it, with no code of ours: the RFC 9421
 * 2.5 base of "@method" "@path" "x-request-id", lines joined by \n, the "@signature-params" line serialising
 * created, keyid and alg; RSASSA-PSS SHA-256, MGF1-SHA-256, salt 32.
 */
export function verifyDocumentedSignature(request: SignedRequest, publicKey: KeyObject): boolean {
  const input = DOCUMENTED_INPUT.exec(header(request, 'signature-input') ?? '');
  const signature = SIGNATURE.exec(header(request, 'signature') ?? '');
  if (!input || !signature) return false;
  const [, created, keyId, alg, components] = input as unknown as [string, string, string, string, string];
  if (alg !== 'rsa-pss-sha256' || components !== '@method @path x-request-id') return false;
  const path = new URL(request.url, 'http://receiver').pathname;
  const base = [
    `"@method": ${request.method}`,
    `"@path": ${path}`,
    `"x-request-id": ${header(request, 'x-request-id') ?? ''}`,
    `"@signature-params": ("@method" "@path" "x-request-id");created=${created};keyid="${keyId}";alg="${alg}"`,
  ].join('\n');
  return verify(
    'sha256',
    Buffer.from(base),
    { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
    Buffer.from(signature[1]!, 'base64'),
  );
}

/** rfc9421's algorithm for a public key: ed25519 for an Ed25519 key, rsa-pss-sha512 for RSA. */
function rfc9421Alg(publicKey: KeyObject): 'ed25519' | 'rsa-pss-sha512' {
  return publicKey.asymmetricKeyType === 'ed25519' ? 'ed25519' : 'rsa-pss-sha512';
}

/** The RFC 9421 algorithm a JWK verifies, by its JOSE alg: what a partner maps when it looks a keyid up. */
const RFC9421_ALG_OF_JWS: Record<string, string> = { EdDSA: 'ed25519', PS256: 'rsa-pss-sha512' };

function headersOf(request: SignedRequest): Record<string, string | string[]> {
  return Object.fromEntries(
    Object.entries(request.headers).filter((e): e is [string, string | string[]] => e[1] !== undefined),
  );
}

function digestMatches(request: SignedRequest): boolean {
  return (
    header(request, 'content-digest') === `sha-256=:${createHash('sha256').update(request.body).digest('base64')}:`
  );
}

/**
 * The `rfc9421` profile, verified by the independent npm package http-message-signatures, plus the RFC 9530
 * Content-Digest against the body bytes received. The algorithm follows the key: ed25519 or rsa-pss-sha512.
 */
export async function verifyRfc9421Signature(request: SignedRequest, publicKey: KeyObject): Promise<boolean> {
  if (!digestMatches(request)) return false;
  const alg = rfc9421Alg(publicKey);
  try {
    const result = await httpbis.verifyMessage(
      {
        keyLookup: async () => ({ id: 'sign', algs: [alg], verify: createVerifier(publicKey, alg) }),
        requiredFields: ['@method', '@path', 'x-request-id', 'content-type', 'content-length', 'content-digest'],
        requiredParams: ['created', 'keyid', 'alg'],
        tolerance: 60,
      },
      { method: request.method, url: new URL(request.url, 'http://receiver'), headers: headersOf(request) },
    );
    return result === true;
  } catch {
    return false;
  }
}

/**
 * A partner's rfc9421 verifier with no chargegate-specific code: http-message-signatures looks the Signature-Input
 * keyid up in jose's createRemoteJWKSet, which caches keys by kid and fetches the JWKS again on an unknown one; the
 * JWK's alg (PS256 or EdDSA) must be the one the signature's alg needs. Returns the keyid that verified, or undefined.
 */
export function kidCachingRfc9421Verifier(
  jwksUrl: string,
  options: { cooldownDuration?: number } = {},
): (request: SignedRequest) => Promise<string | undefined> {
  const jwks = createRemoteJWKSet(new URL(jwksUrl), options);
  return async (request) => {
    let keyid: string | undefined;
    try {
      const verified = await httpbis.verifyMessage(
        {
          keyLookup: async (params) => {
            keyid = params.keyid;
            const jwsAlg = Object.keys(RFC9421_ALG_OF_JWS).find((a) => RFC9421_ALG_OF_JWS[a] === params.alg);
            if (!jwsAlg || !params.alg) return null;
            // jose finds the kid only under that JOSE alg: an Ed25519 kid never verifies as RSA, nor the reverse.
            const key = KeyObject.from(await jwks({ alg: jwsAlg, kid: params.keyid }));
            return { id: params.keyid, algs: [params.alg], verify: createVerifier(key, params.alg) };
          },
          requiredFields: ['@method', '@path', 'x-request-id', 'content-type', 'content-length', 'content-digest'],
          requiredParams: ['created', 'keyid', 'alg'],
          tolerance: 60,
        },
        { method: request.method, url: new URL(request.url, 'http://receiver'), headers: headersOf(request) },
      );
      return verified === true && digestMatches(request) ? keyid : undefined;
    } catch {
      return undefined;
    }
  };
}

/** Either profile, recognised by its Signature-Input form; the documented profile verifies with RSA keys only. */
export async function verifyWebhookSignature(request: SignedRequest, publicKey: KeyObject): Promise<boolean> {
  if (!DOCUMENTED_INPUT.test(header(request, 'signature-input') ?? ''))
    return verifyRfc9421Signature(request, publicKey);
  return publicKey.asymmetricKeyType === 'rsa' && verifyDocumentedSignature(request, publicKey);
}

/**
 * Webhook signing keys made outside the gateway: a unit test's, or a forger's that no JWKS publishes. The Ed25519
 * key is made here unless given.
 */
export function ownWebhookKeys(
  rsa: KeyObject,
  ed25519: KeyObject = generateKeyPairSync('ed25519').privateKey,
): WebhookSigningKeys {
  return { rsa: { id: 'webhook-own', privateKey: rsa }, ed25519: { id: 'ed25519-own', privateKey: ed25519 } };
}

export interface Jwk {
  kid?: string;
  kty?: string;
  crv?: string;
  use?: string;
  alg?: string;
}

/** The keys a JWKS endpoint publishes, as they came; throws on a non-2xx answer. */
export async function fetchJwks(jwksUrl: string | URL): Promise<Jwk[]> {
  const response = await fetch(jwksUrl);
  if (!response.ok) throw new Error(`JWKS ${String(jwksUrl)} answered ${response.status}`);
  const jwks = (await response.json()) as { keys?: Jwk[] };
  return jwks.keys ?? [];
}

/**
 * A partner's verifier against GET {issuer}/.well-known/jwks.json: the key the request names first (`sign` for the
 * documented profile, the keyid for rfc9421); on failure the JWKS is fetched again once and every webhook signing key
 * (RSA PS256, Ed25519) is tried, so a key rotation never rejects a genuine request.
 */
export class JwksWebhookVerifier {
  private keys: Array<{ kid: string; key: KeyObject }> = [];

  constructor(private readonly jwksUrl: string) {}

  /** The kid of the key that verified the request, or undefined when none did. */
  async verify(request: SignedRequest): Promise<string | undefined> {
    if (this.keys.length === 0) await this.refresh();
    const named = KEYID.exec(header(request, 'signature-input') ?? '')?.[1];
    const first = DOCUMENTED_INPUT.test(header(request, 'signature-input') ?? '') ? 'sign' : named;
    const preferred = this.keys.find((k) => k.kid === first);
    if (preferred && (await verifyWebhookSignature(request, preferred.key))) return preferred.kid;
    await this.refresh();
    for (const candidate of [...this.keys].sort((a, b) => Number(b.kid === first) - Number(a.kid === first))) {
      if (await verifyWebhookSignature(request, candidate.key)) return candidate.kid;
    }
    return undefined;
  }

  private async refresh(): Promise<void> {
    this.keys = (await fetchJwks(this.jwksUrl))
      .filter(
        (jwk) =>
          (jwk.use === undefined || jwk.use === 'sig') &&
          ((jwk.kty === 'RSA' && (jwk.alg === undefined || jwk.alg.startsWith('PS'))) ||
            (jwk.kty === 'OKP' && jwk.crv === 'Ed25519')),
      )
      .map((jwk) => ({ kid: jwk.kid ?? '', key: createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }) }));
  }
}

import { constants, createHash, createPublicKey, KeyObject, verify, type JsonWebKey } from 'node:crypto';
import { createRemoteJWKSet } from 'jose';
import type { IncomingHttpHeaders } from 'node:http';
import { createVerifier, httpbis } from 'http-message-signatures';

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

/**
 * The `rfc9421` profile, verified by the independent npm package http-message-signatures, plus the RFC 9530
 * Content-Digest against the body bytes received.
 */
export async function verifyRfc9421Signature(request: SignedRequest, publicKey: KeyObject): Promise<boolean> {
  const digest = `sha-256=:${createHash('sha256').update(request.body).digest('base64')}:`;
  if (header(request, 'content-digest') !== digest) return false;
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter((e): e is [string, string | string[]] => e[1] !== undefined),
  );
  try {
    const result = await httpbis.verifyMessage(
      {
        keyLookup: async () => ({
          id: 'sign',
          algs: ['rsa-pss-sha512'],
          verify: createVerifier(publicKey, 'rsa-pss-sha512'),
        }),
        requiredFields: ['@method', '@path', 'x-request-id', 'content-type', 'content-length', 'content-digest'],
        requiredParams: ['created', 'keyid', 'alg'],
        tolerance: 60,
      },
      { method: request.method, url: new URL(request.url, 'http://receiver'), headers },
    );
    return result === true;
  } catch {
    return false;
  }
}

/**
 * A partner's rfc9421 verifier with no chargegate-specific code: http-message-signatures looks the Signature-Input
 * keyid up in jose's createRemoteJWKSet, which caches keys by kid and fetches the JWKS again on an unknown one.
 * Returns the keyid that verified, or undefined.
 */
export function kidCachingRfc9421Verifier(
  jwksUrl: string,
  options: { cooldownDuration?: number } = {},
): (request: SignedRequest) => Promise<string | undefined> {
  const jwks = createRemoteJWKSet(new URL(jwksUrl), options);
  return async (request) => {
    let keyid: string | undefined;
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter((e): e is [string, string | string[]] => e[1] !== undefined),
    );
    try {
      const verified = await httpbis.verifyMessage(
        {
          keyLookup: async (params) => {
            keyid = params.keyid;
            // The JWK says PS256 (the documented profile's algorithm); the same RSA key verifies rsa-pss-sha512.
            const key = KeyObject.from(await jwks({ alg: 'PS256', kid: params.keyid }));
            return { id: params.keyid, algs: ['rsa-pss-sha512'], verify: createVerifier(key, 'rsa-pss-sha512') };
          },
          requiredFields: ['@method', '@path', 'x-request-id', 'content-type', 'content-length', 'content-digest'],
          requiredParams: ['created', 'keyid', 'alg'],
          tolerance: 60,
        },
        { method: request.method, url: new URL(request.url, 'http://receiver'), headers },
      );
      const digest = `sha-256=:${createHash('sha256').update(request.body).digest('base64')}:`;
      return verified === true && header(request, 'content-digest') === digest ? keyid : undefined;
    } catch {
      return undefined;
    }
  };
}

/** Either profile, recognised by its Signature-Input form. */
export async function verifyWebhookSignature(request: SignedRequest, publicKey: KeyObject): Promise<boolean> {
  return DOCUMENTED_INPUT.test(header(request, 'signature-input') ?? '')
    ? verifyDocumentedSignature(request, publicKey)
    : verifyRfc9421Signature(request, publicKey);
}

export interface Jwk {
  kid?: string;
  kty?: string;
  use?: string;
  alg?: string;
}

/**
 * A partner's verifier against GET {issuer}/.well-known/jwks.json: the `sign` key first; on failure the JWKS is
 * fetched again once and every RSA signing key is tried, so a key rotation never rejects a genuine request.
 */
/** The keys a JWKS endpoint publishes, as they came; throws on a non-2xx answer. */
export async function fetchJwks(jwksUrl: string | URL): Promise<Jwk[]> {
  const response = await fetch(jwksUrl);
  if (!response.ok) throw new Error(`JWKS ${String(jwksUrl)} answered ${response.status}`);
  const jwks = (await response.json()) as { keys?: Jwk[] };
  return jwks.keys ?? [];
}

export class JwksWebhookVerifier {
  private keys: Array<{ kid: string; key: KeyObject }> = [];

  constructor(private readonly jwksUrl: string) {}

  /** The kid of the key that verified the request, or undefined when none did. */
  async verify(request: SignedRequest): Promise<string | undefined> {
    if (this.keys.length === 0) await this.refresh();
    const sign = this.keys.find((k) => k.kid === 'sign');
    if (sign && (await verifyWebhookSignature(request, sign.key))) return sign.kid;
    await this.refresh();
    for (const candidate of [...this.keys].sort((a, b) => Number(b.kid === 'sign') - Number(a.kid === 'sign'))) {
      if (await verifyWebhookSignature(request, candidate.key)) return candidate.kid;
    }
    return undefined;
  }

  private async refresh(): Promise<void> {
    this.keys = (await fetchJwks(this.jwksUrl))
      .filter(
        (jwk) =>
          jwk.kty === 'RSA' &&
          (jwk.use === undefined || jwk.use === 'sig') &&
          (jwk.alg === undefined || jwk.alg.startsWith('PS')),
      )
      .map((jwk) => ({ kid: jwk.kid ?? '', key: createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }) }));
  }
}

// Both threads: loaded by the delivery thread and by the main thread.
import { createHash, sign, constants, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { WebhookSignature } from '../config/index.js';
import { serializeSignatureParams, signatureBase, type SignatureParams } from './signature-base.js';

interface SignableRequest {
  method: string;
  url: URL;
  requestId: string;
  contentType: string;
  body: string;
}

/** A key that signs webhooks now: its private half and its own stable id (its kid in the JWKS). */
export interface WebhookSigningKey {
  id: string;
  privateKey: KeyObject;
}

/** The webhook keys that sign now: RSA (its JWKS kid is also "sign") and Ed25519. */
export interface WebhookSigningKeys {
  rsa: WebhookSigningKey;
  ed25519: WebhookSigningKey;
}

/** Headers the profile adds, in the order they are sent. */
type SignatureHeaders = Array<[name: string, value: string]>;

const DOCUMENTED_COMPONENTS = ['@method', '@path', 'x-request-id'] as const;
const RFC9421_COMPONENTS = [
  '@method',
  '@path',
  'x-request-id',
  'content-type',
  'content-length',
  'content-digest',
] as const;

// With a callback, node signs on the libuv thread pool: RSA-3072 costs milliseconds, which the event loop keeps.
const signAsync = promisify(sign);

/** The key a webhook's signature is made with. */
export function keyFor(signature: WebhookSignature, keys: WebhookSigningKeys): WebhookSigningKey {
  return signature.alg === 'ed25519' ? keys.ed25519 : keys.rsa;
}

/**
 * Signs one HTTP attempt. `createdS` is the signing time in Unix seconds: every attempt is signed afresh. documented:
 * RSASSA-PSS SHA-256, MGF1-SHA-256, salt 32, keyid "webhook", the header form partners were promised (docs/partners/webhooks.md#checking-the-signature). rfc9421: over the body's RFC 9530 Content-Digest too, keyid = the key's own id (the RSA key is
 * listed under it besides "sign"), so a kid-caching verifier needs nothing special across a rotation; rsa-pss-sha512
 * (salt 64) or ed25519 (docs/partners/webhooks.md#choosing-ed25519).
 */
export async function signRequest(
  signature: WebhookSignature,
  request: SignableRequest,
  keys: WebhookSigningKeys,
  createdS: number,
): Promise<SignatureHeaders> {
  const path = requestPath(request.url);
  if (signature.profile === 'documented') {
    const params: SignatureParams = {
      components: DOCUMENTED_COMPONENTS,
      created: createdS,
      keyid: 'webhook',
      alg: 'rsa-pss-sha256',
    };
    const base = signatureBase(params, [request.method, path, request.requestId]);
    const signed = await signAsync('sha256', Buffer.from(base), {
      key: keys.rsa.privateKey,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: 32,
    });
    return [
      [
        'Signature-Input',
        `sig1=created=${createdS};keyId="webhook";alg="rsa-pss-sha256";headers="${DOCUMENTED_COMPONENTS.join(' ')}"`,
      ],
      ['Signature', `sig1=:${signed.toString('base64')}:`],
    ];
  }
  const key = keyFor(signature, keys);
  const contentDigest = `sha-256=:${createHash('sha256').update(request.body).digest('base64')}:`;
  const params: SignatureParams = {
    components: RFC9421_COMPONENTS,
    created: createdS,
    keyid: key.id,
    alg: signature.alg,
  };
  const base = Buffer.from(
    signatureBase(params, [
      request.method,
      path,
      request.requestId,
      request.contentType,
      String(Buffer.byteLength(request.body)),
      contentDigest,
    ]),
  );
  // Ed25519 signs in about 35 us here, less than the hop to the thread pool and back (45-60 us): signed in place.
  const signed =
    signature.alg === 'ed25519'
      ? sign(null, base, key.privateKey)
      : await signAsync('sha512', base, {
          key: key.privateKey,
          padding: constants.RSA_PKCS1_PSS_PADDING,
          saltLength: 64,
        });
  return [
    ['Content-Digest', contentDigest],
    ['Signature-Input', `sig1=${serializeSignatureParams(params)}`],
    ['Signature', `sig1=:${signed.toString('base64')}:`],
  ];
}

/** RFC 9421 2.2.6 `@path`: the target URI's absolute path, `/` when empty, without the query. */
function requestPath(url: URL): string {
  return url.pathname === '' ? '/' : url.pathname;
}

// Both threads: loaded by the delivery thread and by the main thread.
import { createHash, sign, constants, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { WebhookConfig } from '../config/index.js';
import { serializeSignatureParams, signatureBase, type SignatureParams } from './signature-base.js';

interface SignableRequest {
  method: string;
  url: URL;
  requestId: string;
  contentType: string;
  body: string;
}

/** The key that signs webhooks now: its private half and its own stable id (its kid in the JWKS besides "sign"). */
export interface WebhookSigningKey {
  id: string;
  privateKey: KeyObject;
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

/**
 * Signs one HTTP attempt. `createdS` is the signing time in Unix seconds: every attempt is signed afresh. documented:
 * RSASSA-PSS SHA-256, MGF1-SHA-256, salt 32, keyid "webhook", the header form partners were promised (README "Checking
 * the signature"). rfc9421: rsa-pss-sha512 (salt 64) over the body's RFC 9530 Content-Digest too, keyid = the key's own
 * id, which the JWKS lists it under besides "sign": a kid-caching verifier needs nothing special across a rotation.
 */
export async function signRequest(
  profile: WebhookConfig['signature'],
  request: SignableRequest,
  key: WebhookSigningKey,
  createdS: number,
): Promise<SignatureHeaders> {
  const { privateKey } = key;
  const path = requestPath(request.url);
  if (profile === 'documented') {
    const params: SignatureParams = {
      components: DOCUMENTED_COMPONENTS,
      created: createdS,
      keyid: 'webhook',
      alg: 'rsa-pss-sha256',
    };
    const base = signatureBase(params, [request.method, path, request.requestId]);
    const signature = await signAsync('sha256', Buffer.from(base), {
      key: privateKey,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: 32,
    });
    return [
      [
        'Signature-Input',
        `sig1=created=${createdS};keyId="webhook";alg="rsa-pss-sha256";headers="${DOCUMENTED_COMPONENTS.join(' ')}"`,
      ],
      ['Signature', `sig1=:${signature.toString('base64')}:`],
    ];
  }
  const contentDigest = `sha-256=:${createHash('sha256').update(request.body).digest('base64')}:`;
  const params: SignatureParams = {
    components: RFC9421_COMPONENTS,
    created: createdS,
    keyid: key.id,
    alg: 'rsa-pss-sha512',
  };
  const base = signatureBase(params, [
    request.method,
    path,
    request.requestId,
    request.contentType,
    String(Buffer.byteLength(request.body)),
    contentDigest,
  ]);
  const signature = await signAsync('sha512', Buffer.from(base), {
    key: privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: 64,
  });
  return [
    ['Content-Digest', contentDigest],
    ['Signature-Input', `sig1=${serializeSignatureParams(params)}`],
    ['Signature', `sig1=:${signature.toString('base64')}:`],
  ];
}

/** RFC 9421 2.2.6 `@path`: the target URI's absolute path, `/` when empty, without the query. */
function requestPath(url: URL): string {
  return url.pathname === '' ? '/' : url.pathname;
}

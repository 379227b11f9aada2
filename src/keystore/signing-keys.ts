import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import { KEY_PURPOSES, KeystoreError, type KeyPurpose, type StoredKey } from './keystore-file.js';

const generateKeyPairAsync = promisify(generateKeyPair);

/**
 * What each purpose signs with. Webhooks: RSASSA-PSS SHA-256 on RSA 3072 (docs/partners/webhooks.md#checking-the-signature), and
 * Ed25519 for the rfc9421 profile's fast variant (docs/partners/webhooks.md#choosing-ed25519). Access tokens: RS256, the algorithm
 * RFC 9068 requires every resource server to support, on RSA 2048 as common identity providers use.
 */
export const KEY_PROFILES: Record<KeyPurpose, { alg: StoredKey['alg']; modulusLength?: number; idPrefix: string }> = {
  webhook: { alg: 'PS256', modulusLength: 3072, idPrefix: 'webhook-' },
  token: { alg: 'RS256', modulusLength: 2048, idPrefix: 'token-' },
  'webhook-ed25519': { alg: 'EdDSA', idPrefix: 'ed25519-' },
};

/** A public key as the JWKS publishes it. */
export interface PublicJwk extends JsonWebKey {
  kty: string;
  kid: string;
  alg: string;
  use: 'sig';
}

/** A freshly generated key, before it is given its place in the keystore's timeline. */
export type GeneratedKey = Pick<StoredKey, 'id' | 'purpose' | 'alg' | 'privateKey'>;

/**
 * New keys, one per purpose given (default: all). Node generates them on its thread pool, so they generate at once
 * (on both cores of a small gateway) and the event loop stays free meanwhile: the first start waits for the slowest.
 */
export function generateKeys(
  passphrase: string | undefined,
  purposes: readonly KeyPurpose[] = KEY_PURPOSES,
): Promise<GeneratedKey[]> {
  return Promise.all(purposes.map((purpose) => generateKey(purpose, passphrase)));
}

async function generateKey(purpose: KeyPurpose, passphrase: string | undefined): Promise<GeneratedKey> {
  const { alg, modulusLength, idPrefix } = KEY_PROFILES[purpose];
  const { privateKey } =
    modulusLength === undefined
      ? await generateKeyPairAsync('ed25519')
      : await generateKeyPairAsync('rsa', { modulusLength });
  return {
    id: `${idPrefix}${thumbprint(privateKey).slice(0, 16)}`,
    purpose,
    alg,
    privateKey: exportPrivateKey(privateKey, passphrase),
  };
}

export function scheduledKey(key: GeneratedKey, createdAt: Date, activatesAt: Date): StoredKey {
  const { id, purpose, alg, privateKey } = key;
  return {
    id,
    purpose,
    alg,
    createdAt: createdAt.toISOString(),
    activatesAt: activatesAt.toISOString(),
    retiresAt: null,
    expiresAt: null,
    privateKey,
  };
}

export function exportPrivateKey(key: KeyObject, passphrase: string | undefined): string {
  return passphrase
    ? (key.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase }) as string)
    : (key.export({ type: 'pkcs8', format: 'pem' }) as string);
}

export function isEncryptedPem(pem: string): boolean {
  return pem.startsWith('-----BEGIN ENCRYPTED PRIVATE KEY-----');
}

export function importPrivateKey(pem: string, passphrase: string | undefined, what: string): KeyObject {
  if (isEncryptedPem(pem) && !passphrase)
    throw new KeystoreError(
      `${what} is encrypted: provide the keystore passphrase (environment variable or systemd credential)`,
    );
  try {
    return createPrivateKey(passphrase && isEncryptedPem(pem) ? { key: pem, passphrase } : { key: pem });
  } catch (err) {
    throw new KeystoreError(`${what} cannot be decrypted: wrong keystore passphrase or damaged key`, { cause: err });
  }
}

export function publicJwk(privateKey: KeyObject, kid: string, alg: string): PublicJwk {
  return { ...thumbprintMembers(privateKey), kid, alg, use: 'sig' };
}

/**
 * The public key's required JWK members (RFC 7638 3.2), in lexicographic order: RSA `e kty n`, Ed25519 `crv kty x`.
 */
function thumbprintMembers(privateKey: KeyObject): { kty: string } & JsonWebKey {
  const { kty, n, e, crv, x } = createPublicKey(privateKey).export({ format: 'jwk' });
  if (kty === 'RSA' && n && e) return { e, kty, n };
  if (kty === 'OKP' && crv === 'Ed25519' && x) return { crv, kty, x };
  throw new KeystoreError(`a ${kty ?? 'unknown'} key is neither RSA nor Ed25519`);
}

/** RFC 7638 JWK thumbprint (SHA-256, base64url): a stable name derived from the key itself. */
function thumbprint(privateKey: KeyObject): string {
  return createHash('sha256')
    .update(JSON.stringify(thumbprintMembers(privateKey)))
    .digest('base64url');
}

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

const generateRsaKeyPair = promisify(generateKeyPair);

/**
 * What each purpose signs with. Webhooks: RSASSA-PSS SHA-256 on RSA 3072 (README "Checking the signature"). Access
 * tokens: RS256, the algorithm RFC 9068 requires every resource server to support, on RSA 2048 as common identity
 * providers use.
 */
export const KEY_PROFILES: Record<KeyPurpose, { alg: 'PS256' | 'RS256'; modulusLength: number; idPrefix: string }> = {
  webhook: { alg: 'PS256', modulusLength: 3072, idPrefix: 'webhook-' },
  token: { alg: 'RS256', modulusLength: 2048, idPrefix: 'token-' },
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
 * One new key per purpose. Node generates them on its thread pool, so both generate at once (on both cores of a
 * small gateway) and the event loop stays free meanwhile: the first start waits for the slower key only.
 */
export function generateKeys(passphrase: string | undefined): Promise<GeneratedKey[]> {
  return Promise.all(KEY_PURPOSES.map((purpose) => generateKey(purpose, passphrase)));
}

async function generateKey(purpose: KeyPurpose, passphrase: string | undefined): Promise<GeneratedKey> {
  const { alg, modulusLength, idPrefix } = KEY_PROFILES[purpose];
  const { privateKey } = await generateRsaKeyPair('rsa', { modulusLength });
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
  const { kty, n, e } = createPublicKey(privateKey).export({ format: 'jwk' });
  if (!kty || !n || !e) throw new KeystoreError(`key ${kid} is not an RSA key`);
  return { kty, n, e, kid, alg, use: 'sig' };
}

/** RFC 7638 JWK thumbprint (SHA-256, base64url) of an RSA key: a stable name derived from the key itself. */
function thumbprint(privateKey: KeyObject): string {
  const { e, n } = createPublicKey(privateKey).export({ format: 'jwk' });
  return createHash('sha256')
    .update(JSON.stringify({ e, kty: 'RSA', n }))
    .digest('base64url');
}

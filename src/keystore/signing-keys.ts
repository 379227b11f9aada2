import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { KeystoreError, type KeyPurpose, type StoredKey } from './keystore-file.js';

/**
 * What each purpose signs with. Webhooks: RSASSA-PSS SHA-256 on RSA 3072 (contract section 5). Access tokens:
 * RS256, the algorithm RFC 9068 requires every resource server to support, on RSA 2048 as common identity
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

export function generateStoredKey(purpose: KeyPurpose, passphrase: string | undefined, createdAt: Date, activatesAt: Date): { stored: StoredKey; privateKey: KeyObject } {
  const { alg, modulusLength, idPrefix } = KEY_PROFILES[purpose];
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength });
  const stored: StoredKey = {
    id: `${idPrefix}${thumbprint(privateKey).slice(0, 16)}`,
    purpose,
    alg,
    createdAt: createdAt.toISOString(),
    activatesAt: activatesAt.toISOString(),
    retiresAt: null,
    expiresAt: null,
    privateKey: exportPrivateKey(privateKey, passphrase),
  };
  return { stored, privateKey };
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
  if (isEncryptedPem(pem) && !passphrase) throw new KeystoreError(`${what} is encrypted: provide the keystore passphrase (environment variable or systemd credential)`);
  try {
    return createPrivateKey(passphrase && isEncryptedPem(pem) ? { key: pem, passphrase } : { key: pem });
  } catch {
    throw new KeystoreError(`${what} cannot be decrypted: wrong keystore passphrase or damaged key`);
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
  return createHash('sha256').update(JSON.stringify({ e, kty: 'RSA', n })).digest('base64url');
}

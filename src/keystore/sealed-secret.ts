import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { KeystoreError } from './keystore-file.js';

/**
 * A secret the gateway must be able to read back (a password it presents to a CSMS), kept as the signing keys are:
 * encrypted with the keystore passphrase when there is one (AES-256-GCM, key from scrypt with a salt of its own),
 * else plain in the 0600 file (docs/operating/security.md#security).
 */
const ENCRYPTED = 'aes-256-gcm';
const PLAIN = 'plain';

export function sealSecret(secret: string, passphrase: string | undefined): string {
  if (!passphrase) return `${PLAIN}:${Buffer.from(secret, 'utf8').toString('base64')}`;
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv(ENCRYPTED, scryptSync(passphrase, salt, 32), iv);
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [ENCRYPTED, salt, iv, cipher.getAuthTag(), data]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64')))
    .join(':');
}

export function isSealedEncrypted(sealed: string): boolean {
  return sealed.startsWith(`${ENCRYPTED}:`);
}

/** The secret back; `what` names it in the error when the passphrase is missing or wrong. */
export function openSecret(sealed: string, passphrase: string | undefined, what: string): string {
  const [kind, ...parts] = sealed.split(':');
  if (kind === PLAIN && parts.length === 1) return Buffer.from(parts[0]!, 'base64').toString('utf8');
  if (kind !== ENCRYPTED || parts.length !== 4) throw new KeystoreError(`${what} is not a sealed secret`);
  if (!passphrase)
    throw new KeystoreError(
      `${what} is encrypted: provide the keystore passphrase (environment variable or systemd credential)`,
    );
  const [salt, iv, tag, data] = parts.map((p) => Buffer.from(p, 'base64')) as [Buffer, Buffer, Buffer, Buffer];
  try {
    const decipher = createDecipheriv(ENCRYPTED, scryptSync(passphrase, salt, 32), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  } catch (err) {
    throw new KeystoreError(`${what} cannot be decrypted: wrong keystore passphrase or damaged entry`, { cause: err });
  }
}

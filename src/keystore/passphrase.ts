import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KeystoreError } from './keystore-file.js';

export interface PassphraseSource {
  /** Environment variable holding the passphrase (config keystore.passphraseEnv). */
  passphraseEnv: string;
  /** File name under $CREDENTIALS_DIRECTORY (systemd LoadCredential=/SetCredentialEncrypted=). */
  passphraseCredential: string;
}

/**
 * The keystore passphrase: the environment variable first, else the systemd credential; undefined when neither is
 * set, which leaves the keystore unencrypted (protected by its 0600 mode only).
 */
export function keystorePassphrase(source: PassphraseSource, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromEnv = env[source.passphraseEnv];
  if (fromEnv) return fromEnv;
  const dir = env.CREDENTIALS_DIRECTORY;
  if (!dir) return undefined;
  const file = path.join(dir, source.passphraseCredential);
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '') || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new KeystoreError(
      `${file}: cannot read the keystore passphrase credential: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      { cause: err },
    );
  }
}

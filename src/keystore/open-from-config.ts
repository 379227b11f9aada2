import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { existsSync } from 'node:fs';
import { Keystore, privateKeysOf } from './keystore.js';
import { keystorePath, readKeystoreDocument } from './keystore-file.js';
import { keystorePassphrase } from './passphrase.js';
import { isEncryptedPem } from './signing-keys.js';

/** The keystore of a config's dataDir, with the passphrase and rotation timings the config names. */
export function openKeystore(
  config: Config,
  options: { logger?: Logger; env?: NodeJS.ProcessEnv; now?: () => Date } = {},
): Promise<Keystore> {
  return Keystore.open({
    dataDir: config.dataDir,
    passphrase: keystorePassphrase(config.keystore, options.env),
    retiredKeyGraceS: config.keystore.retiredKeyGraceS,
    nextKeyLeadS: config.keystore.nextKeyLeadS,
    logger: options.logger,
    now: options.now,
  });
}

/**
 * Whether the config's keystore keeps its private keys encrypted: as the file has them, or, before the first start
 * creates it, as it would be created with the passphrase this environment gives.
 */
export function keystoreEncrypted(config: Config, env: NodeJS.ProcessEnv = process.env): boolean {
  const file = keystorePath(config.dataDir);
  if (!existsSync(file)) return keystorePassphrase(config.keystore, env) !== undefined;
  return privateKeysOf(readKeystoreDocument(file)).every(isEncryptedPem);
}

import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { Keystore } from './keystore.js';
import { keystorePassphrase } from './passphrase.js';

/** The keystore of a config's dataDir, with the passphrase and rotation timings the config names. */
export function openKeystore(config: Config, options: { logger?: Logger; env?: NodeJS.ProcessEnv; now?: () => Date } = {}): Promise<Keystore> {
  return Keystore.open({
    dataDir: config.dataDir,
    passphrase: keystorePassphrase(config.keystore, options.env),
    retiredKeyGraceS: config.keystore.retiredKeyGraceS,
    nextKeyLeadS: config.keystore.nextKeyLeadS,
    logger: options.logger,
    now: options.now,
  });
}

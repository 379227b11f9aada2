import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KEYSTORE_FILE, Keystore } from '../../src/keystore/index.js';
import { keystorePassphrase } from '../../src/keystore/passphrase.js';
import type { Config } from '../../src/config/index.js';

/**
 * One keystore, copied into fresh data dirs: a gateway in service has its keys already, and a new keystore generates
 * RSA 3072 and 2048 keys (~0.35 s of CPU). The bench makes one per run (scenario 6 measures the generation on its
 * own); the in-process test daemons one per worker (keystoreTemplateForDaemons).
 */
export class KeystoreTemplate {
  private constructor(private dir: string | undefined) {}

  static async create(): Promise<KeystoreTemplate> {
    const dir = mkdtempSync(path.join(tmpdir(), 'chargegate-bench-keys-'));
    await Keystore.open({ dataDir: dir, retiredKeyGraceS: 86_400 });
    return new KeystoreTemplate(dir);
  }

  copyInto(dataDir: string): void {
    if (!this.dir) throw new Error('the keystore template was removed');
    mkdirSync(dataDir, { recursive: true, mode: 0o750 });
    copyFileSync(path.join(this.dir, KEYSTORE_FILE), path.join(dataDir, KEYSTORE_FILE));
  }

  cleanup(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

let forDaemons: Promise<KeystoreTemplate> | undefined;

/**
 * The template this worker's test daemons start from, made by the first one that needs it; undefined for a daemon
 * whose test is about its keystore (its config names a `keystore` section, or a passphrase is given: an encrypted
 * keystore is made at start, or the plain template's keys would be encrypted then and say so in the log) and for a
 * data dir that has its keystore already.
 */
export async function keystoreTemplateForDaemons(
  overrides: Record<string, unknown>,
  config: Config,
): Promise<KeystoreTemplate | undefined> {
  if ('keystore' in overrides || keystorePassphrase(config.keystore) !== undefined) return undefined;
  // A daemon started again on its data dir keeps its own keys.
  if (existsSync(path.join(config.dataDir, KEYSTORE_FILE))) return undefined;
  forDaemons ??= KeystoreTemplate.create().then((template) => {
    process.once('exit', () => template.cleanup());
    return template;
  });
  return forDaemons;
}

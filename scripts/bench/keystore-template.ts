import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KEYSTORE_FILE, Keystore } from '../../src/keystore/index.js';

/**
 * One keystore for the whole run, copied into each scenario's fresh data dir: a gateway in service has its keys
 * already, and generating RSA keys for every daemon would spend seconds per scenario on what scenario 6 measures.
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

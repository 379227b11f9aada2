import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KEYSTORE_FILE, Keystore } from '../../src/keystore/index.js';

/**
 * One keystore for the whole run, copied into each scenario's fresh data dir: a gateway in service has its keys
 * already, and generating RSA keys for every daemon would spend seconds per scenario on what scenario 6 measures.
 */
export class KeystoreTemplate {
  private dir: string | undefined;

  copyInto(dataDir: string): void {
    this.dir ??= generate();
    mkdirSync(dataDir, { recursive: true, mode: 0o750 });
    copyFileSync(path.join(this.dir, KEYSTORE_FILE), path.join(dataDir, KEYSTORE_FILE));
  }

  cleanup(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

function generate(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'chargegate-bench-keys-'));
  Keystore.open({ dataDir: dir, retiredKeyGraceS: 86_400 });
  return dir;
}

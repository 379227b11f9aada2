import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { tempDirForTest } from '../support/for-test.js';

const SETUP_HOST = path.join(ROOT, 'systemd/setup-host.sh');
const setUp = (root: string) => execFileSync(SETUP_HOST, ['--root', root, '--no-user'], { encoding: 'utf8' });

/** systemd/setup-host.sh, which install.sh and the .deb's postinst share, staging into a scratch root. */
describe('setup-host.sh', () => {
  it('makes a 43-character passphrase once, readable by root only, and keeps it on the next run', () => {
    const root = tempDirForTest('host');
    setUp(root);
    const file = path.join(root, 'etc/chargegate/credentials/keystore-passphrase');
    const passphrase = readFileSync(file, 'utf8');
    expect(passphrase).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(setUp(root)).toContain('kept the existing keystore passphrase');
    expect(readFileSync(file, 'utf8')).toBe(passphrase);
  });

  it('replaces an empty passphrase an interrupted run left, which would leave the keystore unencrypted for good', () => {
    const root = tempDirForTest('host');
    mkdirSync(path.join(root, 'etc/chargegate/credentials'), { recursive: true });
    writeFileSync(path.join(root, 'etc/chargegate/credentials/keystore-passphrase'), '');
    expect(setUp(root)).toContain('made the keystore passphrase');
    expect(readFileSync(path.join(root, 'etc/chargegate/credentials/keystore-passphrase'), 'utf8')).toMatch(
      /^[A-Za-z0-9_-]{43}$/,
    );
  });
});

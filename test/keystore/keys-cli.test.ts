import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { openKeystore, type KeyInfo } from '../../src/keystore/index.js';
import { Site } from '../../src/site/index.js';
import { apiDaemonForTest } from '../http/api-harness.js';
import { runCli, runCliJson } from '../support/cli.js';
import { tempSiteForTest } from '../support/for-test.js';

/** Each CLI run is a fresh Node process compiling TypeScript: seconds apiece on a busy machine. */
describe('chargegate keys', { timeout: 120_000 }, () => {
  it('list shows kids, algorithms, states and dates, never private material; rotate starts a rotation with the default lead', async () => {
    const temp = tempSiteForTest();
    const list = await runCli(['keys', 'list', '--config', temp.configPath]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ID +PURPOSE +ALG +STATE +JWKS KID/);
    expect(list.stdout).toMatch(/webhook-\S+ +webhook +PS256 +signing +sign /);
    expect(list.stdout).toMatch(/token-\S+ +token +RS256 +signing +token-/);
    expect(list.stdout).toMatch(/(ed25519-\S+) +webhook-ed25519 +EdDSA +signing +\1 /);
    expect(list.stdout).not.toContain('PRIVATE');

    const rotated = await runCliJson<{ activatesAt: string; keys: KeyInfo[] }>([
      'keys',
      'rotate',
      '--config',
      temp.configPath,
    ]);
    expect(rotated.code).toBe(0);
    // The default lead: published now, signing in ten minutes; until then another rotation is refused.
    expect(Date.parse(rotated.data.activatesAt) - Date.now()).toBeGreaterThan(590_000);
    await expect((await openKeystore(loadConfig(temp.configPath))).rotate()).rejects.toThrow(
      'a rotation is already in progress',
    );
  });

  it('encrypts the keystore with the passphrase from the configured environment variable and refuses to sign without; list needs none', async () => {
    const temp = tempSiteForTest({ keystore: { passphraseEnv: 'TEST_KEYSTORE_PASSPHRASE' } });
    const env = { TEST_KEYSTORE_PASSPHRASE: 'a long passphrase' };
    expect((await runCli(['keys', 'list', '--config', temp.configPath], { env })).code).toBe(0);
    const file = readFileSync(path.join(temp.dataDir, 'keystore.json'), 'utf8');
    expect(file).toContain('ENCRYPTED PRIVATE KEY');
    expect(statSync(path.join(temp.dataDir, 'keystore.json')).mode & 0o777).toBe(0o600);
    // Both without the passphrase, at once: the refused rotation changes nothing the listing reads.
    const [without, listed] = await Promise.all([
      runCli(['keys', 'rotate', '--config', temp.configPath]),
      runCliJson<KeyInfo[]>(['keys', 'list', '--config', temp.configPath]),
    ]);
    expect(without.code).toBe(1);
    expect(without.stderr).toContain('encrypted: provide the keystore passphrase');
    // Listing shows no private material: it reads the file without the passphrase.
    expect(listed.code).toBe(0);
    expect(listed.data.map((k) => [k.purpose, k.state])).toEqual([
      ['webhook', 'signing'],
      ['token', 'signing'],
      ['webhook-ed25519', 'signing'],
    ]);
  });

  it('tls-cert makes a certificate the OCPP listener serves under security profile 2 and a station trusts', async () => {
    const temp = tempSiteForTest();
    const made = await runCliJson<{
      cert: string;
      key: string;
      names: string[];
      fingerprintSha256: string;
      certificate: string;
    }>(['keys', 'tls-cert', '--name', '127.0.0.1', '--days', '30', '--config', temp.configPath]);
    expect(made.code).toBe(0);
    expect(made.data.cert).toBe(path.join(temp.dataDir, 'tls', 'ocpp-cert.pem'));
    expect(statSync(made.data.key).mode & 0o777).toBe(0o600);
    const x509 = new X509Certificate(readFileSync(made.data.cert));
    expect(x509.subjectAltName).toBe('IP Address:127.0.0.1');
    expect(x509.fingerprint256).toBe(made.data.fingerprintSha256);
    // The refused second run and the daemon's start at once: the refusal leaves the certificate as it is.
    const [again, daemon] = await Promise.all([
      runCli(['keys', 'tls-cert', '--name', '127.0.0.1', '--config', temp.configPath]),
      apiDaemonForTest({
        ocpp: { host: '127.0.0.1', port: 0, securityProfile: 2, tls: { cert: made.data.cert, key: made.data.key } },
      }),
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('--force');

    const { password } = new Site({ db: daemon.db, config: () => loadConfig(daemon.temp.configPath) }).stations.pair(
      'CP001',
      's1',
    );
    const station = await daemon.connect('CP001', password, { ca: made.data.certificate });
    expect(await station.boot()).toMatchObject({ status: 'Accepted' });
  });
});

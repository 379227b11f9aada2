import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../src/config/index.js';
import { createGatewayCertificate } from '../../src/keystore/index.js';
import { Site } from '../../src/site/index.js';
import { runCli } from '../support/cli.js';
import { connectStation } from '../support/station.js';
import { tempDirForTest } from '../support/for-test.js';
import { PROCESS_TEST_TIMEOUT_MS, siteWith, daemonForTest, type TestDaemon } from '../support/daemon.js';

/** What `chargegate station pair` does (its CLI path is covered in stations.test.ts). */
function pair(t: TestDaemon, stationId: string): string {
  return new Site({ db: t.db, config: () => loadConfig(t.temp.configPath) }).stations.pair(stationId, 's1').password;
}

describe('station security profiles', () => {
  it('profile 1: a known station needs the password `station pair` printed; wrong or missing is refused with 401', async () => {
    const t = await daemonForTest({ ...siteWith(), ocpp: { host: '127.0.0.1', port: 0, securityProfile: 1 } });
    await expect(t.connect('CP001')).rejects.toMatchObject({ code: 401 }); // configured, never paired: no password exists yet
    const password = pair(t, 'CP001');

    const stored = t.db.prepare('SELECT password_hash FROM stations WHERE id = ?').get('CP001') as {
      password_hash: string;
    };
    expect(stored.password_hash).toMatch(/^scrypt\$/);
    expect(stored.password_hash).not.toContain(password);

    await expect(t.connect('CP001')).rejects.toMatchObject({ code: 401 });
    await expect(t.connect('CP001', `${password}x`)).rejects.toMatchObject({ code: 401 });
    const station = await t.connect('CP001', password);
    expect(await station.boot()).toMatchObject({ status: 'Accepted' });

    const refusals = t.logged('station connection refused');
    expect(refusals.map((l) => l.reason)).toEqual([
      'station has no password yet: run `chargegate station pair`',
      'no HTTP Basic password',
      'wrong password',
    ]);
    expect(JSON.stringify(t.logs)).not.toContain(password);

    // An unknown station gets in without a password, but only to be told Pending.
    const stranger = await t.connect('CP-NEW');
    expect(await stranger.boot()).toMatchObject({ status: 'Pending' });
  });

  it('profile 2: TLS with ocpp.tls plus the basic-auth password; plain ws is not served', async () => {
    const { certificate: cert, privateKey: key } = await createGatewayCertificate({
      names: ['localhost', '127.0.0.1'],
      validDays: 1,
    });
    const files = tempDirForTest('tls');
    const certFile = path.join(files, 'cert.pem');
    const keyFile = path.join(files, 'key.pem');
    writeFileSync(certFile, cert);
    writeFileSync(keyFile, key, { mode: 0o600 });
    const t = await daemonForTest({
      ...siteWith(),
      ocpp: { host: '127.0.0.1', port: 0, securityProfile: 2, tls: { cert: certFile, key: keyFile } },
    });
    expect(t.url.startsWith('wss://')).toBe(true);
    const password = pair(t, 'CP001');

    await expect(t.connect('CP001', 'wrong', { ca: cert })).rejects.toMatchObject({ code: 401 });
    await expect(connectStation(t.url.replace('wss://', 'ws://'), 'CP001', password)).rejects.toThrow();
    await expect(connectStation(t.url, 'CP001', password)).rejects.toThrow(/self.signed|certificate/i); // untrusted without the CA

    const station = await t.connect('CP001', password, { ca: cert });
    expect(await station.boot()).toMatchObject({ status: 'Accepted' });
    expect(await station.authorize('T')).toEqual({ status: 'Invalid' });
  });

  it(
    'profile 0 is refused off loopback, naming ocpp.securityProfile (check-config exits 2)',
    async () => {
      const text = 'ocpp: { host: 0.0.0.0, securityProfile: 0 }\nsites: [{ id: a }]\n';
      expect(() => parseConfig(text, 'c.yaml')).toThrow(
        /c\.yaml: ocpp\.securityProfile: 0 \(no station authentication\) is only allowed when ocpp\.host is loopback/,
      );
      expect(() => parseConfig('ocpp: { host: 127.0.0.1, securityProfile: 0 }\nsites: [{ id: a }]\n')).not.toThrow();

      const file = path.join(tempDirForTest('config'), 'profile0.yaml');
      writeFileSync(file, text);
      const checked = await runCli(['check-config', '--config', file]);
      expect(checked.code).toBe(2);
      expect(checked.stderr).toContain('ocpp.securityProfile');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

import crypto from 'node:crypto';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { Keystore, KeystoreError } from '../../src/keystore/index.js';
import { runCli, runCliJson } from '../support/cli.js';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, siteWith, startTestDaemon } from '../support/daemon.js';
import { tempDirForTest, tempSiteForTest } from '../support/for-test.js';

/** The problems loadConfig, which check-config runs first, finds in the test config with `overrides`. */
function configProblems(overrides: Record<string, unknown>): string[] {
  try {
    loadConfig(tempSiteForTest(overrides).configPath);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('uplink config, password and status', () => {
  it(
    'check-config refuses upstream.url with upstream.csms and a scheme that does not fit the profile, naming the key paths',
    async () => {
      const both = tempSiteForTest({ upstream: { url: 'ws://cpo/ocpp', csms: { url: 'ws://csms/ocpp' } } });
      const refused = await runCliJson<{ problems: string[] }>(['check-config', '--config', both.configPath]);
      expect(refused.code).toBe(2);
      expect(refused.data.problems).toEqual([
        'upstream.csms: not together with upstream.url: the uplink forwards Authorize itself; remove upstream.url',
      ]);
      // The rest in-process: the same loadConfig and its key paths, without a CLI start (~0.5 s CPU) each.
      expect(configProblems({ upstream: { csms: { url: 'ws://csms/ocpp', securityProfile: 2 } } })).toEqual([
        'upstream.csms.url: securityProfile 2 needs a wss:// URL, not ws://',
      ]);
      expect(configProblems({ upstream: { csms: { url: 'wss://csms/ocpp', securityProfile: 1 } } })).toEqual([
        'upstream.csms.url: securityProfile 1 needs a ws:// URL, not wss://',
      ]);
      expect(configProblems({ upstream: { csms: { url: 'wss://csms/ocpp', securityProfile: 3 } } })).toEqual([
        'upstream.csms.tls: securityProfile 3 needs { cert, key }: the client certificate the CSMS knows the gateway by',
      ]);
      // A queue whose byte limit one largest message nearly fills would be critical while all but empty.
      expect(
        configProblems({
          ocpp: { maxMessageBytes: 1_048_576 },
          upstream: { csms: { url: 'ws://csms/ocpp', queueBytesLimit: 1_048_576 } },
        }),
      ).toEqual([
        'upstream.csms.queueBytesLimit: at least 16 x ocpp.maxMessageBytes (16777216): a queue must hold more than the few largest messages a station can send',
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'station upstream-password keeps the password a profile 1 uplink presents; upstream status shows the running link',
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({
        ...siteWith(),
        upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile: 1 } },
      });
      const config = ['--config', t.temp.configPath];
      expect((await runCli(['station', 'upstream-password', 'NOPE', ...config], { input: 'x\n' })).code).toBe(1);
      const empty = await runCli(['station', 'upstream-password', 'CP001', ...config], { input: '\n' });
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain('stdin: expected the password');
      const set = await runCli(['station', 'upstream-password', 'CP001', ...config], { input: 's3cret pass\n' });
      expect(set.code).toBe(0);

      const station = await t.connect();
      await station.boot();
      await eventually(() => csms.isConnected('CP001'), 30_000, 'the uplink');
      // One trailing newline dropped, the rest is the password.
      expect(csms.passwordOf('CP001')).toBe('s3cret pass');

      const status = await runCliJson<{ live: boolean; stations: Array<Record<string, unknown>> }>([
        'upstream',
        'status',
        ...config,
      ]);
      expect(status.code).toBe(0);
      expect(status.data.live).toBe(true);
      expect(status.data.stations).toEqual([
        expect.objectContaining({ stationId: 'CP001', connected: true, queued: 0, dropped: 0, level: 'ok' }),
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it('an upstream password is sealed with the keystore passphrase, and a wrong passphrase cannot read it', async () => {
    const dataDir = tempDirForTest('uplink-keystore');
    const keystore = await Keystore.open({ dataDir, passphrase: 'right', retiredKeyGraceS: 60 });
    keystore.setUpstreamPassword('CP001', 'hunter2-upstream');
    expect(readFileSync(path.join(dataDir, 'keystore.json'), 'utf8')).not.toContain('hunter2-upstream');
    expect(
      (await Keystore.open({ dataDir, passphrase: 'right', retiredKeyGraceS: 60 })).upstreamPassword('CP001'),
    ).toBe('hunter2-upstream');
    expect(keystore.upstreamPassword('CP002')).toBeUndefined();
    await expect(Keystore.open({ dataDir, passphrase: 'wrong', retiredKeyGraceS: 60 })).rejects.toThrow(KeystoreError);
  });

  it('an upstream password is decrypted once per change of its entry, not at every call', async () => {
    const dataDir = tempDirForTest('uplink-keystore');
    const keystore = await Keystore.open({ dataDir, passphrase: 'right', retiredKeyGraceS: 60 });
    keystore.setUpstreamPassword('CP001', 'first');
    // Counted, not timed: the real scryptSync runs behind the spy, which every named import of node:crypto sees.
    const scrypt = vi.spyOn(crypto, 'scryptSync');
    syncBuiltinESMExports();
    onTestFinished(() => {
      scrypt.mockRestore();
      syncBuiltinESMExports();
    });
    expect(keystore.upstreamPassword('CP001')).toBe('first');
    for (let i = 0; i < 20; i += 1) expect(keystore.upstreamPassword('CP001')).toBe('first');
    expect(scrypt).toHaveBeenCalledTimes(1);
    keystore.setUpstreamPassword('CP001', 'second');
    expect(keystore.upstreamPassword('CP001')).toBe('second');
    // Sealing 'second' and opening it once.
    expect(scrypt).toHaveBeenCalledTimes(3);
  });

  it(
    'a damaged upstream password entry is logged and the link tried again, the daemon running on; set again, it connects',
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({
        ...siteWith(),
        upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile: 1 } },
      });
      const file = path.join(t.temp.dataDir, 'keystore.json');
      const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify({ ...doc, upstreamPasswords: { CP001: 'damaged' } }));
      const station = await t.connect();
      await station.boot();
      await eventually(
        () => t.logged('upstream password cannot be read: tried again').length > 0,
        30_000,
        'the damaged entry logged',
      );
      const keystore = await Keystore.open({ dataDir: t.temp.dataDir, retiredKeyGraceS: 60 });
      keystore.setUpstreamPassword('CP001', 'repaired');
      await eventually(() => csms.isConnected('CP001'), 30_000, 'the uplink');
      expect(csms.passwordOf('CP001')).toBe('repaired');
      expect(station.rpc.state).toBe(1);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'upstream.csms.tls files are read at start: an unreadable one fails the start naming its key; one gone later breaks no link',
    async () => {
      const csms = await TestCsms.startForTest();
      const ca = path.join(tempDirForTest('uplink-tls'), 'csms-ca.pem');
      const config = {
        ...siteWith(),
        // ws:// (profile 0) ignores the CA: only when and how often the file is read matters here.
        upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile: 0, tls: { ca } } },
      };
      await expect(startTestDaemon(config)).rejects.toThrow(`upstream.csms.tls.ca: cannot read ${ca}: ENOENT`);

      writeFileSync(ca, 'a CA certificate');
      const t = await daemonForTest(config);
      unlinkSync(ca);
      const station = await t.connect();
      await station.boot();
      await eventually(() => csms.of('BootNotification').length > 0, 30_000, 'the uplink boot');
      await station.startTransaction({ connectorId: 1, idTag: 'TAG-TLS', meterStart: 0 });
      await eventually(() => csms.of('StartTransaction').length > 0, 30_000, 'the start upstream');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Keystore } from '../../src/keystore/index.js';
import { runCli } from '../support/cli.js';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, siteWith, type TestDaemon } from '../support/daemon.js';
import { ManualClock } from '../support/fake-link-client.js';
import { tempDirForTest } from '../support/for-test.js';
import { TestCa, type Issued } from '../support/test-pki.js';
import { waitsBetweenTries } from '../support/uplink.js';

const UPLINK_WAIT_MS = 30_000;
const HOSTS = ['127.0.0.1', 'localhost'];

/** PEM files for upstream.csms.tls, in a directory of the test's own. */
function tlsFiles(files: { ca: string; client?: Issued }): { ca: string; cert?: string; key?: string } {
  const dir = tempDirForTest('uplink-tls');
  const write = (name: string, pem: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, pem, { mode: 0o600 });
    return file;
  };
  return {
    ca: write('csms-ca.pem', files.ca),
    ...(files.client && { cert: write('gateway.crt', files.client.cert), key: write('gateway.key', files.client.key) }),
  };
}

function uplinkTo(csms: TestCsms, securityProfile: 2 | 3, tls: object): Record<string, unknown> {
  return { ...siteWith(), upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile, tls } } };
}

/** The site charges on local decisions whatever the uplink does. */
async function chargesLocally(t: TestDaemon): Promise<void> {
  const station = await t.connect();
  expect(await station.boot()).toMatchObject({ status: 'Accepted' });
  const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-TLS', meterStart: 0 });
  await station.stopTransaction({ transactionId, meterStop: 500 });
  expect(t.events('StopTransaction')).toHaveLength(1);
}

describe('uplink to a CSMS over TLS (security profiles 2 and 3)', () => {
  it(
    'profile 2: wss:// to a CSMS whose certificate the configured CA signed, with the password `station upstream-password` kept',
    async () => {
      const ca = new TestCa('Operator CA');
      const csms = await TestCsms.startForTest({ tls: ca.server(HOSTS) });
      expect(csms.url).toMatch(/^wss:\/\//);
      const t = await daemonForTest(uplinkTo(csms, 2, tlsFiles({ ca: ca.cert })));
      const set = await runCli(['station', 'upstream-password', 'CP001', '--config', t.temp.configPath], {
        input: 'over tls\n',
      });
      expect(set.code).toBe(0);

      await chargesLocally(t);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the session upstream');
      expect(csms.passwordOf('CP001')).toBe('over tls');
      expect(new Set(csms.received.map((m) => m.identity))).toEqual(new Set(['CP001']));
      expect(csms.of('StartTransaction')).toEqual([expect.objectContaining({ idTag: 'TAG-TLS', meterStart: 0 })]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a CSMS certificate the configured CA did not sign is refused: logged, tried again, the site charging on and its queue kept',
    async () => {
      const ca = new TestCa('Operator CA');
      const impostor = new TestCa('Someone else');
      const csms = await TestCsms.startForTest({ tls: impostor.server(HOSTS) });
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest(uplinkTo(csms, 2, tlsFiles({ ca: ca.cert })), { linkClock: clock });
      (await Keystore.open({ dataDir: t.temp.dataDir, retiredKeyGraceS: 60 })).setUpstreamPassword('CP001', 'secret');

      await chargesLocally(t);
      // Tried again after the reconnect back-off (1 s), let run out.
      expect(await waitsBetweenTries(clock, 1)).toEqual([1000]);
      await eventually(() => t.logged('CSMS unreachable').length >= 2, UPLINK_WAIT_MS, 'the link tried again');
      expect(t.logged('CSMS unreachable')[0]).toMatchObject({
        stationId: 'CP001',
        error: expect.stringMatching(/certificate/i),
      });
      expect(csms.received).toEqual([]);
      const health = (await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/health`)).json()) as {
        upstream: { stations: unknown[] };
      };
      expect(health.upstream.stations).toEqual([
        expect.objectContaining({ stationId: 'CP001', connected: false, queued: 2 }),
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "profile 3: the gateway's client certificate (upstream.csms.tls.cert and key), checked by a CSMS that requires one",
    async () => {
      const ca = new TestCa('Operator CA');
      const csms = await TestCsms.startForTest({
        tls: { ...ca.server(HOSTS), ca: ca.cert, requestCert: true, rejectUnauthorized: true },
      });
      const t = await daemonForTest(uplinkTo(csms, 3, tlsFiles({ ca: ca.cert, client: ca.client('gateway-site-7') })));

      await chargesLocally(t);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the session upstream');
      expect(csms.clientCertificateOf('CP001')).toBe('gateway-site-7');
      // Profile 3 proves the gateway by its certificate alone: no password is sent.
      expect(csms.passwordOf('CP001')).toBeUndefined();
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'profile 3: a client certificate from a CA the CSMS does not trust is refused by the CSMS; logged, tried again',
    async () => {
      const ca = new TestCa('Operator CA');
      const csms = await TestCsms.startForTest({
        tls: { ...ca.server(HOSTS), ca: ca.cert, requestCert: true, rejectUnauthorized: true },
      });
      const stranger = new TestCa('Not the operator').client('gateway-site-7');
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest(uplinkTo(csms, 3, tlsFiles({ ca: ca.cert, client: stranger })), {
        linkClock: clock,
      });

      await chargesLocally(t);
      // Tried again after the reconnect back-off (1 s), let run out.
      expect(await waitsBetweenTries(clock, 1)).toEqual([1000]);
      await eventually(() => t.logged('CSMS unreachable').length >= 2, UPLINK_WAIT_MS, 'the link tried again');
      expect(csms.tlsErrors.length).toBeGreaterThan(0);
      expect(csms.received).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

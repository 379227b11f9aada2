import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGatewayCertificate } from '../../src/keystore/index.js';
import { runCli, runCliJson } from '../support/cli.js';
import { opensslSelfSigned, oversizedRsaCsr } from '../support/csr.js';
import { eventually, PROCESS_TEST_TIMEOUT_MS, siteWith, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { externalTool } from '../support/meter-simulator.js';
import { connectStation } from '../support/station.js';
import { stationForTest, stationV201ForTest } from '../support/for-test.js';

/**
 * Security profile 3 with real certificates. Stations' keys and certificate requests come from the openssl
 * command (not our code); the gateway's station CA signs them through `chargegate station cert` or a 2.0.1
 * station's SignCertificate; Node's TLS stack checks them at the upgrade.
 */
const STATIONS = [
  { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] },
  { id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] },
];

let dir: string;

/**
 * A new key (RSA 2048 unless `newKey` says otherwise: openssl req's -newkey and -pkeyopt) and a CSR naming
 * `commonName`, made by openssl.
 */
function keyAndCsr(name: string, commonName: string, newKey = ['rsa:2048']): { key: string; csr: string } {
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  execFileSync(
    'openssl',
    ['req', '-new', '-newkey', ...newKey, '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${commonName}`],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), csr };
}

describe.skipIf(!externalTool('openssl', ['version']))(
  'security profile 3: station client certificates from the gateway CA',
  () => {
    let serverCa: string;
    // One daemon for the file: each case has its own station or only asks `station cert`, and the gateway
    // certificate and the station CA (RSA 2048 and 3072 keys, the CA made by the first `station cert`) are made once.
    let t: TestDaemon;

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'chargegate-profile3-'));
      const { certificate, privateKey } = await createGatewayCertificate({
        names: ['localhost', '127.0.0.1'],
        validDays: 30,
      });
      serverCa = certificate;
      writeFileSync(path.join(dir, 'ocpp.crt'), certificate);
      writeFileSync(path.join(dir, 'ocpp.key'), privateKey, { mode: 0o600 });
      t = await startTestDaemon({
        ...siteWith([], STATIONS),
        ocpp: {
          host: '127.0.0.1',
          port: 0,
          securityProfile: 3,
          tls: { cert: path.join(dir, 'ocpp.crt'), key: path.join(dir, 'ocpp.key') },
        },
      });
      return async () => {
        await t.stop();
        rmSync(dir, { recursive: true, force: true });
      };
    });

    it(
      'admits a station with the certificate `station cert` issued for its id, and refuses no certificate, another id, another CA, and a blocked station',
      async () => {
        const refusedBefore = t.logged('station connection refused').length;
        const { key, csr } = keyAndCsr('cp001', 'CP001');
        const out = path.join(dir, 'cp001-chain.pem');
        const signed = await runCliJson<{ certificate: string; stationCa: string; notAfter: string }>([
          'station',
          'cert',
          'CP001',
          '--csr',
          csr,
          '--out',
          out,
          '--config',
          t.temp.configPath,
        ]);
        expect(signed.code).toBe(0);
        const issued = new X509Certificate(signed.data.certificate);
        expect(issued.subject).toBe('CN=CP001');
        expect(issued.checkIssued(new X509Certificate(signed.data.stationCa))).toBe(true);
        expect(readFileSync(out, 'utf8')).toBe(`${signed.data.certificate}${signed.data.stationCa}`);

        const station = await stationForTest(t.url, 'CP001', undefined, {
          ca: serverCa,
          clientCertificate: { cert: readFileSync(out), key },
        });
        expect(await station.boot()).toMatchObject({ status: 'Accepted' });

        await expect(connectStation(t.url, 'CP001', undefined, { ca: serverCa })).rejects.toMatchObject({ code: 401 });
        await expect(
          connectStation(t.url, 'EV201', undefined, {
            ca: serverCa,
            clientCertificate: { cert: readFileSync(out), key },
          }),
        ).rejects.toMatchObject({ code: 401 });
        await expect(
          connectStation(t.url, 'CP001', undefined, {
            ca: serverCa,
            clientCertificate: opensslSelfSigned(dir, 'CP001'),
          }),
        ).rejects.toMatchObject({ code: 401 });
        const reasons = t
          .logged('station connection refused')
          .slice(refusedBefore)
          .map((l) => l.reason);
        expect(reasons[0]).toMatch(/^no client certificate from this gateway's station CA/);
        expect(reasons[1]).toBe('the client certificate is for "CP001", not "EV201"');
        expect(reasons[2]).toMatch(/^no client certificate from this gateway's station CA \(.+\)/);

        // Revocation: a blocked station's certificate no longer admits it; its open connection is closed.
        expect((await runCli(['station', 'block', 'CP001', '--config', t.temp.configPath])).code).toBe(0);
        await eventually(
          () => t.logged('station access changed: closing its connection').some((l) => l.stationId === 'CP001'),
          10_000,
          'the blocked station disconnected',
        );
        await expect(
          connectStation(t.url, 'CP001', undefined, {
            ca: serverCa,
            clientCertificate: { cert: readFileSync(out), key },
          }),
        ).rejects.toMatchObject({ code: 401 });
        expect(t.logged('station connection refused').at(-1)).toMatchObject({
          reason: 'station blocked: its certificate no longer admits it',
        });
      },
      PROCESS_TEST_TIMEOUT_MS,
    );

    it(
      'a 2.0.1 station gets its certificate through SignCertificate -> CertificateSigned (an EC P-256 key, as 2.0.1 stations commonly have), then connects with it; a CSR for another id is refused',
      async () => {
        const sentBefore = t.logged('station certificate sent').length;
        // First contact with the certificate `station cert` gave it (the station's factory identity, say).
        const first = keyAndCsr('ev201-first', 'EV201');
        const chain = await runCliJson<{ certificate: string; stationCa: string }>([
          'station',
          'cert',
          'EV201',
          '--csr',
          first.csr,
          '--config',
          t.temp.configPath,
        ]);
        const station = await stationV201ForTest(t.url, 'EV201', {
          tls: { ca: serverCa, cert: `${chain.data.certificate}${chain.data.stationCa}`, key: first.key },
        });
        await station.boot();

        const renewed = keyAndCsr('ev201-renewed', 'EV201', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256']);
        expect(
          await station.call('SignCertificate', {
            csr: readFileSync(renewed.csr, 'utf8'),
            certificateType: 'ChargingStationCertificate',
          }),
        ).toEqual({ status: 'Accepted' });
        const [delivered] = await eventually(
          () => station.certificatesSigned.length > 0 && station.certificatesSigned,
          10_000,
          'CertificateSigned',
        );
        expect(delivered!.certificateType).toBe('ChargingStationCertificate');
        const [leaf] = delivered!.certificateChain.split(/(?<=-----END CERTIFICATE-----\n)/);
        expect(new X509Certificate(leaf!).subject).toBe('CN=EV201');
        expect(new X509Certificate(leaf!).checkIssued(new X509Certificate(chain.data.stationCa))).toBe(true);

        const other = keyAndCsr('other', 'CP001');
        expect(await station.call('SignCertificate', { csr: readFileSync(other.csr, 'utf8') })).toEqual({
          status: 'Rejected',
        });

        // A station that refuses the certificate it asked for (its key store full, say): a warning names it; it stays
        // connected and may ask again.
        station.certificateSignedAnswer = 'Rejected';
        expect(
          await station.call('SignCertificate', { csr: readFileSync(keyAndCsr('ev201-refused', 'EV201').csr, 'utf8') }),
        ).toEqual({ status: 'Accepted' });
        await eventually(
          () =>
            t.logged(
              'the station refused the certificate it asked for (CertificateSigned: Rejected); it keeps its current one',
            ).length > 0,
          10_000,
          'the refusal logged',
        );
        expect(
          t.logged(
            'the station refused the certificate it asked for (CertificateSigned: Rejected); it keeps its current one',
          ),
        ).toEqual([expect.objectContaining({ level: 40, stationId: 'EV201' })]);
        expect(t.logged('station certificate sent')).toHaveLength(sentBefore + 1);
        expect(await station.call('Heartbeat', {})).toMatchObject({ currentTime: expect.any(String) });

        await station.close();
        const again = await stationV201ForTest(t.url, 'EV201', {
          tls: { ca: serverCa, cert: delivered!.certificateChain, key: renewed.key },
        });
        expect(await again.boot()).toMatchObject({ status: 'Accepted' });
      },
      PROCESS_TEST_TIMEOUT_MS,
    );

    it('`station cert` refuses a CSR that names another station, and one with an 8192-bit key (exit 2)', async () => {
      const { csr } = keyAndCsr('mismatch', 'SOMEONE-ELSE');
      const refused = await runCli(['station', 'cert', 'CP001', '--csr', csr, '--config', t.temp.configPath]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('the request names "SOMEONE-ELSE", not station "CP001"');

      const oversized = path.join(dir, 'oversized.csr');
      writeFileSync(oversized, oversizedRsaCsr(readFileSync(keyAndCsr('cp001-oversized', 'CP001').csr, 'utf8')));
      const tooLarge = await runCli(['station', 'cert', 'CP001', '--csr', oversized, '--config', t.temp.configPath]);
      expect(tooLarge.code).toBe(2);
      expect(tooLarge.stderr).toContain('an RSA key of 8192 bits: only 2048 to 4096');
    });
  },
);

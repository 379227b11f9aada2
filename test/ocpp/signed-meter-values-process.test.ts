import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/index.js';
import { exitOf, runCli, runCliJson } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import { spawnDaemonForTest, stationForTest, tempSiteForTest } from '../support/for-test.js';
import { independentlyVerified, meterKey, meterKeyForms, ocmfRecord } from '../support/ocmf.js';

describe('signed meter values across processes (docs/partners/signed-meter-values.md#signed-meter-values)', () => {
  it(
    'kill -9 between the Begin reading (its key in the OCA envelope) and the stop: the acknowledged reading survives, the stop carries both, verified; show and export print them, every exported line verifies',
    async () => {
      const temp = tempSiteForTest({
        log: { level: 'info' },
        ...siteWith([{ id: 'partner', url: 'http://127.0.0.1:9/events' }]),
      });
      const meter = meterKey('P-256');
      const begin = JSON.stringify({
        signedMeterData: ocmfRecord(meter, { tx: 'B', kWh: 1.5 }),
        signingMethod: meter.algorithm,
        encodingMethod: 'OCMF',
        // The form the OCA note prescribes; the End reading after the restart is checked against it too.
        publicKey: meterKeyForms(meter)['base64 of oca:base16:asn1 (the note)'],
      });
      // SD in base64 (SE base64), as some meters write it.
      const end = ocmfRecord(meter, { tx: 'E', kWh: 4.25 }, { encoding: 'base64' });

      const first = await spawnDaemonForTest(temp.configPath);
      const before = await stationForTest(first.ready.ocppUrl, 'CP001');
      await before.boot();
      const transactionId = await before.startTransaction({ connectorId: 1, idTag: 'TAG', meterStart: 1500 });
      await before.signedMeterValue({ connectorId: 1, value: begin });
      // Acknowledged, so durable: killed before anything else happens.
      first.child.kill('SIGKILL');
      await exitOf(first.child);

      const second = await spawnDaemonForTest(temp.configPath);
      const after = await stationForTest(second.ready.ocppUrl, 'CP001');
      await after.boot();
      await after.stopTransaction({
        transactionId,
        meterStop: 4250,
        signedValues: [{ value: end }],
        energyValues: [{ wh: 4250 }],
      });
      second.child.kill('SIGTERM');
      await exitOf(second.child);

      const db = openDatabase(temp.dataDir);
      const [stop] = (
        db.prepare("SELECT payload FROM events WHERE event_type = 'StopTransaction'").all() as Array<{
          payload: string;
        }>
      ).map((r) => JSON.parse(r.payload) as { signedMeterValues: Array<Record<string, unknown>> });
      db.close();
      expect(stop!.signedMeterValues).toEqual([
        expect.objectContaining({
          context: 'Transaction.Begin',
          signedMeterData: JSON.parse(begin).signedMeterData,
          verified: true,
          consistent: true,
        }),
        expect.objectContaining({ context: 'Transaction.End', signedMeterData: end, verified: true, consistent: true }),
      ]);

      const shown = await runCliJson<{ transactionId: number; readings: unknown[]; signedMeterValues: unknown[] }>([
        'transaction',
        'show',
        String(transactionId),
        '--config',
        temp.configPath,
      ]);
      expect(shown.code).toBe(0);
      expect(shown.data).toMatchObject({ transactionId, meterStart: 1.5, meterStop: 4.25 });
      expect(shown.data.signedMeterValues).toEqual(stop!.signedMeterValues);
      // The plain End reading of transactionData beside the signed one.
      expect(shown.data.readings).toEqual([
        { context: 'Transaction.End', timestamp: expect.any(String), energy: 4.25 },
      ]);
      const human = await runCli(['transaction', 'show', String(transactionId), '--config', temp.configPath]);
      expect(human.stdout).toMatch(/Transaction\.End +\S+ +4\.25/);
      expect(human.stdout).toMatch(/Transaction\.Begin .* yes +yes/);

      const exported = await runCli([
        'transaction',
        'export',
        String(transactionId),
        '--format',
        'ocmf',
        '--config',
        temp.configPath,
      ]);
      expect(exported.code).toBe(0);
      const lines = exported.stdout.trimEnd().split('\n');
      expect(lines).toEqual([JSON.parse(begin).signedMeterData, end]);
      for (const line of lines) expect(independentlyVerified(line, meter.publicKeyHex)).toBe(true);

      const badFormat = await runCli([
        'transaction',
        'export',
        String(transactionId),
        '--format',
        'pdf',
        '--config',
        temp.configPath,
      ]);
      expect(badFormat).toMatchObject({ code: 2, stderr: expect.stringContaining('--format') });
      expect((await runCli(['transaction', 'show', '999', '--config', temp.configPath])).code).toBe(1);
      expect((await runCli(['transaction', 'show', 'x', '--config', temp.configPath])).code).toBe(2);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "station meter-key pins a key (with the config's) and --remove takes it away, refuses a bad one naming it; check-config names a bad configured key by its path",
    async () => {
      const meter = meterKey('P-384');
      const configKey = meterKey();
      const temp = tempSiteForTest(
        siteWith([], [{ id: 'CP001', chargePoints: [], meterPublicKeys: [configKey.publicKeyHex] }]),
      );
      const pem = meter.publicKey.export({ type: 'spki', format: 'pem' }).toString();
      // A PEM begins with dashes: after `--`, so it is no option.
      const pinned = await runCli(['station', 'meter-key', '--json', '--config', temp.configPath, 'CP001', '--', pem]);
      expect(pinned.code).toBe(0);
      expect(JSON.parse(pinned.stdout)).toEqual({ stationId: 'CP001', publicKey: meter.publicKeyHex, pinned: true });
      const db = openDatabase(temp.dataDir);
      expect(db.prepare('SELECT station_id, public_key FROM meter_key_pins').all()).toEqual([
        { station_id: 'CP001', public_key: meter.publicKeyHex },
      ]);
      db.close();
      // --remove takes the pin away, in whatever form the key is given; a second time, or a key only the config
      // pins, there is nothing to remove (exit 1).
      const removed = await runCli([
        'station',
        'meter-key',
        '--remove',
        '--json',
        '--config',
        temp.configPath,
        'CP001',
        Buffer.from(meter.publicKeyHex, 'hex').toString('base64'),
      ]);
      expect(removed.code).toBe(0);
      expect(JSON.parse(removed.stdout)).toEqual({ stationId: 'CP001', publicKey: meter.publicKeyHex, pinned: false });
      const afterRemove = openDatabase(temp.dataDir);
      expect(afterRemove.prepare('SELECT COUNT(*) AS n FROM meter_key_pins').get()).toEqual({ n: 0 });
      afterRemove.close();
      const again = await runCli([
        'station',
        'meter-key',
        '--remove',
        'CP001',
        meter.publicKeyHex,
        '--config',
        temp.configPath,
      ]);
      expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining('no such meter key pinned for CP001') });
      const configured = await runCli([
        'station',
        'meter-key',
        '--remove',
        'CP001',
        configKey.publicKeyHex,
        '--config',
        temp.configPath,
      ]);
      expect(configured.code).toBe(1);

      const bad = await runCli(['station', 'meter-key', 'CP001', 'nonsense', '--config', temp.configPath]);
      expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('<key>') });
      expect(
        (await runCli(['station', 'meter-key', 'NOPE', meter.publicKeyHex, '--config', temp.configPath])).code,
      ).toBe(1);

      const broken = tempSiteForTest(siteWith([], [{ id: 'CP001', chargePoints: [], meterPublicKeys: ['00ff'] }]));
      const check = await runCli(['check-config', '--config', broken.configPath]);
      expect(check.code).toBe(2);
      expect(check.stderr).toContain('sites[0].stations[0].meterPublicKeys[0]');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

import { describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../support/cli.js';
import { CP001, daemonForTest, PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import { stationV201ForTest } from '../support/for-test.js';

/** A 2.0.1 station beside the 1.6 CP001: EVSE 1 and 2, one connector each. */
const EV201 = { id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1, 2] }] };

describe('chargegate station list (contract 11.1): what each station is', () => {
  it(
    'shows vendor, model and firmware from the last BootNotification of a 1.6 and a 2.0.1 station',
    async () => {
      const t = await daemonForTest(siteWith([], [CP001, EV201]));
      await (await t.connect('CP001')).boot({ chargePointSerialNumber: 'SN-16' });
      await (await stationV201ForTest(t.url, 'EV201')).boot();
      const config = ['--config', t.temp.configPath];

      const listed = await runCliJson<{ stations: unknown[] }>(['station', 'list', ...config]);
      expect(listed).toMatchObject({ code: 0 });
      expect(listed.data.stations).toEqual([
        expect.objectContaining({
          id: 'CP001',
          vendor: 'chargegate-sim',
          model: 'SimStation',
          serialNumber: 'SN-16',
          firmwareVersion: '1.0.0',
        }),
        expect.objectContaining({
          id: 'EV201',
          vendor: 'ACME',
          model: 'Wallbox 2.0.1',
          serialNumber: null,
          firmwareVersion: '2.1.0',
        }),
      ]);

      const human = await runCli(['station', 'list', ...config]);
      expect(human.code).toBe(0);
      const [header, ...rows] = human.stdout.trimEnd().split('\n');
      expect(header).toMatch(/^STATION +SITE +STATE +ONLINE +LAST SEEN +PASSWORD +VENDOR +MODEL +FIRMWARE$/);
      expect(rows).toEqual([
        expect.stringMatching(/^CP001 +s1 +configured +yes +.+ +chargegate-sim +SimStation +1\.0\.0$/),
        expect.stringMatching(/^EV201 +s1 +configured +yes +.+ +ACME +Wallbox 2\.0\.1 +2\.1\.0$/),
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

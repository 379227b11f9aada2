import { describe, expect, it } from 'vitest';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import { stationV201ForTest } from '../support/for-test.js';
import { EV201, UPLINK_WAIT_MS, uplinkConfig } from '../support/uplink.js';

describe('the uplink of a 2.0.1 station that booted before the uplink kept its BootNotification', () => {
  it(
    'is introduced by the boot chargegate knows of it (reason Unknown), not held until the station reboots',
    async () => {
      const csms = await TestCsms.startForTest();
      await csms.cutOff();
      const t = await daemonForTest({ ...siteWith([], [EV201]), ...uplinkConfig(csms) });
      const station = await stationV201ForTest(t.url, 'EV201');
      await station.boot();
      // As a database from the release before the uplink has it: the station's boot, but not as 2.0.1 sent it.
      t.db.prepare('DELETE FROM uplink_boot_notifications').run();

      csms.restore();
      await eventually(() => csms.of('BootNotification', 'EV201').length > 0, UPLINK_WAIT_MS, 'the boot upstream');
      expect(csms.of('BootNotification', 'EV201')[0]).toEqual({
        chargingStation: { vendorName: 'ACME', model: 'Wallbox 2.0.1', firmwareVersion: '2.1.0' },
        reason: 'Unknown',
      });
      // Accepted: the link goes on as for any station (its statuses, then live messages).
      await station.call('Heartbeat', {});
      await eventually(() => csms.of('Heartbeat', 'EV201').length > 0, UPLINK_WAIT_MS, 'a live heartbeat upstream');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

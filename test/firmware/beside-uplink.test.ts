import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localSocketPath } from '../../src/cli/local-socket.js';
import { addImage } from '../../src/firmware/index.js';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import { updatesFirmware201 } from '../support/firmware-station.js';
import { stationV201ForTest, tempDirForTest } from '../support/for-test.js';
import { requestOverSocket } from '../support/local-socket.js';
import { EV201, UPLINK_WAIT_MS, uplinkConfig } from '../support/uplink.js';

/**
 * Contract 11.1 and 11.2 under the uplink (10.3): the CSMS's own UpdateFirmware keeps being relayed to the station and
 * the station's notifications to the CSMS; a local rollout beside it is allowed and logged, and the notifications
 * about the CSMS's request (its requestId) do not move the local one.
 */
describe('firmware rollout beside the CSMS', () => {
  it(
    "relays the CSMS's UpdateFirmware and the notifications; a local rollout goes on beside it by its own requestId",
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({ ...siteWith([], [EV201]), ...uplinkConfig(csms) });
      const station = await stationV201ForTest(t.url, 'EV201');
      const updates = updatesFirmware201(station, { newVersion: '3.0', silent: true });
      await station.boot();
      await eventually(() => csms.isConnected('EV201'), UPLINK_WAIT_MS, 'the link up');

      const fromCsms = { location: 'https://csms.example/fw-9.bin', retrieveDateTime: new Date().toISOString() };
      expect(await csms.call('EV201', 'UpdateFirmware', { requestId: 77, firmware: fromCsms })).toEqual({
        status: 'Accepted',
      });
      expect(updates.received).toEqual([{ requestId: 77, firmware: fromCsms }]);
      await station.call('FirmwareStatusNotification', { status: 'Downloading', requestId: 77 });
      await eventually(() => csms.of('FirmwareStatusNotification', 'EV201').length === 1, UPLINK_WAIT_MS);

      const file = path.join(tempDirForTest('image'), 'fw-3.0.bin');
      writeFileSync(file, Buffer.alloc(1000, 3));
      const { imageId } = await addImage(t.db, t.temp.dataDir, { maxImageBytes: 1e6, maxTotalBytes: 1e6 }, { file });
      const created = await requestOverSocket(localSocketPath(t.temp.dataDir), 'POST', '/firmware/rollouts', {
        imageId,
        stationIds: ['EV201'],
      });
      expect(created.status).toBe(201);
      const { rolloutId } = created.body as { rolloutId: string };
      await eventually(() => updates.received.length === 2);
      const local = updates.received[1] as { requestId: number; firmware: { location: string } };
      expect(local.requestId).not.toBe(77);
      expect(local.firmware.location).toMatch(/\/firmware\/[0-9a-f]{32}\/fw-3\.0\.bin$/);
      expect(t.logged('firmware rollout beside the CSMS the uplink connects to')).toEqual([
        expect.objectContaining({ rolloutId }),
      ]);

      const stateOf = async (): Promise<string> => {
        const answer = await requestOverSocket(
          localSocketPath(t.temp.dataDir),
          'GET',
          `/firmware/rollouts/${rolloutId}`,
        );
        return (answer.body as { stations: Array<{ state: string }> }).stations[0]!.state;
      };
      await station.call('FirmwareStatusNotification', { status: 'InstallationFailed', requestId: 77 });
      expect(await stateOf()).toBe('sent');
      await station.call('FirmwareStatusNotification', { status: 'Downloaded', requestId: local.requestId });
      expect(await stateOf()).toBe('downloaded');
      await station.call('FirmwareStatusNotification', { status: 'Installed', requestId: local.requestId });
      expect(await stateOf()).toBe('installed');
      await eventually(() => csms.of('FirmwareStatusNotification', 'EV201').length === 4, UPLINK_WAIT_MS);
      expect(csms.of('FirmwareStatusNotification', 'EV201').map((n) => [n.status, n.requestId])).toEqual([
        ['Downloading', 77],
        ['InstallationFailed', 77],
        ['Downloaded', local.requestId],
        ['Installed', local.requestId],
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

import { describe, expect, it } from 'vitest';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';

const UPLINK_WAIT_MS = 30_000;

describe('the uplink boot (docs/design/uplink.md#uplink-what-the-csms-sees)', () => {
  it(
    'a link cut while its BootNotification waits for an answer reconnects and boots again, within the back-off',
    async () => {
      const csms = await TestCsms.startForTest();
      csms.behaviour = (m) => (m.action === 'BootNotification' ? 'silent' : undefined);
      const t = await daemonForTest({ upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile: 0 } } });
      const station = await t.connect();
      await station.boot();
      await eventually(() => csms.of('BootNotification').length === 1, UPLINK_WAIT_MS, 'the first boot upstream');

      await csms.cutOff();
      csms.behaviour = () => undefined;
      csms.restore();
      // ocpp-rpc's back-off is 10 s at most; the boot retry interval (60 s) must not replace it.
      await eventually(() => csms.of('BootNotification').length === 2, 15_000, 'the boot after the reconnect');
      await station.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 100 });
      await eventually(() => csms.of('StartTransaction').length === 1, UPLINK_WAIT_MS, 'the start upstream');
      expect(t.logged('uplink connected').length).toBeGreaterThanOrEqual(2);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

import { describe, expect, it } from 'vitest';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';

const UPLINK_WAIT_MS = 30_000;

/** As daemonForTest writes it: info lines, so the test sees what the reload logged. */
const LOG = { log: { level: 'info' } };
const upstream = (csms: TestCsms) => ({
  ...LOG,
  upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile: 0 } },
});

describe('uplink and SIGHUP (docs/design/uplink.md#uplink-what-the-csms-sees)', () => {
  it(
    'a new upstream.csms.url moves every link to the new CSMS, queue intact; adding or removing upstream.csms waits for a restart',
    async () => {
      const first = await TestCsms.startForTest();
      const second = await TestCsms.startForTest();
      const t = await daemonForTest(upstream(first));
      const station = await t.connect();
      await station.boot();
      await eventually(() => first.isConnected('CP001'), UPLINK_WAIT_MS, 'the link to the first CSMS');

      // Down while the session runs: its messages wait in the queue and go to the CSMS the reload names.
      await first.cutOff();
      const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 100 });
      t.temp.write(upstream(second));
      expect(await t.daemon.reload()).toBe(true);
      await station.stopTransaction({ transactionId, meterStop: 900, reason: 'Local' });
      await eventually(() => second.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the session at the new CSMS');
      expect(second.received.map((m) => m.action).slice(0, 3)).toEqual([
        'BootNotification',
        'StartTransaction',
        'StopTransaction',
      ]);
      expect(second.of('StopTransaction')[0]).toMatchObject({ transactionId: 5001, meterStop: 900 });
      first.restore();
      expect(first.of('StartTransaction')).toEqual([]);
      expect(t.logged('uplink moved to the reloaded upstream.csms')).toHaveLength(1);
      // upstream.timeoutMs is a link's too: changed alone, the links are made again with it.
      t.temp.write({
        ...upstream(second),
        upstream: { timeoutMs: 3000, csms: { url: second.url, securityProfile: 0 } },
      });
      expect(await t.daemon.reload()).toBe(true);
      expect(t.logged('uplink moved to the reloaded upstream.csms')).toHaveLength(2);

      // Without upstream.csms the stations' messages would lose their forwarder: the running uplink stays.
      t.temp.write(LOG);
      expect(await t.daemon.reload()).toBe(true);
      const restart = t.logs.find((l) => l.msg === 'these config changes take effect only after a restart');
      expect(restart?.keys).toEqual(['upstream.csms']);
      await station.statusNotification({ connectorId: 1, status: 'Available' });
      await eventually(() => second.of('StatusNotification').length > 0, UPLINK_WAIT_MS, 'the link kept');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

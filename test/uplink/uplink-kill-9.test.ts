import { describe, expect, it } from 'vitest';
import { exitOf } from '../support/cli.js';
import { TestCsms } from '../support/csms.js';
import { eventually, PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import { spawnDaemonForTest, stationForTest, tempSiteForTest } from '../support/for-test.js';
import {
  expectCsmsTransactionIds,
  expectInOrderOnceOrRepeatedAlike,
  transactionMessages16 as transactionMessages,
} from '../support/uplink.js';

const SESSIONS = 5;

describe('uplink durability', () => {
  it(
    'kill -9 during the replay loses nothing: after the restart the backlog reaches the CSMS, repeats only with the same content, each message naming the id of its Start',
    async () => {
      const csms = await TestCsms.startForTest();
      await csms.cutOff();
      const temp = tempSiteForTest({
        log: { level: 'info' },
        ...siteWith(),
        upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile: 0 } },
      });
      const first = await spawnDaemonForTest(temp.configPath);
      const station = await stationForTest(first.ready.ocppUrl, 'CP001');
      await station.boot();
      for (let n = 1; n <= SESSIONS; n += 1) {
        const transactionId = await station.startTransaction({
          connectorId: 1,
          idTag: `TAG-${n}`,
          meterStart: n * 1000,
        });
        await station.meterValues({ connectorId: 1, transactionId, wh: n * 1000 + 500 });
        await station.stopTransaction({ transactionId, meterStop: n * 1000 + 900 });
      }
      await station.close();

      // The CSMS comes back slow; the daemon dies a few messages into the replay.
      csms.answerDelayMs = 100;
      csms.restore();
      await eventually(() => transactionMessages(csms).length >= 5, 30_000, 'the replay under way');
      first.child.kill('SIGKILL');
      await exitOf(first.child);
      const before = transactionMessages(csms).length;
      expect(before).toBeLessThan(SESSIONS * 3);

      // The station stays away: the backlog still goes out after the restart.
      csms.answerDelayMs = 0;
      await spawnDaemonForTest(temp.configPath);
      await eventually(
        () => csms.of('StopTransaction').some((p) => p.meterStop === SESSIONS * 1000 + 900),
        30_000,
        'the last stop',
      );

      const received = transactionMessages(csms);
      // Every message arrived, in order, once or repeated with the same content (but the id the CSMS gave).
      expectInOrderOnceOrRepeatedAlike(
        received,
        Array.from({ length: SESSIONS }, (_, i) => i + 1).flatMap((n) => [
          `StartTransaction ${n * 1000}`,
          `MeterValues ${n * 1000 + 500}`,
          `StopTransaction ${n * 1000 + 900}`,
        ]),
        ['transactionId'],
      );
      // A reading or stop names the id the CSMS gave the latest Start of its session before it.
      expectCsmsTransactionIds(received);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "a CSMS's refusals count across a kill -9: a message is tried transactionMessageAttempts times in all, not per process",
    async () => {
      const csms = await TestCsms.startForTest();
      csms.behaviour = (m) =>
        m.action === 'StartTransaction' && m.params.idTag === 'TAG-REFUSED' ? 'callerror' : undefined;
      const temp = tempSiteForTest({
        log: { level: 'info' },
        ...siteWith(),
        upstream: {
          timeoutMs: 2000,
          csms: {
            url: csms.url,
            securityProfile: 0,
            transactionMessageAttempts: 3,
            transactionMessageRetryIntervalS: 2,
          },
        },
      });
      const first = await spawnDaemonForTest(temp.configPath);
      const station = await stationForTest(first.ready.ocppUrl, 'CP001');
      await station.boot();
      const refused = await station.startTransaction({ connectorId: 1, idTag: 'TAG-REFUSED', meterStart: 0 });
      await station.stopTransaction({ transactionId: refused, meterStop: 100 });
      const taken = await station.startTransaction({ connectorId: 1, idTag: 'TAG-TAKEN', meterStart: 100 });
      await station.stopTransaction({ transactionId: taken, meterStop: 200 });
      // Killed while it waits to try a third time.
      await eventually(
        () => first.logs.filter((line) => line.includes('queued message not taken: tried again')).length === 2,
        30_000,
        'two refusals',
      );
      first.child.kill('SIGKILL');
      await exitOf(first.child);
      await station.close();

      await spawnDaemonForTest(temp.configPath);
      await eventually(() => csms.of('StopTransaction').length === 1, 30_000, 'the next session upstream');
      expect(csms.of('StartTransaction').map((p) => p.idTag)).toEqual([
        'TAG-REFUSED',
        'TAG-REFUSED',
        'TAG-REFUSED',
        'TAG-TAKEN',
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

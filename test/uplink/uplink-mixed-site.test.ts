import { describe, expect, it } from 'vitest';
import { exitOf, runCli } from '../support/cli.js';
import { TestCsms } from '../support/csms.js';
import { CP001, eventually, PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import {
  receiverForTest,
  spawnDaemonForTest,
  stationForTest,
  stationV201ForTest,
  tempSiteForTest,
} from '../support/for-test.js';
import {
  EV201,
  expectCsmsTransactionIds,
  expectInOrderOnceOrRepeatedAlike,
  session,
  session201,
  transactionEvents201,
  transactionMessages16,
  UPLINK_WAIT_MS,
  uplinkConfig,
  upstreamHealth,
} from '../support/uplink.js';

/** The 1.6 station's sessions 1 (online), 2 and 3 (uplink cut), as the CSMS must end up with them. */
const KEYS_16 = [1, 2, 3].flatMap((n) => [
  `StartTransaction ${n * 10_000}`,
  `MeterValues ${n * 10_000 + 500}`,
  `StopTransaction ${n * 10_000 + 1000}`,
]);
/** The 2.0.1 station's transactions A (online) and B (uplink cut). */
const KEYS_201 = [
  ['A', 1000],
  ['B', 3000],
].flatMap(([id, wh]) => [
  `Started EV201-${id} ${wh}`,
  `Updated EV201-${id} ${Number(wh) + 500}`,
  `Ended EV201-${id} ${Number(wh) + 1000}`,
]);

describe('uplink acceptance: a mixed 1.6 / 2.0.1 site under a CSMS (issue 31)', () => {
  it(
    'the uplink cut for three transactions: the stations charge on local decisions and the webhooks arrive; back, the CSMS gets every start, reading and stop in order per station (its own 1.6 ids), a kill -9 during the replay loses nothing, and its RemoteStop and RequestStop stop the right sessions',
    async () => {
      const csms = await TestCsms.startForTest();
      const receiver = await receiverForTest();
      const temp = tempSiteForTest({
        log: { level: 'info' },
        ...siteWith(
          [{ id: 'partner', url: receiver.url('/events'), events: ['StartTransaction', 'StopTransaction'] }],
          [CP001, EV201],
        ),
        // One fleet card for every session, two at a time on a station.
        authorization: { allowConcurrentTx: true },
        ...uplinkConfig(csms),
      });
      // The local decision: the card is on chargegate's own list.
      expect((await runCli(['idtag', 'add', 'FLEET', '--site', 's1', '--config', temp.configPath])).code).toBe(0);
      const first = await spawnDaemonForTest(temp.configPath, { built: true });
      const cp = await stationForTest(first.ready.ocppUrl, 'CP001');
      const ev = await stationV201ForTest(first.ready.ocppUrl, 'EV201');
      await cp.boot();
      await ev.boot();
      await eventually(
        async () =>
          ((await upstreamHealth(first.ready.httpPort)).stations as Array<{ connected: boolean }>).filter(
            (s) => s.connected,
          ).length === 2,
        UPLINK_WAIT_MS,
        'both links accepted',
      );

      // Online: one transaction on each station reaches the CSMS as it happens.
      await session(cp, 1, 1, 'FLEET');
      await session201(ev, 'EV201-A', 1000, 'FLEET');
      await eventually(
        () => transactionMessages16(csms).length === 3 && transactionEvents201(csms, 'EV201').length === 3,
        UPLINK_WAIT_MS,
        'the online transactions upstream',
      );
      await receiver.waitForCount(4, UPLINK_WAIT_MS);

      // Cut for three transactions, two on the 1.6 station and one on the 2.0.1 station, overlapping.
      await csms.cutOff();
      const webhooksBefore = receiver.requests.length;
      const second16 = await cp.startTransaction({ connectorId: 1, idTag: 'FLEET', meterStart: 20_000 });
      ev.meterWh = 3000;
      const started201 = await ev.transactionEvent('Started', 'EV201-B', {
        evseId: 1,
        idToken: 'FLEET',
        chargingState: 'Charging',
      });
      expect(started201.idTokenInfo?.status).toBe('Accepted');
      await cp.meterValues({ connectorId: 1, transactionId: second16, wh: 20_500 });
      ev.meterWh = 3500;
      await ev.transactionEvent('Updated', 'EV201-B', { triggerReason: 'MeterValuePeriodic' });
      await cp.stopTransaction({ transactionId: second16, meterStop: 21_000, reason: 'EVDisconnected' });
      await session(cp, 3, 1, 'FLEET');
      ev.meterWh = 4000;
      await ev.transactionEvent('Ended', 'EV201-B', { stoppedReason: 'EVDisconnected' });

      // The partner hears of every local session while the CSMS is away.
      await receiver.waitForCount(webhooksBefore + 6, UPLINK_WAIT_MS);
      const webhooks = receiver.requests
        .slice(webhooksBefore)
        .map((r) => r.json<{ eventType: string; payload: { stationId: string; meterStart: number } }>())
        .map((e) => `${e.eventType} ${e.payload.stationId} ${e.payload.meterStart}`)
        .sort();
      expect(webhooks).toEqual(
        [
          'StartTransaction CP001 20',
          'StopTransaction CP001 20',
          'StartTransaction CP001 30',
          'StopTransaction CP001 30',
          'StartTransaction EV201 3',
          'StopTransaction EV201 3',
        ].sort(),
      );
      expect(transactionMessages16(csms)).toHaveLength(3);
      expect(transactionEvents201(csms, 'EV201')).toHaveLength(3);

      // The CSMS comes back slow; the daemon dies a few messages into the replay, the stations with it.
      csms.answerDelayMs = 150;
      csms.restore();
      await eventually(
        () => transactionMessages16(csms).length + transactionEvents201(csms, 'EV201').length >= 9,
        UPLINK_WAIT_MS,
        'the replay under way',
      );
      first.child.kill('SIGKILL');
      await exitOf(first.child);
      expect(transactionMessages16(csms).length + transactionEvents201(csms, 'EV201').length).toBeLessThan(
        KEYS_16.length + KEYS_201.length,
      );

      // The stations stay away: both backlogs still go out after the restart.
      csms.answerDelayMs = 0;
      const second = await spawnDaemonForTest(temp.configPath, { built: true });
      await eventually(
        () =>
          transactionMessages16(csms).some((m) => m.key === 'StopTransaction 31000') &&
          transactionEvents201(csms, 'EV201').some((e) => e.key === 'Ended EV201-B 4000'),
        UPLINK_WAIT_MS,
        'every message after the restart',
      );
      const received16 = transactionMessages16(csms);
      expectInOrderOnceOrRepeatedAlike(received16, KEYS_16, ['transactionId']);
      expectCsmsTransactionIds(received16);
      const received201 = transactionEvents201(csms, 'EV201');
      expectInOrderOnceOrRepeatedAlike(received201, KEYS_201);
      // The CSMS heard of B only after it happened: offline, as the station's own offline queue would say.
      expect(received201.map((e) => [e.key.split(' ')[1], e.params.offline])).toEqual(
        received201.map((e) => (e.key.includes('EV201-A') ? ['EV201-A', undefined] : ['EV201-B', true])),
      );
      // Every link, the one made for the backlog too, was introduced by the station's own last BootNotification.
      expect(new Set(csms.of('BootNotification', 'EV201').map((b) => JSON.stringify(b)))).toEqual(
        new Set([
          JSON.stringify({
            chargingStation: { vendorName: 'ACME', model: 'Wallbox 2.0.1', firmwareVersion: '2.1.0' },
            reason: 'PowerUp',
          }),
        ]),
      );

      // The stations come back; the CSMS stops one of two sessions on each, naming the ids it knows.
      const cpAgain = await stationForTest(second.ready.ocppUrl, 'CP001');
      const evAgain = await stationV201ForTest(second.ready.ocppUrl, 'EV201');
      await cpAgain.boot();
      await evAgain.boot();
      await cpAgain.startTransaction({ connectorId: 1, idTag: 'FLEET', meterStart: 40_000 });
      const remote16 = await cpAgain.startTransaction({ connectorId: 2, idTag: 'FLEET', meterStart: 50_000 });
      evAgain.meterWh = 6000;
      await evAgain.transactionEvent('Started', 'EV201-C', { evseId: 1, idToken: 'FLEET', chargingState: 'Charging' });
      await evAgain.transactionEvent('Started', 'EV201-D', { evseId: 2, idToken: 'FLEET', chargingState: 'Charging' });
      const csmsIdOf = (meterStart: number) =>
        transactionMessages16(csms).find((m) => m.key === `StartTransaction ${meterStart}` && m.answer)?.answer
          ?.transactionId as number | undefined;
      const [csmsId, otherCsmsId] = await eventually(
        () =>
          csmsIdOf(50_000) !== undefined && csmsIdOf(40_000) !== undefined && [csmsIdOf(50_000)!, csmsIdOf(40_000)!],
        UPLINK_WAIT_MS,
        'the new 1.6 starts upstream',
      );
      await eventually(
        () => transactionEvents201(csms, 'EV201').some((e) => e.key.startsWith('Started EV201-D')),
        UPLINK_WAIT_MS,
        'the 2.0.1 starts upstream',
      );
      expect(csmsId).not.toBe(remote16);
      expect(await csms.call('CP001', 'RemoteStopTransaction', { transactionId: csmsId })).toEqual({
        status: 'Accepted',
      });
      expect((await cpAgain.nextRemoteStop()).transactionId).toBe(remote16);
      expect(await csms.call('EV201', 'RequestStopTransaction', { transactionId: 'EV201-D' })).toEqual({
        status: 'Accepted',
      });
      await eventually(
        () =>
          csms.of('StopTransaction').some((p) => p.transactionId === csmsId && p.reason === 'Remote') &&
          transactionEvents201(csms, 'EV201').some((e) => e.key.startsWith('Ended EV201-D')),
        UPLINK_WAIT_MS,
        'both remote stops upstream',
      );
      // The other session on each station charges on.
      expect(csms.of('StopTransaction').filter((p) => p.transactionId === otherCsmsId)).toEqual([]);
      expect(transactionEvents201(csms, 'EV201').filter((e) => e.key.startsWith('Ended EV201-C'))).toEqual([]);
      expect(
        transactionEvents201(csms, 'EV201').find((e) => e.key.startsWith('Ended EV201-D'))!.params.transactionInfo,
      ).toMatchObject({ transactionId: 'EV201-D', stoppedReason: 'Remote' });
      // And the partner hears of both remote stops as of any other.
      // (A webhook delivered just before the kill may come again: at least once, as for any delivery.)
      const stops = (requests: typeof receiver.requests) =>
        new Set(
          requests
            .map((r) => r.json<{ eventType: string; payload: { stationId: string; meterStart: number } }>())
            .filter((e) => e.eventType === 'StopTransaction')
            .map((e) => `${e.payload.stationId} ${e.payload.meterStart}`),
        );
      await receiver.waitFor(
        (requests) => ['CP001 50', 'EV201 6'].every((stop) => stops(requests).has(stop)),
        UPLINK_WAIT_MS,
      );
      expect([...stops(receiver.requests)].sort()).toEqual(
        ['CP001 10', 'CP001 20', 'CP001 30', 'CP001 50', 'EV201 1', 'EV201 3', 'EV201 6'].sort(),
      );
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

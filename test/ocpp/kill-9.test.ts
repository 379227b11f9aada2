import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/index.js';
import { exitOf } from '../support/cli.js';
import { spawnDaemonForTest, stationForTest, stationV201ForTest, tempSiteForTest } from '../support/for-test.js';
import { PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';

describe('durability', () => {
  it(
    'kill -9 right after the acknowledgements: every acknowledged Start/StopTransaction has its event and delivery rows',
    async () => {
      const temp = tempSiteForTest({
        log: { level: 'info' },
        ...siteWith([{ id: 'partner', url: 'http://127.0.0.1:9/events' }]),
      });
      const { child, ready } = await spawnDaemonForTest(temp.configPath);
      const station = await stationForTest(ready.ocppUrl, 'CP001', undefined, { callTimeoutMs: 5000 });
      await station.boot();

      const ackedStarts: number[] = [];
      const ackedStops: number[] = [];
      const killed = exitOf(child);
      // Sessions keep coming; the daemon dies mid-stream, in the same tick as the 15th stop acknowledgement.
      const traffic = (async () => {
        for (let i = 0; i < 40; i += 1) {
          const transactionId = await station.startTransaction({
            connectorId: 1 + (i % 2),
            idTag: `TAG-${i}`,
            meterStart: i * 1000,
          });
          ackedStarts.push(transactionId);
          await station.stopTransaction({ transactionId, meterStop: i * 1000 + 500, reason: 'EVDisconnected' });
          ackedStops.push(transactionId);
          if (ackedStops.length === 15) child.kill('SIGKILL');
        }
      })().catch(() => undefined);
      await killed;
      await traffic;
      expect(ackedStops.length).toBeGreaterThanOrEqual(15);

      const db = openDatabase(temp.dataDir);
      try {
        const ids = (type: string) =>
          (
            db.prepare('SELECT payload FROM events WHERE event_type = ? ORDER BY seq').all(type) as Array<{
              payload: string;
            }>
          ).map((r) => (JSON.parse(r.payload) as { transactionId: number }).transactionId);
        expect(ids('StartTransaction')).toEqual(expect.arrayContaining(ackedStarts));
        expect(ids('StopTransaction')).toEqual(expect.arrayContaining(ackedStops));
        const undelivered = db
          .prepare(
            "SELECT COUNT(*) AS n FROM events e WHERE e.event_type IN ('StartTransaction', 'StopTransaction') AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = e.seq AND d.webhook_id = 'partner')",
          )
          .get() as { n: number };
        expect(undelivered.n).toBe(0);
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        db.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('durability of an OCPP 2.0.1 transaction', () => {
  it(
    'kill -9 mid-transaction: after the restart the Ended event closes the transaction its Started opened, by the station transaction id',
    async () => {
      const temp = tempSiteForTest({
        log: { level: 'info' },
        ...siteWith([], [{ id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] }]),
      });
      const first = await spawnDaemonForTest(temp.configPath);
      const before = await stationV201ForTest(first.ready.ocppUrl, 'EV201');
      await before.boot();
      const transactionId = before.newTransactionId();
      before.meterWh = 2000;
      await before.transactionEvent('Started', transactionId, {
        evseId: 1,
        idToken: 'TAG-K9',
        chargingState: 'Charging',
      });
      first.child.kill('SIGKILL');
      await exitOf(first.child);

      const after = await stationV201ForTest((await spawnDaemonForTest(temp.configPath)).ready.ocppUrl, 'EV201');
      await after.boot();
      after.meterWh = 9000;
      // The station's own counter goes on; only the transaction id ties the two connections together.
      await after.transactionEvent('Ended', transactionId, { evseId: 1, stoppedReason: 'EVDisconnected' });

      const db = openDatabase(temp.dataDir);
      try {
        const payloads = (type: string) =>
          (
            db.prepare('SELECT payload FROM events WHERE event_type = ? ORDER BY seq').all(type) as Array<{
              payload: string;
            }>
          ).map((r) => JSON.parse(r.payload) as Record<string, unknown>);
        const [started] = payloads('StartTransaction');
        expect(payloads('StartTransaction')).toHaveLength(1);
        expect(payloads('StopTransaction')).toEqual([
          expect.objectContaining({
            transactionId: started!.transactionId,
            meterStart: 2,
            meterStop: 9,
            reason: 'EVDisconnected',
            idTag: 'TAG-K9',
          }),
        ]);
      } finally {
        db.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

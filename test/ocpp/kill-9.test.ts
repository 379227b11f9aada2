import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/index.js';
import { spawnDaemon } from '../support/cli.js';
import { connectStation, type SimulatedStation } from '../support/station.js';
import { StationV201 } from '../support/station-v201.js';
import { tempSite, type TempSite } from '../support/temp-site.js';
import { PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';

describe('durability', () => {
  let temp: TempSite | undefined;
  let child: ChildProcess | undefined;
  let station: SimulatedStation | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await station?.close().catch(() => undefined);
    temp?.cleanup();
  });

  it(
    'kill -9 right after the acknowledgements: every acknowledged Start/StopTransaction has its event and delivery rows',
    async () => {
      temp = tempSite({ log: { level: 'info' }, ...siteWith([{ id: 'partner', url: 'http://127.0.0.1:9/events' }]) });
      const started = await spawnDaemon(temp.configPath);
      child = started.child;
      const ready = started.logs.map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg?: string; ocppPort?: number }) : {})).find((l) => l.msg === 'chargegate ready');
      station = await connectStation(`ws://127.0.0.1:${ready!.ocppPort}/ocpp`, 'CP001', undefined, { callTimeoutMs: 5000 });
      await station.boot();

      const ackedStarts: number[] = [];
      const ackedStops: number[] = [];
      const killed = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
      // Sessions keep coming; the daemon dies mid-stream, in the same tick as the 15th stop acknowledgement.
      const traffic = (async () => {
        for (let i = 0; i < 40; i += 1) {
          const transactionId = await station.startTransaction({ connectorId: 1 + (i % 2), idTag: `TAG-${i}`, meterStart: i * 1000 });
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
          (db.prepare('SELECT payload FROM events WHERE event_type = ? ORDER BY seq').all(type) as Array<{ payload: string }>).map(
            (r) => (JSON.parse(r.payload) as { transactionId: number }).transactionId,
          );
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
  let temp: TempSite | undefined;
  let child: ChildProcess | undefined;
  const stations: StationV201[] = [];
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(stations.splice(0).map((s) => s.close().catch(() => undefined)));
    temp?.cleanup();
  });

  const start = async (): Promise<string> => {
    const started = await spawnDaemon(temp!.configPath);
    child = started.child;
    const ready = started.logs.map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg?: string; ocppPort?: number }) : {})).find((l) => l.msg === 'chargegate ready');
    return `ws://127.0.0.1:${ready!.ocppPort}/ocpp`;
  };

  it(
    'kill -9 mid-transaction: after the restart the Ended event closes the transaction its Started opened, by the station transaction id',
    async () => {
      temp = tempSite({ log: { level: 'info' }, ...siteWith([], [{ id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] }]) });
      const before = await StationV201.connect(await start(), 'EV201');
      stations.push(before);
      await before.boot();
      const transactionId = before.newTransactionId();
      before.meterWh = 2000;
      await before.transactionEvent('Started', transactionId, { evseId: 1, idToken: 'TAG-K9', chargingState: 'Charging' });
      const killed = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
      child!.kill('SIGKILL');
      await killed;

      const after = await StationV201.connect(await start(), 'EV201');
      stations.push(after);
      await after.boot();
      after.meterWh = 9000;
      // The station's own counter goes on; only the transaction id ties the two connections together.
      await after.transactionEvent('Ended', transactionId, { evseId: 1, stoppedReason: 'EVDisconnected' });

      const db = openDatabase(temp.dataDir);
      try {
        const payloads = (type: string) =>
          (db.prepare('SELECT payload FROM events WHERE event_type = ? ORDER BY seq').all(type) as Array<{ payload: string }>).map(
            (r) => JSON.parse(r.payload) as Record<string, unknown>,
          );
        const [started] = payloads('StartTransaction');
        expect(payloads('StartTransaction')).toHaveLength(1);
        expect(payloads('StopTransaction')).toEqual([
          expect.objectContaining({ transactionId: started!.transactionId, meterStart: 2, meterStop: 9, reason: 'EVDisconnected', idTag: 'TAG-K9' }),
        ]);
      } finally {
        db.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

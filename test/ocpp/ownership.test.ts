import { describe, expect, it } from 'vitest';
import { putIdTag } from '../../src/authorization/index.js';
import { CP001, siteWith, daemonForTest, type TestDaemon } from '../support/daemon.js';

const CP002 = { id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] };

/** Contract section 7, "Ownership and bounds on the OCPP side": what one station may do to another's billing. */
describe('transactions belong to the station that started them', () => {
  async function twoStations(): Promise<TestDaemon> {
    const t = await daemonForTest(siteWith([], [CP001, CP002]));
    putIdTag(t.db, { idTag: 'TAG-1', status: 'Accepted', expiresAt: null, siteId: null });
    return t;
  }

  it("a StopTransaction naming another station's transaction is answered, changes nothing, emits nothing and is logged", async () => {
    const t = await twoStations();
    const owner = await t.connect('CP001');
    const intruder = await t.connect('CP002');
    await owner.boot();
    await intruder.boot();
    const tx = await owner.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 1_000 });

    expect(
      await intruder.stopTransaction({ transactionId: tx, meterStop: 9_999_000, reason: 'EmergencyStop' }),
    ).toEqual({});
    expect(await intruder.meterValues({ connectorId: 1, transactionId: tx, wh: 5 })).toEqual({});
    expect(t.db.prepare('SELECT stopped_at, meter_stop_wh FROM transactions WHERE id = ?').get(tx)).toEqual({
      stopped_at: null,
      meter_stop_wh: null,
    });
    expect(t.events('StopTransaction')).toEqual([]);
    expect(t.logged("StopTransaction for another station's transaction: answered, nothing changed")).toEqual([
      expect.objectContaining({ stationId: 'CP002', transactionId: tx, owner: 'CP001' }),
    ]);
    expect(t.logged("MeterValues for another station's transaction: ignored")).toHaveLength(1);

    // The owner still stops it, with its own meter reading.
    await owner.stopTransaction({ transactionId: tx, meterStop: 2_000 });
    expect(t.events('StopTransaction').map((e) => e.payload)).toEqual([
      expect.objectContaining({ stationId: 'CP001', transactionId: tx, meterStop: 2 }),
    ]);
  });

  it('a StartTransaction on a connector with an open transaction closes the old one first (reason Other, meterStop = new meterStart)', async () => {
    const t = await twoStations();
    const station = await t.connect('CP001');
    await station.boot();
    const zombie = await station.startTransaction({
      connectorId: 1,
      idTag: 'TAG-1',
      meterStart: 1_000,
      timestamp: new Date('2026-11-21T09:00:00.000Z'),
    });
    const next = await station.startTransaction({
      connectorId: 1,
      idTag: 'TAG-1',
      meterStart: 4_000,
      timestamp: new Date('2026-11-21T11:00:00.000Z'),
    });

    expect(next).not.toBe(zombie);
    expect(
      t.db.prepare('SELECT id, meter_stop_wh, stop_reason FROM transactions WHERE stopped_at IS NOT NULL').all(),
    ).toEqual([{ id: zombie, meter_stop_wh: 4_000, stop_reason: 'Other' }]);
    expect(t.events().map((e) => [e.eventType, e.payload.transactionId])).toEqual([
      ['StartTransaction', zombie],
      ['Authorize', undefined],
      ['StopTransaction', zombie],
      ['StartTransaction', next],
      ['Authorize', undefined],
    ]);
    expect(t.events('StopTransaction')[0]!.payload).toEqual({
      stationId: 'CP001',
      chargePointId: 'CP001-A',
      connectorId: 1,
      idTag: 'TAG-1',
      meterStart: 1,
      meterStop: 4,
      transactionId: zombie,
      reason: 'Other',
      // Closed when the station started the next one.
      startedAt: '2026-11-21T10:00:00.000+01:00',
      stoppedAt: '2026-11-21T12:00:00.000+01:00',
    });
  });

  it('a repeated StartTransaction gets the same transactionId, also after that transaction stopped, and emits nothing new', async () => {
    const t = await twoStations();
    const station = await t.connect('CP001');
    await station.boot();
    const timestamp = new Date('2026-11-24T12:10:34.000Z');
    const tx = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 1_000, timestamp });
    expect(await station.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 1_000, timestamp })).toBe(tx);
    await station.stopTransaction({ transactionId: tx, meterStop: 3_000 });
    const before = t.events().length;

    expect(await station.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 1_000, timestamp })).toBe(tx);
    expect(t.events()).toHaveLength(before);
    expect(t.db.prepare('SELECT COUNT(*) AS n FROM transactions').get()).toEqual({ n: 1 });
  });

  it('a connector of a configured station that is not in the config emits nothing and makes no charge point; a warning names the entry to add', async () => {
    const t = await twoStations();
    const station = await t.connect('CP001');
    await station.boot();
    expect(await station.statusNotification({ connectorId: 99, status: 'Available' })).toEqual({});
    const start = await station.startTransactionWithInfo({ connectorId: 99, idTag: 'TAG-1', meterStart: 1 });
    expect(start.idTagInfo.status).toBe('Invalid');

    expect(t.events()).toEqual([]);
    expect(t.db.prepare('SELECT COUNT(*) AS n FROM transactions').get()).toEqual({ n: 0 });
    const status = (await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/status.json`)).json()) as {
      chargePoints: Array<{ chargePointId: string }>;
    };
    expect(status.chargePoints.map((cp) => cp.chargePointId).sort()).toEqual(['CP001-A', 'CP002-A']);
    expect(t.db.prepare('SELECT COUNT(*) AS n FROM connectors').get()).toEqual({ n: 0 });
    const warnings = t.logged('connector not in the config: answered, no event');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({
      stationId: 'CP001',
      connectorId: 99,
      fix: 'add connector 99 to a chargePoints entry of station CP001 (site s1) in the config',
    });
  });
});

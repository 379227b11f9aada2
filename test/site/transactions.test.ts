import { describe, expect, it } from 'vitest';
import { siteFixture } from './site-fixture.js';

describe('transactions (site/transactions.ts)', () => {
  const t = siteFixture();

  it('a Modbus-style start (no authorization status) emits StartTransaction alone; an OCPP one adds the post-start Authorize', () => {
    const at = t.site.connectors.locate('CP001', 2);
    t.site.transactions.start({ at, idTag: 'MODBUS-1', meterStartWh: 500, startedAt: new Date(), source: 'modbus' });
    t.site.transactions.start({
      at: t.site.connectors.locate('CP001', 1),
      idTag: 'T',
      meterStartWh: 0,
      startedAt: new Date(),
      source: 'ocpp',
      authorizationStatus: 'Blocked',
    });
    expect(t.db.prepare('SELECT event_type FROM events ORDER BY seq').pluck().all()).toEqual([
      'StartTransaction',
      'StartTransaction',
      'Authorize',
    ]);
    expect(t.events('Authorize')).toEqual([
      { stationId: 'CP001', idTag: 'T', status: 'Blocked', chargePointId: 'CP001-A', connectorId: 1 },
    ]);
    expect(t.commits).toBe(2); // one notification per committed transaction, not per event
  });

  it('keeps one transaction begun without a driver per connector, until a start on that connector takes it up', () => {
    const { transactions } = t.site;
    const pluggedAt = new Date('2026-11-25T08:00:00.000Z');
    transactions.noteStartWithoutDriver('CP001', 'a', { connectorId: 1, startedAt: pluggedAt, meterStartWh: 100 });
    // A repeated Started event keeps the first.
    transactions.noteStartWithoutDriver('CP001', 'a', { connectorId: 1, startedAt: new Date(), meterStartWh: 999 });
    transactions.noteStartWithoutDriver('CP001', 'b', { connectorId: 2, startedAt: pluggedAt, meterStartWh: null });
    expect(transactions.beganWithoutDriver('CP001', 'a')).toEqual({
      connectorId: 1,
      startedAt: pluggedAt,
      meterStartWh: 100,
    });
    // A newer one on the same connector replaces it: the rows stay bounded by the connectors.
    transactions.noteStartWithoutDriver('CP001', 'c', { connectorId: 1, startedAt: new Date(), meterStartWh: 200 });
    expect(transactions.beganWithoutDriver('CP001', 'a')).toBeUndefined();
    transactions.start({
      at: t.site.connectors.locate('CP001', 2),
      idTag: 'T',
      meterStartWh: 0,
      startedAt: pluggedAt,
      source: 'ocpp',
      stationTransactionId: 'b',
    });
    expect(transactions.beganWithoutDriver('CP001', 'b')).toBeUndefined();
    transactions.forgetStartWithoutDriver('CP001', 'c');
    expect(t.db.prepare('SELECT COUNT(*) FROM transaction_starts_without_driver').pluck().get()).toBe(0);
  });

  it("stops a transaction once, by its own station; an unknown, stopped or another station's id changes nothing and emits nothing", () => {
    const tx = t.site.transactions.start({
      at: t.site.connectors.locate('CP001', 1),
      idTag: 'T',
      meterStartWh: 1000,
      startedAt: new Date('2026-07-21T09:00:00.000Z'),
      source: 'ocpp',
    });
    expect(
      t.site.transactions.stop({
        stationId: 'CP002',
        transactionId: tx.id,
        meterStopWh: 7000,
        stoppedAt: new Date(),
        reason: 'Remote',
      }),
    ).toBeUndefined();
    const stoppedAt = new Date('2026-07-21T10:30:00.000Z');
    expect(
      t.site.transactions.stop({
        stationId: 'CP001',
        transactionId: tx.id,
        meterStopWh: 4000,
        stoppedAt,
        reason: 'Local',
      }),
    ).toMatchObject({
      meterStopWh: 4000,
      stopReason: 'Local',
    });
    expect(
      t.site.transactions.stop({
        stationId: 'CP001',
        transactionId: tx.id,
        meterStopWh: 9000,
        stoppedAt: new Date(),
        reason: 'Remote',
      }),
    ).toBeUndefined();
    expect(
      t.site.transactions.stop({ stationId: 'CP001', transactionId: 12345, meterStopWh: 1, stoppedAt: new Date() }),
    ).toBeUndefined();
    // Times in the site's zone (Europe/Brussels, summer time); the event happened when the station stopped.
    expect(t.events('StopTransaction')).toEqual([
      {
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 1,
        idTag: 'T',
        meterStart: 1,
        meterStop: 4,
        transactionId: tx.id,
        startedAt: '2026-07-21T11:00:00.000+02:00',
        stoppedAt: '2026-07-21T12:30:00.000+02:00',
      },
    ]);
    expect(t.db.prepare("SELECT occurred_at FROM events WHERE event_type = 'StopTransaction'").pluck().get()).toBe(
      stoppedAt.toISOString(),
    );
  });

  it('a start on a connector with an open transaction closes that one first (reason Other, meterStop = the new meterStart); a repeated start is found again', () => {
    const at = t.site.connectors.locate('CP001', 1);
    const startedAt = new Date('2026-11-21T10:00:00.000Z');
    const first = t.site.transactions.start({ at, idTag: 'T1', meterStartWh: 1000, startedAt, source: 'ocpp' });
    const second = t.site.transactions.start({
      at,
      idTag: 'T2',
      meterStartWh: 3000,
      startedAt: new Date('2026-11-21T11:00:00.000Z'),
      source: 'ocpp',
    });
    expect(t.site.transactions.byId(first.id)).toMatchObject({
      stoppedAt: '2026-11-21T11:00:00.000Z',
      meterStopWh: 3000,
      stopReason: 'Other',
    });
    expect(t.site.transactions.open().map((x) => x.id)).toEqual([second.id]);
    expect(t.site.transactions.openOn('CP001', 1)?.id).toBe(second.id);
    expect(t.site.transactions.answeredStart('CP001', 1, 'T1', 1000, startedAt)?.id).toBe(first.id);
    expect(t.site.transactions.openOfTag('T2')).toEqual([
      expect.objectContaining({
        id: second.id,
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 1,
        source: 'ocpp',
      }),
    ]);
    expect(t.events('StopTransaction')).toEqual([
      expect.objectContaining({ transactionId: first.id, reason: 'Other', meterStop: 3 }),
    ]);
  });
});

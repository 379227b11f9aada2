import { describe, expect, it } from 'vitest';
import { putIdTag } from '../../src/authorization/index.js';
import { siteWith, daemonForTest } from '../support/daemon.js';

/** Two webhooks on the site: one for everything, one only for StopTransaction; a disabled one gets no rows. */
const WEBHOOKS = [
  { id: 'all', url: 'http://127.0.0.1:9/all' },
  { id: 'stops', url: 'http://127.0.0.1:9/stops', events: ['StopTransaction'] },
  { id: 'off', url: 'http://127.0.0.1:9/off', enabled: false },
];

describe('OCPP transactions into the outbox (interface 2.3-2.6)', () => {
  it('Authorize, status, start and stop become events with the exact payloads and one delivery row per subscribed webhook', async () => {
    const t = await daemonForTest(siteWith(WEBHOOKS));
    putIdTag(t.db, { idTag: 'TAG-OK', status: 'Accepted', expiresAt: null, siteId: null });
    const station = await t.connect();
    expect(await station.boot()).toMatchObject({ status: 'Accepted', interval: 300 });

    expect(await station.authorize('TAG-OK')).toEqual({ status: 'Accepted' });
    await station.statusNotification({ connectorId: 1, status: 'Preparing' });
    await station.statusNotification({ connectorId: 1, status: 'Preparing' }); // unchanged: no second event
    // The station's own times travel as startedAt/stoppedAt in the configured zone (Europe/Brussels) and as occurredAt.
    const startedAt = new Date('2026-11-21T09:15:30.123Z');
    const stoppedAt = new Date('2026-11-21T10:45:00.000Z');
    const started = await station.startTransactionWithInfo({
      connectorId: 1,
      idTag: 'TAG-OK',
      meterStart: 12_345,
      reservationId: 42,
      timestamp: startedAt,
    });
    expect(started.idTagInfo).toEqual({ status: 'Accepted' });
    await station.statusNotification({ connectorId: 1, status: 'Charging' });
    await station.meterValues({ connectorId: 1, transactionId: started.transactionId, wh: 15_000 });
    expect(
      await station.stopTransaction({
        transactionId: started.transactionId,
        meterStop: 19_500,
        reason: 'EVDisconnected',
        timestamp: stoppedAt,
      }),
    ).toEqual({});

    const tx = started.transactionId;
    expect(Number.isInteger(tx) && tx > 0).toBe(true);
    expect(t.events().map((e) => [e.eventType, e.payload])).toEqual([
      ['Authorize', { stationId: 'CP001', idTag: 'TAG-OK', status: 'Accepted', chargePointId: 'CP001-A' }],
      [
        'ChargePointStatus',
        { stationId: 'CP001', chargePointId: 'CP001-A', connectorId: 1, status: 'Preparing', errorCode: 'NoError' },
      ],
      [
        'StartTransaction',
        {
          stationId: 'CP001',
          chargePointId: 'CP001-A',
          connectorId: 1,
          idTag: 'TAG-OK',
          meterStart: 12.345,
          transactionId: tx,
          reservationId: '42',
          startedAt: '2026-11-21T10:15:30.123+01:00',
        },
      ],
      [
        'Authorize',
        { stationId: 'CP001', idTag: 'TAG-OK', status: 'Accepted', chargePointId: 'CP001-A', connectorId: 1 },
      ],
      [
        'ChargePointStatus',
        { stationId: 'CP001', chargePointId: 'CP001-A', connectorId: 1, status: 'Charging', errorCode: 'NoError' },
      ],
      [
        'StopTransaction',
        {
          stationId: 'CP001',
          chargePointId: 'CP001-A',
          connectorId: 1,
          idTag: 'TAG-OK',
          meterStart: 12.345,
          meterStop: 19.5,
          transactionId: tx,
          reason: 'EVDisconnected',
          startedAt: '2026-11-21T10:15:30.123+01:00',
          stoppedAt: '2026-11-21T11:45:00.000+01:00',
        },
      ],
    ]);
    const occurred = t.db
      .prepare(
        "SELECT event_type, occurred_at FROM events WHERE event_type IN ('StartTransaction', 'StopTransaction') ORDER BY seq",
      )
      .all();
    expect(occurred).toEqual([
      { event_type: 'StartTransaction', occurred_at: startedAt.toISOString() },
      { event_type: 'StopTransaction', occurred_at: stoppedAt.toISOString() },
    ]);
    // The others happened when they were committed: that time is not stored twice.
    expect(
      t.db
        .prepare(
          "SELECT COUNT(*) FROM events WHERE occurred_at IS NOT NULL AND event_type NOT IN ('StartTransaction', 'StopTransaction')",
        )
        .pluck()
        .get(),
    ).toBe(0);
    expect(t.events().every((e) => e.siteId === 's1')).toBe(true);

    const deliveries = t.db
      .prepare(
        'SELECT e.event_type AS type, d.webhook_id AS webhook, d.state FROM deliveries d JOIN events e ON e.seq = d.event_seq ORDER BY d.id',
      )
      .all();
    expect(deliveries).toEqual([
      { type: 'Authorize', webhook: 'all', state: 'pending' },
      { type: 'ChargePointStatus', webhook: 'all', state: 'pending' },
      { type: 'StartTransaction', webhook: 'all', state: 'pending' },
      { type: 'Authorize', webhook: 'all', state: 'pending' },
      { type: 'ChargePointStatus', webhook: 'all', state: 'pending' },
      { type: 'StopTransaction', webhook: 'all', state: 'pending' },
      { type: 'StopTransaction', webhook: 'stops', state: 'pending' },
    ]);

    const stored = t.db
      .prepare('SELECT status, error_code FROM connectors WHERE station_id = ? AND connector_id = 1')
      .get('CP001');
    expect(stored).toEqual({ status: 'Charging', error_code: 'NoError' });
  });

  it('applies the StopTransaction rules: reason omitted for Local or none, idTag falls back to the starting tag, unknown ids answered without an event', async () => {
    const t = await daemonForTest(siteWith());
    putIdTag(t.db, { idTag: 'TAG-A', status: 'Accepted', expiresAt: null, siteId: null });
    putIdTag(t.db, { idTag: 'TAG-B', status: 'Accepted', expiresAt: null, siteId: null });
    const station = await t.connect();
    await station.boot();

    const [t0, t1] = [new Date('2026-11-21T09:00:00.000Z'), new Date('2026-11-21T09:30:00.000Z')];
    const times = { startedAt: '2026-11-21T10:00:00.000+01:00', stoppedAt: '2026-11-21T10:30:00.000+01:00' };
    const a = await station.startTransaction({ connectorId: 1, idTag: 'TAG-A', meterStart: 0, timestamp: t0 });
    const b = await station.startTransaction({ connectorId: 2, idTag: 'TAG-B', meterStart: 1000, timestamp: t0 });
    expect(b).toBeGreaterThan(a);
    await station.stopTransaction({ transactionId: a, meterStop: 2500, reason: 'Local', timestamp: t1 });
    // A different tag stopped it: that tag is the payload's idTag, and the answer carries its idTagInfo.
    expect(await station.stopTransaction({ transactionId: b, meterStop: 1000, idTag: 'TAG-A', timestamp: t1 })).toEqual(
      { idTagInfo: { status: 'Accepted' } },
    );
    expect(await station.stopTransaction({ transactionId: 99_999, meterStop: 1 })).toEqual({});
    expect(await station.stopTransaction({ transactionId: a, meterStop: 2500, reason: 'Local' })).toEqual({}); // repeated: no second event

    const stops = t.events('StopTransaction').map((e) => e.payload);
    expect(stops).toEqual([
      {
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 1,
        idTag: 'TAG-A',
        meterStart: 0,
        meterStop: 2.5,
        transactionId: a,
        ...times,
      },
      {
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 2,
        idTag: 'TAG-A',
        meterStart: 1,
        meterStop: 1,
        transactionId: b,
        ...times,
      },
    ]);
    expect(t.logged('StopTransaction for an unknown or already stopped transaction: answered, no event')).toHaveLength(
      2,
    );
  });

  it('never reuses a transactionId, even after rows are deleted, and answers a repeated StartTransaction with the same id', async () => {
    const t = await daemonForTest(siteWith());
    const station = await t.connect();
    await station.boot();
    const at = new Date('2026-03-01T10:00:00.000Z');
    const first = await station.startTransaction({ connectorId: 1, idTag: 'T1', meterStart: 10, timestamp: at });
    const again = await station.startTransactionWithInfo({
      connectorId: 1,
      idTag: 'T1',
      meterStart: 10,
      timestamp: at,
    });
    expect(again.transactionId).toBe(first);
    expect(t.events('StartTransaction')).toHaveLength(1);

    t.db.prepare('DELETE FROM transactions WHERE id = ?').run(first);
    const next = await station.startTransaction({ connectorId: 2, idTag: 'T2', meterStart: 0 });
    expect(next).toBeGreaterThan(first);
  });

  it('reports a connector-0 status once per charge point of the station and refuses StartTransaction on connector 0', async () => {
    const t = await daemonForTest(
      siteWith(
        [],
        [
          {
            id: 'CP001',
            chargePoints: [
              { id: 'CP001-A', connectors: [1] },
              { id: 'CP001-B', connectors: [2] },
            ],
          },
        ],
      ),
    );
    const station = await t.connect();
    await station.boot();
    await station.statusNotification({
      connectorId: 0,
      status: 'Unavailable',
      errorCode: 'PowerMeterFailure',
      info: 'meter bus down',
    });
    expect(t.events('ChargePointStatus').map((e) => e.payload)).toEqual([
      {
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 0,
        status: 'Unavailable',
        errorCode: 'PowerMeterFailure',
      },
      {
        stationId: 'CP001',
        chargePointId: 'CP001-B',
        connectorId: 0,
        status: 'Unavailable',
        errorCode: 'PowerMeterFailure',
      },
    ]);
    await expect(station.startTransaction({ connectorId: 0, idTag: 'T1', meterStart: 0 })).rejects.toMatchObject({
      rpcErrorCode: 'PropertyConstraintViolation',
    });
    expect(t.events('StartTransaction')).toHaveLength(0);
  });

  it('answers DataTransfer UnknownVendorId and Heartbeat with the time, keeps last-seen, and reports on /metrics and /health', async () => {
    const t = await daemonForTest(siteWith());
    const station = await t.connect();
    await station.boot();
    expect(await station.call('DataTransfer', { vendorId: 'com.example', messageId: 'x', data: 'y' })).toEqual({
      status: 'UnknownVendorId',
    });
    const { currentTime } = await station.heartbeat();
    expect(Math.abs(Date.parse(currentTime) - Date.now())).toBeLessThan(60_000);
    const row = t.db.prepare('SELECT online, last_seen, boot_info FROM stations WHERE id = ?').get('CP001') as {
      online: number;
      last_seen: string;
      boot_info: string;
    };
    expect(row.online).toBe(1);
    expect(JSON.parse(row.boot_info)).toMatchObject({
      chargePointVendor: 'chargegate-sim',
      chargePointModel: 'SimStation',
    });

    const base = `http://127.0.0.1:${t.daemon.httpPort}`;
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('chargegate_ocpp_connected_stations 1');
    expect(metrics).toContain('chargegate_ocpp_calls_total{action="DataTransfer",outcome="ok"} 1');
    const health = (await (await fetch(`${base}/health`)).json()) as { ocpp: unknown };
    expect(health.ocpp).toEqual({ status: 'ok', port: t.daemon.ocppPort, connectedStations: 1 });
  });
});

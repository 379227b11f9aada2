import { describe, expect, it } from 'vitest';
import { MAX_PERIODIC_READINGS_PER_TRANSACTION, PERIODIC_READING_SPACING_MS } from '../../src/site/index.js';
import { apiDaemonForTest } from '../http/api-harness.js';
import { receiverForTest, stationV201ForTest } from '../support/for-test.js';
import { meterKey, ocmfRecord } from '../support/ocmf.js';

const CP001 = { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1, 2] }] };
const EV201 = { id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] };
const GROUPS = [{ id: 'ops', scope: 'company:acme', permissions: ['charge-points:read'] }];
const MINUTE = 60_000;

interface Reading {
  context: string;
  timestamp: string;
  energy: number;
}

async function site(webhookDelivery: Record<string, unknown> = {}) {
  const partner = await receiverForTest();
  const api = await apiDaemonForTest({
    sites: [
      {
        id: 's1',
        stations: [CP001, EV201],
        meters: [],
        webhooks: [{ id: 'partner', url: partner.url(), events: ['StopTransaction'] }],
      },
    ],
    groups: GROUPS,
    webhookDelivery: { retryIntervalS: 0.2, ...webhookDelivery },
  });
  const token = await api.token(api.createApp('ops'));
  const readings = async (transactionId: number) => {
    const detail = await api.call('GET', `/transactions/${transactionId}`, { token });
    expect(detail.status).toBe(200);
    return (detail.body.readings as Reading[]).map((r) => ({ ...r, at: new Date(r.timestamp).getTime() }));
  };
  return { partner, api, readings };
}

describe('unsigned register readings of a transaction (docs/partners/signed-meter-values.md#signed-meter-values, "What the daemon writes")', () => {
  it('1.6: Begin, End and periodic samples thinned to one per spacing are kept and shown; signedMeterValues all leaves them out', async () => {
    const { partner, api, readings } = await site({ signedMeterValues: 'all' });
    const station = await api.connect('CP001');
    await station.boot();
    const t0 = Date.now() - 3 * 3_600_000;
    const at = (minutes: number) => new Date(t0 + minutes * MINUTE);
    const tx = await station.startTransaction({ connectorId: 1, idTag: 'TAG', meterStart: 1000, timestamp: at(0) });
    // The Begin reading right after StartTransaction, naming no transaction.
    await station.meterValues({ connectorId: 1, wh: 1000, context: 'Transaction.Begin', timestamp: at(0) });
    const spacingMin = PERIODIC_READING_SPACING_MS / MINUTE;
    for (let minute = 1; minute <= 2 * spacingMin + 5; minute += 1)
      await station.meterValues({ connectorId: 1, transactionId: tx, wh: 1000 + minute * 100, timestamp: at(minute) });
    const meter = meterKey();
    await station.stopTransaction({
      transactionId: tx,
      meterStop: 9000,
      timestamp: at(2 * spacingMin + 6),
      energyValues: [{ wh: 9000 }],
      signedValues: [{ value: ocmfRecord(meter, { tx: 'E', kWh: 9 }) }],
    });

    const kept = await readings(tx);
    expect(kept.map((r) => [r.context, r.energy, r.at])).toEqual([
      ['Transaction.Begin', 1, at(0).getTime()],
      ['Sample.Periodic', 1.1, at(1).getTime()],
      ['Sample.Periodic', 1 + (1 + spacingMin) / 10, at(1 + spacingMin).getTime()],
      ['Sample.Periodic', 1 + (1 + 2 * spacingMin) / 10, at(1 + 2 * spacingMin).getTime()],
      ['Transaction.End', 9, at(2 * spacingMin + 6).getTime()],
    ]);

    // The webhook carries the signed readings only, whatever signedMeterValues says.
    await partner.waitForCount(1, 20_000);
    const stop = partner.requests[0]!.json<{ payload: Record<string, unknown> }>().payload;
    expect(stop).not.toHaveProperty('readings');
    expect((stop.signedMeterValues as Array<{ context: string }>).map((r) => r.context)).toEqual(['Transaction.End']);
  });

  it(`1.6: at most ${MAX_PERIODIC_READINGS_PER_TRANSACTION} periodic samples a transaction, the oldest dropped; Begin stays`, async () => {
    const { api, readings } = await site();
    const station = await api.connect('CP001');
    await station.boot();
    const samples = MAX_PERIODIC_READINGS_PER_TRANSACTION + 3;
    const t0 = Date.now() - (samples + 1) * PERIODIC_READING_SPACING_MS;
    const tx = await station.startTransaction({ connectorId: 2, idTag: 'TAG', meterStart: 0, timestamp: new Date(t0) });
    await station.meterValues({
      connectorId: 2,
      transactionId: tx,
      wh: 0,
      context: 'Transaction.Begin',
      timestamp: new Date(t0),
    });
    for (let i = 1; i <= samples; i += 1)
      await station.meterValues({
        connectorId: 2,
        transactionId: tx,
        wh: i * 1000,
        timestamp: new Date(t0 + i * PERIODIC_READING_SPACING_MS),
      });
    const kept = await readings(tx);
    expect(kept[0]).toMatchObject({ context: 'Transaction.Begin', energy: 0 });
    const periodic = kept.filter((r) => r.context === 'Sample.Periodic').map((r) => r.energy);
    expect(periodic).toHaveLength(MAX_PERIODIC_READINGS_PER_TRANSACTION);
    expect(periodic[0]).toBe(4);
    expect(periodic.at(-1)).toBe(samples);
  });

  it('2.0.1: the Begin reading of a transaction begun before its driver was known, periodic samples and the End reading', async () => {
    const { api, readings } = await site();
    const station = await stationV201ForTest(api.url, 'EV201');
    await station.boot();
    const t0 = Date.now() - 3_600_000;
    const stationTx = station.newTransactionId();
    station.meterWh = 1000;
    await station.transactionEvent('Started', stationTx, { evseId: 1, timestamp: new Date(t0) });
    station.meterWh = 1200;
    await station.transactionEvent('Updated', stationTx, { idToken: 'TAG', timestamp: new Date(t0 + MINUTE) });
    station.meterWh = 1300;
    // Within the spacing of the one before: thinned away.
    await station.transactionEvent('Updated', stationTx, {
      triggerReason: 'MeterValuePeriodic',
      timestamp: new Date(t0 + 2 * MINUTE),
    });
    station.meterWh = 2000;
    await station.transactionEvent('Updated', stationTx, {
      triggerReason: 'MeterValuePeriodic',
      timestamp: new Date(t0 + MINUTE + PERIODIC_READING_SPACING_MS),
    });
    station.meterWh = 3000;
    await station.transactionEvent('Ended', stationTx, { timestamp: new Date(t0 + 40 * MINUTE) });

    const [transaction] = api.db
      .prepare('SELECT id FROM transactions WHERE station_transaction_id = ?')
      .all(stationTx) as Array<{ id: number }>;
    expect((await readings(transaction!.id)).map((r) => [r.context, r.energy, r.at])).toEqual([
      ['Transaction.Begin', 1, t0],
      ['Sample.Periodic', 1.2, t0 + MINUTE],
      ['Sample.Periodic', 2, t0 + MINUTE + PERIODIC_READING_SPACING_MS],
      ['Transaction.End', 3, t0 + 40 * MINUTE],
    ]);
  });
});

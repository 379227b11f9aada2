import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { putIdTag } from '../../src/authorization/index.js';
import type { Ocpp201Actions } from '../../src/ocpp/index.js';
import { MAX_ENERGY_WH } from '../../src/site/index.js';
import { daemonForTest, siteWith } from '../support/daemon.js';
import { stationV201ForTest } from '../support/for-test.js';

type Request<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][0];

/** EVSEs 1 and 2 are configured; 0 is the whole station and 3 is not in the config. */
const EV201 = {
  id: 'EV201',
  chargePoints: [
    { id: 'EV201-A', connectors: [1] },
    { id: 'EV201-B', connectors: [2] },
  ],
};
const CALLS = 1_500;

/** Valid RFC 3339 all; some name no instant a Date holds, year 10000 in UTC, or come before the others. */
const timestamp = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .date({ noInvalidDate: true, min: new Date('2026-01-01T00:00:00Z'), max: new Date('2026-12-31T00:00:00Z') })
      .map((d) => d.toISOString()),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '9999-12-31T23:59:59-14:00',
      '2016-12-31T23:59:60Z',
      '1000-01-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
    ),
  },
);
const evseId = fc.integer({ min: 0, max: 3 });
const energySample = fc.record(
  {
    value: fc.oneof(
      fc.integer({ min: 0, max: 100_000 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(1e308, -1, 2e12, -0),
    ),
    measurand: fc.constantFrom('Energy.Active.Import.Register' as const, 'Power.Active.Import' as const),
    phase: fc.constantFrom('L1' as const),
    unitOfMeasure: fc.record(
      { unit: fc.constantFrom('Wh', 'kWh'), multiplier: fc.integer({ min: -3, max: 3 }) },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['value'] },
);
const meterValue = fc
  .array(fc.record({ timestamp, sampledValue: fc.array(energySample, { minLength: 1, maxLength: 2 }) }), {
    minLength: 1,
    maxLength: 2,
  })
  .map(
    // minLength 1: the schema's non-empty list.
    (values) => values as Request<'MeterValues'>['meterValue'],
  );
// A few transaction ids that come back (lying sequences) and many that never end (state that must stay bounded).
const transactionId = fc.oneof(fc.constantFrom('t0', 't1', 't2', 't3'), fc.uuid());

const transactionEvent = fc
  .record(
    {
      eventType: fc.constantFrom('Started' as const, 'Updated' as const, 'Ended' as const),
      timestamp,
      transactionId,
      evse: evseId,
      idToken: fc.constantFrom('TAG-1', 'TAG-2'),
      chargingState: fc.constantFrom('Charging' as const, 'EVConnected' as const, 'SuspendedEV' as const),
      stoppedReason: fc.constantFrom('EVDisconnected' as const, 'Local' as const, 'Other' as const),
      meterValue,
    },
    { requiredKeys: ['eventType', 'timestamp', 'transactionId'] },
  )
  .map((e): Request<'TransactionEvent'> => ({
    eventType: e.eventType,
    timestamp: e.timestamp,
    triggerReason: 'Authorized',
    seqNo: 0,
    transactionInfo: {
      transactionId: e.transactionId,
      ...(e.chargingState !== undefined && { chargingState: e.chargingState }),
      ...(e.stoppedReason !== undefined && { stoppedReason: e.stoppedReason }),
    },
    ...(e.evse !== undefined && { evse: { id: e.evse } }),
    ...(e.idToken !== undefined && { idToken: { idToken: e.idToken, type: 'ISO14443' } }),
    ...(e.meterValue !== undefined && { meterValue: e.meterValue }),
  }));

const call = fc.oneof(
  { weight: 6, arbitrary: transactionEvent.map((params) => ['TransactionEvent', params] as const) },
  { weight: 2, arbitrary: fc.record({ evseId, meterValue }).map((params) => ['MeterValues', params] as const) },
  {
    weight: 1,
    arbitrary: fc
      .record({
        timestamp,
        evseId,
        connectorStatus: fc.constantFrom('Available' as const, 'Occupied' as const, 'Faulted' as const),
      })
      .map((p) => ['StatusNotification', { ...p, connectorId: 1 }] as const),
  },
);

/** Issue 35: schema-valid but hostile 2.0.1 sequences against the handlers of a real daemon. */
describe('fuzzing the OCPP 2.0.1 handlers', () => {
  it('no transaction on EVSE 0, no energy or time partners cannot read back, every call answered without an internal error', async () => {
    const t = await daemonForTest(siteWith([], [EV201]));
    for (const idTag of ['TAG-1', 'TAG-2'])
      putIdTag(t.db, { idTag, status: 'Accepted', expiresAt: null, siteId: null });
    const station = await stationV201ForTest(t.url, 'EV201');
    await station.boot();

    const refusals = new Set<string>();
    for (const [action, params] of fc.sample(call, { numRuns: CALLS, seed: 20261126 })) {
      try {
        await station.call(action, params);
      } catch (err) {
        refusals.add((err as { rpcErrorCode?: string }).rpcErrorCode ?? `not a CALLERROR: ${String(err)}`);
      }
    }

    // Refused only as out of bounds: never an internal error, never a call left unanswered.
    expect([...refusals]).toEqual(['PropertyConstraintViolation']);
    expect(t.logged('station call failed')).toEqual([]);
    const onStation = t.db.prepare('SELECT count(*) AS n FROM transactions WHERE connector_id < 1').get() as {
      n: number;
    };
    expect(onStation.n).toBe(0);
    const transactions = t.db
      .prepare(
        'SELECT meter_start_wh AS meterStartWh, meter_stop_wh AS meterStopWh, started_at AS startedAt, stopped_at AS stoppedAt FROM transactions',
      )
      .all() as Array<{
      meterStartWh: number;
      meterStopWh: number | null;
      startedAt: string;
      stoppedAt: string | null;
    }>;
    expect(transactions.length).toBeGreaterThan(10);
    for (const row of transactions) {
      for (const wh of [row.meterStartWh, row.meterStopWh ?? 0]) expect(wh >= 0 && wh <= MAX_ENERGY_WH).toBe(true);
      if (row.stoppedAt !== null) expect(row.stoppedAt >= row.startedAt).toBe(true);
    }
    const billed = [...t.events('StartTransaction'), ...t.events('StopTransaction')];
    expect(billed.length).toBeGreaterThan(10);
    for (const { payload } of billed) {
      for (const kWh of [payload.meterStart, payload.meterStop ?? 0]) expect(Number.isFinite(kWh)).toBe(true);
      for (const at of [payload.startedAt, payload.stoppedAt ?? payload.startedAt])
        expect(at).toMatch(/^(19[7-9]\d|[2-9]\d{3})-\d\d-\d\dT/);
    }

    // The daemon still serves: the same station, and /health.
    expect(await station.call('Heartbeat', {})).toEqual({ currentTime: expect.any(String) });
    expect((await fetch(`http://127.0.0.1:${t.daemon.httpPort}/health`)).status).toBe(200);
  }, 240_000);
});

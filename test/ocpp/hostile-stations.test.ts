import { describe, expect, it } from 'vitest';
import { putIdTag } from '../../src/authorization/index.js';
import type { Ocpp201Actions } from '../../src/ocpp/index.js';
import { CP001, daemonForTest, siteWith } from '../support/daemon.js';
import { stationV201ForTest } from '../support/for-test.js';

type TransactionEventRequest = Ocpp201Actions['TransactionEvent'][0];

const EV201 = {
  id: 'EV201',
  chargePoints: [
    { id: 'EV201-A', connectors: [1] },
    { id: 'EV201-B', connectors: [2] },
  ],
};

/**
 * A TransactionEvent as a hostile station may send it: valid against the 2.0.1 schema, its values chosen by the test.
 */
function transactionEvent(
  eventType: TransactionEventRequest['eventType'],
  transactionId: string,
  options: {
    evseId?: number;
    idToken?: string;
    timestamp?: string;
    energy?: { value: number; multiplier?: number; unit?: string };
  } = {},
): TransactionEventRequest {
  const timestamp = options.timestamp ?? new Date().toISOString();
  return {
    eventType,
    timestamp,
    triggerReason: 'Authorized',
    seqNo: 0,
    transactionInfo: { transactionId },
    ...(options.evseId !== undefined && { evse: { id: options.evseId } }),
    ...(options.idToken !== undefined && { idToken: { idToken: options.idToken, type: 'ISO14443' } }),
    ...(options.energy && {
      meterValue: [
        {
          timestamp,
          sampledValue: [
            {
              value: options.energy.value,
              measurand: 'Energy.Active.Import.Register',
              unitOfMeasure: {
                unit: options.energy.unit ?? 'Wh',
                ...(options.energy.multiplier !== undefined && { multiplier: options.energy.multiplier }),
              },
            },
          ],
        },
      ],
    }),
  };
}

const refused = { rpcErrorCode: 'PropertyConstraintViolation' };

describe('hostile input from stations (issue 35)', () => {
  it('2.0.1: a transaction on EVSE 0 is refused as connector 0 is in 1.6, and the tag stays free', async () => {
    const t = await daemonForTest(siteWith([], [EV201]));
    putIdTag(t.db, { idTag: 'TAG-0', status: 'Accepted', expiresAt: null, siteId: null });
    const station = await stationV201ForTest(t.url, 'EV201');
    await station.boot();

    await expect(
      station.call(
        'TransactionEvent',
        transactionEvent('Started', 'tx-evse0', { evseId: 0, idToken: 'TAG-0', energy: { value: 100 } }),
      ),
    ).rejects.toMatchObject(refused);
    expect(t.events('StartTransaction')).toEqual([]);
    expect(t.db.prepare('SELECT count(*) AS n FROM transactions').get()).toEqual({ n: 0 });

    // The tag was never taken: a start on a real EVSE is accepted, not ConcurrentTx.
    expect(
      await station.call(
        'TransactionEvent',
        transactionEvent('Started', 'tx-evse1', { evseId: 1, idToken: 'TAG-0', energy: { value: 100 } }),
      ),
    ).toEqual({
      idTokenInfo: { status: 'Accepted' },
    });
    expect(t.events('StartTransaction').map((e) => e.payload.connectorId)).toEqual([1]);
  });

  it('2.0.1: an energy reading that is not finite, negative or beyond any register is refused, and nothing reaches partners', async () => {
    const t = await daemonForTest(siteWith([], [EV201]));
    const station = await stationV201ForTest(t.url, 'EV201');
    await station.boot();

    for (const energy of [{ value: 1e308, multiplier: 3 }, { value: -5 }, { value: 2e12, unit: 'kWh' }]) {
      await expect(
        station.call(
          'TransactionEvent',
          transactionEvent('Started', `tx-${energy.value}`, { evseId: 1, idToken: 'TAG-1', energy }),
        ),
      ).rejects.toMatchObject(refused);
      await expect(
        station.call('MeterValues', {
          evseId: 1,
          meterValue: [
            {
              timestamp: new Date().toISOString(),
              sampledValue: [
                {
                  value: energy.value,
                  unitOfMeasure: { unit: energy.unit ?? 'Wh', multiplier: energy.multiplier ?? 0 },
                },
              ],
            },
          ],
        }),
      ).rejects.toMatchObject(refused);
    }
    expect(t.events('StartTransaction')).toEqual([]);
    expect(t.logged('station call refused: a value out of bounds').map((l) => l.action)).toContain('TransactionEvent');

    // A sane session afterwards bills from its own readings, not from anything refused before.
    await station.call('TransactionEvent', transactionEvent('Started', 'tx-good', { evseId: 1, idToken: 'TAG-1' }));
    await station.call(
      'TransactionEvent',
      transactionEvent('Ended', 'tx-good', { energy: { value: 2.5, unit: 'kWh' } }),
    );
    expect(t.events('StartTransaction').map((e) => e.payload.meterStart)).toEqual([0]);
    expect(t.events('StopTransaction').map((e) => e.payload.meterStop)).toEqual([2.5]);
  });

  it('1.6: a meterStart beyond any register, or negative, is refused (the schema lets any integer through); a meterStop closes with the start reading', async () => {
    const t = await daemonForTest(siteWith([], [CP001]));
    const station = await t.connect('CP001');
    await station.boot();
    await expect(station.startTransaction({ connectorId: 1, idTag: 'T1', meterStart: 1e300 })).rejects.toMatchObject(
      refused,
    );
    await expect(station.startTransaction({ connectorId: 1, idTag: 'T1', meterStart: -1 })).rejects.toMatchObject(
      refused,
    );
    expect(t.events('StartTransaction')).toEqual([]);
    // A stop is not refused (the session would stay open): the bad reading falls back to the start's, with a warning.
    const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'T1', meterStart: 1000 });
    expect(await station.stopTransaction({ transactionId, meterStop: 1e300 })).toEqual({});
    expect(t.events('StopTransaction').map((e) => e.payload.meterStop)).toEqual([1]);
    expect(t.logged('stop with a value out of bounds: closed with a fallback value')).toEqual([
      expect.objectContaining({ field: 'meterStop' }),
    ]);
  });

  it('2.0.1: an Ended event with a reading or time out of bounds still ends its transaction, from the last reading known', async () => {
    const t = await daemonForTest(siteWith([], [EV201]));
    const station = await stationV201ForTest(t.url, 'EV201');
    await station.boot();
    await station.call(
      'TransactionEvent',
      transactionEvent('Started', 'tx-e', { evseId: 1, idToken: 'TAG-1', energy: { value: 500 } }),
    );
    await station.call('MeterValues', {
      evseId: 1,
      meterValue: [
        { timestamp: new Date().toISOString(), sampledValue: [{ value: 1500, unitOfMeasure: { unit: 'Wh' } }] },
      ],
    });
    const before = Date.now();
    expect(
      await station.call(
        'TransactionEvent',
        transactionEvent('Ended', 'tx-e', {
          timestamp: '2016-12-31T23:59:60Z',
          energy: { value: 1e308, multiplier: 3 },
        }),
      ),
    ).toEqual({});
    const [stop] = t.events('StopTransaction');
    expect(stop!.payload.meterStop).toBe(1.5);
    // The time falls back to when the event came.
    expect(Date.parse(stop!.payload.stoppedAt as string)).toBeGreaterThanOrEqual(before - 1000);
    expect(t.logged('stop with a value out of bounds: closed with a fallback value').map((l) => l.field)).toEqual([
      'Energy.Active.Import.Register',
      'timestamp',
    ]);
  });

  it('timestamps that cannot round-trip (year 10000, a leap second) are refused; a stop before its start ends at its start', async () => {
    const t = await daemonForTest(siteWith([], [EV201]));
    const station = await stationV201ForTest(t.url, 'EV201');
    await station.boot();
    // Valid RFC 3339 both: the first is 10000-01-01 in UTC, the second no JavaScript Date can hold.
    for (const timestamp of ['9999-12-31T23:59:59-14:00', '2016-12-31T23:59:60Z']) {
      await expect(
        station.call(
          'TransactionEvent',
          transactionEvent('Started', `tx-${timestamp}`, { evseId: 1, idToken: 'TAG-1', timestamp }),
        ),
      ).rejects.toMatchObject(refused);
    }
    expect(t.events('StartTransaction')).toEqual([]);
    expect(t.logged('station call failed')).toEqual([]);

    await station.call(
      'TransactionEvent',
      transactionEvent('Started', 'tx-1', { evseId: 1, idToken: 'TAG-1', timestamp: '2026-11-26T10:00:00Z' }),
    );
    await station.call('TransactionEvent', transactionEvent('Ended', 'tx-1', { timestamp: '2026-11-26T09:00:00Z' }));
    const [stop] = t.events('StopTransaction');
    expect(stop!.payload.stoppedAt).toBe(stop!.payload.startedAt);
    expect(t.logged('transaction stopped before it started: its stop time is taken as its start time')).toHaveLength(1);
  });

  it("2.0.1: a station's repeated warnings are logged ten times a minute, the rest counted and summarised when it leaves", async () => {
    const t = await daemonForTest(siteWith([], [EV201]));
    const station = await stationV201ForTest(t.url, 'EV201');
    await station.boot();
    // Events naming no EVSE and no known transaction: each is answered, warned about ten times a minute, the rest
    // counted.
    for (let i = 0; i < 50; i += 1)
      expect(await station.call('TransactionEvent', transactionEvent('Updated', `lost-${i}`))).toEqual({});
    const warnings = t.logged(
      'TransactionEvent names no EVSE and none is known for its transaction: answered, no event',
    );
    expect(warnings).toHaveLength(10);
    await station.close();
    await expect.poll(() => t.logged('repeated warnings, summarised').length).toBe(1);
    const [summary] = t.logged('repeated warnings, summarised');
    expect(summary!.repeated).toEqual({
      'TransactionEvent names no EVSE and none is known for its transaction: answered, no event': 40,
    });
  });

  it('3,000 SecurityEventNotifications a minute from a 1.6 and a 2.0.1 station: all answered, ten lines each, the rest counted and summarised', async () => {
    const t = await daemonForTest(siteWith([], [CP001, EV201]));
    const legacy = await t.connect('CP001');
    await legacy.boot();
    const modern = await stationV201ForTest(t.url, 'EV201');
    await modern.boot();
    const flood = 3000;
    const timestamp = new Date().toISOString();
    const answers = await Promise.all([
      ...Array.from({ length: flood }, (_, i) =>
        legacy.call('SecurityEventNotification', { type: 'TamperDetectionActivated', timestamp, techInfo: `${i}` }),
      ),
      ...Array.from({ length: flood }, (_, i) =>
        modern.call('SecurityEventNotification', { type: 'TamperDetectionActivated', timestamp, techInfo: `${i}` }),
      ),
    ]);
    expect(answers.every((a) => JSON.stringify(a) === '{}')).toBe(true);
    const lines = t.logs.filter((l) => String(l.msg).startsWith('security event'));
    for (const stationId of ['CP001', 'EV201']) {
      const own = lines.filter((l) => l.stationId === stationId);
      expect(own, stationId).toHaveLength(10);
      expect(
        own.every((l) => l.level === 40 && l.type === 'TamperDetectionActivated'),
        stationId,
      ).toBe(true);
    }
    await Promise.all([legacy.close(), modern.close()]);
    await expect.poll(() => t.logged('repeated warnings, summarised').length).toBe(2);
    expect(t.logged('repeated warnings, summarised').map((l) => [l.stationId, l.repeated])).toEqual(
      expect.arrayContaining([
        ['CP001', { 'security event from station': flood - 10 }],
        ['EV201', { 'security event from station': flood - 10 }],
      ]),
    );
  });
});

import { describe, expect, it } from 'vitest';
import { daemonForTest, eventually, siteWith, type TestDaemon } from '../support/daemon.js';
import { stationV201ForTest } from '../support/for-test.js';

/** A 1.6 station CP001 (connectors 1 and 2) and a 2.0.1 station EV201 (EVSE 1) on one site. */
const STATIONS = [
  { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1, 2] }] },
  { id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] },
];
const CALL_TIMEOUT_MS = 500;

const daemon = (): Promise<TestDaemon> =>
  daemonForTest({
    ...siteWith([], STATIONS),
    ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: CALL_TIMEOUT_MS },
  });
/** The daemon's charging limits and the 1.6 station CP001, booted. */
async function bootedCp001() {
  const t = await daemon();
  const station = await t.connect('CP001');
  await station.boot();
  return { chargingLimits: t.daemon.chargingLimits, station };
}
const inS = (s: number): Date => new Date(Date.now() + s * 1000);

describe('charging limits reach the stations as charging profiles (contract 10.1 "OCPP")', () => {
  it('1.6: the fail-safe on connector 0, a TxProfile on the transaction that renewals replace, validTo back to the fail-safe', async () => {
    const { chargingLimits, station } = await bootedCp001();
    const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
    const limit = { connectorId: 1, transactionId, stationTransactionId: null, phases: 3 as const };

    expect(await chargingLimits.setFailsafe('CP001', 6)).toBe('accepted');
    expect(station.limitA(1)).toBe(6);
    expect(await chargingLimits.setTransactionLimit('CP001', { ...limit, currentA: 16, validTo: inS(300) })).toBe(
      'accepted',
    );
    expect([station.limitA(1), station.drawnA(1)]).toEqual([16, 16]);
    const validTo = inS(300);
    expect(await chargingLimits.setTransactionLimit('CP001', { ...limit, currentA: 10.27, validTo })).toBe('accepted');
    expect(station.profiles.profilesOf(1).map((p) => [p.purpose, p.schedule.periods])).toEqual([
      ['TxProfile', [{ startPeriodS: 0, limit: 10.2, numberPhases: 3 }]],
    ]);
    expect([station.limitA(1), station.drawnA(1)]).toEqual([10.2, 10.2]);
    expect(station.limitA(1, validTo)).toBe(6);
    await station.reportDrawn(1);

    const sent = station.received.filter((r) => r.action === 'SetChargingProfile').map((r) => r.params);
    expect(sent[0]).toEqual({
      connectorId: 0,
      csChargingProfiles: {
        chargingProfileId: expect.any(Number),
        stackLevel: expect.any(Number),
        chargingProfilePurpose: 'TxDefaultProfile',
        chargingProfileKind: 'Relative',
        chargingSchedule: { chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 6 }] },
      },
    });
    expect(sent[2]).toMatchObject({
      connectorId: 1,
      csChargingProfiles: { chargingProfilePurpose: 'TxProfile', transactionId, validTo: validTo.toISOString() },
    });
  });

  it('1.6: each connector keeps its own TxProfile, and a lapsed one gives way to the fail-safe by itself', async () => {
    const { chargingLimits, station } = await bootedCp001();
    const first = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
    const second = await station.startTransaction({ connectorId: 2, idTag: 'TAG-2' });
    await chargingLimits.setFailsafe('CP001', 8);
    const on = (connectorId: number, transactionId: number, currentA: number, validTo: Date) =>
      chargingLimits.setTransactionLimit('CP001', {
        connectorId,
        transactionId,
        stationTransactionId: null,
        currentA,
        validTo,
      });
    expect(await on(1, first, 20, inS(0.5))).toBe('accepted');
    expect(await on(2, second, 12, inS(300))).toBe('accepted');
    expect([station.limitA(1), station.limitA(2)]).toEqual([20, 12]);
    await eventually(() => station.limitA(1) === 8, 5_000, 'the lapsed TxProfile to give way');
    expect(station.limitA(2)).toBe(12);
    // A profile for a transaction the connector is not running: the station refuses it.
    expect(await on(1, second, 16, inS(300))).toBe('rejected');
  });

  it('2.0.1: the fail-safe on EVSE 0, a TxProfile on the station transaction id that renewals replace', async () => {
    const t = await daemon();
    const { chargingLimits } = t.daemon;
    const station = await stationV201ForTest(t.url, 'EV201');
    await station.boot();
    const stationTransactionId = station.newTransactionId();
    await station.transactionEvent('Started', stationTransactionId, { evseId: 1, chargingState: 'Charging' });
    const limit = { connectorId: 1, transactionId: 1, stationTransactionId };

    expect(await chargingLimits.setFailsafe('EV201', 6)).toBe('accepted');
    expect(station.limitA(1)).toBe(6);
    expect(await chargingLimits.setTransactionLimit('EV201', { ...limit, currentA: 16, validTo: inS(300) })).toBe(
      'accepted',
    );
    // 2.0.1 refuses another id at a stack level and purpose taken: accepted means the renewal kept the id.
    const validTo = inS(300);
    expect(await chargingLimits.setTransactionLimit('EV201', { ...limit, currentA: 11, validTo })).toBe('accepted');
    expect(station.profiles.profilesOf(1)).toEqual([
      expect.objectContaining({ purpose: 'TxProfile', transactionId: stationTransactionId, validTo }),
    ]);
    expect([station.limitA(1), station.drawnA(1)]).toEqual([11, 11]);
    expect(station.limitA(1, validTo)).toBe(6);
    expect(await station.reportDrawn(1)).toEqual({});
    expect(await chargingLimits.setFailsafe('EV201', 7)).toBe('accepted');
    expect(station.profiles.profilesOf(0)).toHaveLength(1);
  });

  it('a limit that changes before validTo (a CSMS schedule): Absolute from its decision, each change at its instant (1.6 and 2.0.1)', async () => {
    const t = await daemon();
    const { chargingLimits } = t.daemon;
    const station = await t.connect('CP001');
    await station.boot();
    const modern = await stationV201ForTest(t.url, 'EV201');
    await modern.boot();
    const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
    const stationTransactionId = modern.newTransactionId();
    await modern.transactionEvent('Started', stationTransactionId, { evseId: 1, chargingState: 'Charging' });
    const from = new Date();
    const changes = {
      from,
      steps: [
        { afterS: 60, currentA: 8.27 },
        { afterS: 120, currentA: 13 },
      ],
    };
    const limit = { connectorId: 1, currentA: 16, validTo: inS(300), phases: 3 as const, changes };
    expect(
      await chargingLimits.setTransactionLimit('CP001', { ...limit, transactionId, stationTransactionId: null }),
    ).toBe('accepted');
    expect(
      await chargingLimits.setTransactionLimit('EV201', { ...limit, transactionId: 2, stationTransactionId }),
    ).toBe('accepted');
    const at = (s: number) => new Date(from.getTime() + s * 1000);
    for (const obeying of [station, modern])
      expect([0, 59.9, 60, 119, 120, 299].map((s) => obeying.limitA(1, at(s)))).toEqual([16, 16, 8.2, 8.2, 13, 13]);
    const sent = station.received.filter((r) => r.action === 'SetChargingProfile').at(-1)?.params;
    expect(sent).toMatchObject({
      csChargingProfiles: {
        chargingProfileKind: 'Absolute',
        chargingSchedule: { startSchedule: from.toISOString(), chargingRateUnit: 'A' },
      },
    });
  });

  it('a station that will not be controlled: rejected or notSupported, by status or CALLERROR', async () => {
    const t = await daemon();
    const { chargingLimits } = t.daemon;
    for (const [refuseProfiles, outcome] of [
      ['Rejected', 'rejected'],
      ['NotSupported', 'notSupported'],
      ['NotImplemented', 'notSupported'],
    ] as const) {
      const station = await t.connect('CP001', undefined, { refuseProfiles });
      expect(await chargingLimits.setFailsafe('CP001', 6)).toBe(outcome);
      await station.close();
    }
    const station = await stationV201ForTest(t.url, 'EV201');
    for (const [refuseProfiles, outcome] of [
      ['Rejected', 'rejected'],
      ['NotSupported', 'notSupported'],
      ['NotImplemented', 'notSupported'],
    ] as const) {
      station.refuseProfiles = refuseProfiles;
      expect(await chargingLimits.setFailsafe('EV201', 6)).toBe(outcome);
    }
  });

  it("a report of the car's draw asked for by TriggerMessage MeterValues on the connector or EVSE", async () => {
    const t = await daemon();
    const { chargingLimits } = t.daemon;
    const station = await t.connect('CP001');
    await station.boot();
    expect(await chargingLimits.requestDrawReport('CP001', 2)).toBe('accepted');
    expect(station.received.filter((r) => r.action === 'TriggerMessage').map((r) => r.params)).toEqual([
      { requestedMessage: 'MeterValues', connectorId: 2 },
    ]);
    for (const [status, outcome] of [
      ['Rejected', 'rejected'],
      ['NotImplemented', 'notSupported'],
    ] as const) {
      station.handle('TriggerMessage', () => ({ status }));
      expect(await chargingLimits.requestDrawReport('CP001', 1)).toBe(outcome);
    }
    const v201 = await stationV201ForTest(t.url, 'EV201');
    await v201.boot();
    expect(await chargingLimits.requestDrawReport('EV201', 1)).toBe('accepted');
    expect(await chargingLimits.requestDrawReport('NOBODY', 1)).toBe('offline');
  });

  it('offline when the station is not connected, timeout when it does not answer', async () => {
    const t = await daemon();
    const { chargingLimits } = t.daemon;
    expect(await chargingLimits.setFailsafe('CP001', 6)).toBe('offline');
    const station = await t.connect('CP001');
    station.handle(
      'SetChargingProfile',
      (_params, signal) => new Promise((resolve) => signal.addEventListener('abort', resolve)),
    );
    const started = Date.now();
    expect(await chargingLimits.setFailsafe('CP001', 6)).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(CALL_TIMEOUT_MS - 50);
    await station.close();
    await eventually(async () => (await chargingLimits.setFailsafe('CP001', 6)) === 'offline');
  });
});

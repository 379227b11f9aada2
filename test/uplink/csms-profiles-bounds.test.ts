import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { TestCsms } from '../support/csms.js';
import { CP001, daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, type TestDaemon } from '../support/daemon.js';
import { stationV201ForTest } from '../support/for-test.js';
import type { SimulatedStation } from '../support/station.js';
import { circuitSiteUnderCsms, EV201, UPLINK_WAIT_MS } from '../support/uplink.js';

/*
 * What chargegate takes of the CSMS's charging profiles (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles; "Security"):
 * values OCPP forbids refused before anything is kept or sent on, whether or not the station is on a circuit; at
 * most 16 profiles per connector and 16 for the whole station, beyond them Rejected; and a flood of profiles never
 * stalls another station.
 */

/** The issue's own bound on a stall another station or /health may see (#41). */
const STALL_MS = 1000;
/** The flood of #41: this many ChargePointMaxProfiles, one per stack level, of FLOOD_PERIODS periods each. */
const FLOOD_PROFILES = 120;
const FLOOD_PERIODS = 1000;
/** The profiles kept per connector and for the whole station (docs/operating/security.md#security). */
const KEPT_PER_CONNECTOR = 16;
/**
 * How long the other station and /health are still timed after the flood: load management's steps (one a second)
 * read the kept profiles' composites, composed once per change, never per step; two steps show it as well as five.
 */
const AFTER_FLOOD_MS = 2500;

/** The CSMS's profiles chargegate keeps (its own to the stations never are). */
function keptCount(t: TestDaemon): number {
  return (t.db.prepare('SELECT count(*) AS n FROM csms_charging_profiles').get() as { n: number }).n;
}

/**
 * A 1.6 SetChargingProfile of a ChargePointMaxProfile (id 100 + its stack level) in A from now, its schedule's periods
 * and fields, and the profile's other fields, as given.
 */
function maximum16(
  stackLevel: number,
  periods: Array<Record<string, number>>,
  schedule: Record<string, unknown> = {},
  profile: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    connectorId: 0,
    csChargingProfiles: {
      chargingProfileId: 100 + stackLevel,
      stackLevel,
      chargingProfilePurpose: 'ChargePointMaxProfile',
      chargingProfileKind: 'Absolute',
      ...profile,
      chargingSchedule: {
        startSchedule: new Date().toISOString(),
        chargingRateUnit: 'A',
        chargingSchedulePeriod: periods,
        ...schedule,
      },
    },
  };
}

/** A 2.0.1 ChargingStationMaxProfile in A from now, of the schedules given (periods and fields). */
function maximum201(stackLevel: number, ...schedules: Array<Array<Record<string, number>>>): Record<string, unknown> {
  return {
    evseId: 0,
    chargingProfile: {
      id: 100 + stackLevel,
      stackLevel,
      chargingProfilePurpose: 'ChargingStationMaxProfile',
      chargingProfileKind: 'Absolute',
      chargingSchedule: schedules.map((periods, i) => ({
        id: i + 1,
        startSchedule: new Date().toISOString(),
        chargingRateUnit: 'A',
        chargingSchedulePeriod: periods,
      })),
    },
  };
}

/**
 * Until `done` settles and `afterMs` longer: another station's Heartbeat and /health, one after the other, the
 * slowest answer of each.
 */
async function slowestAnswers(
  t: TestDaemon,
  other: SimulatedStation,
  done: Promise<unknown>,
  afterMs: number,
): Promise<{ heartbeatMs: number; healthMs: number }> {
  let until = Infinity;
  void done.finally(() => (until = Date.now() + afterMs));
  const slowest = { heartbeatMs: 0, healthMs: 0 };
  const timed = async (key: keyof typeof slowest, f: () => Promise<unknown>): Promise<void> => {
    const startedAt = performance.now();
    await f();
    slowest[key] = Math.max(slowest[key], performance.now() - startedAt);
  };
  while (Date.now() < until) {
    await timed('heartbeatMs', () => other.heartbeat());
    await timed('healthMs', async () => (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/health`)).json());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return slowest;
}

describe("the CSMS's profile flood (#41): at most 16 per connector and 16 for the station, composed once per change", () => {
  it(
    '120 daily ChargePointMaxProfiles of 1,000 periods at every stack level: 16 kept, the rest Rejected; another station and /health answer within 1 s throughout; a replacement is not beyond the bound; GetCompositeSchedule over 7 days within 1 s',
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest(circuitSiteUnderCsms(csms, CP001, 'CP002', 32));
      const flooded = await t.connect('CP001');
      const other = await t.connect('CP002');
      for (const station of [flooded, other]) await station.boot();
      await eventually(() => csms.isConnected('CP001'), UPLINK_WAIT_MS, 'the uplink');
      await flooded.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
      const startSchedule = new Date(Math.floor(Date.now() / 1000) * 1000);
      // A minute each, 16.7 h of every day: every level's schedule changes at every minute, and differently, all week.
      const periods = (level: number) =>
        Array.from({ length: FLOOD_PERIODS }, (_, i) => ({ startPeriod: i * 60, limit: 6 + ((i + level) % 24) }));
      const daily = (level: number, limits = periods(level)) =>
        maximum16(
          level,
          limits,
          { startSchedule: startSchedule.toISOString() },
          { chargingProfileKind: 'Recurring', recurrencyKind: 'Daily' },
        );
      const flood = (async () => {
        const answers: unknown[] = [];
        for (let level = 0; level < FLOOD_PROFILES; level += 1)
          answers.push(await csms.call('CP001', 'SetChargingProfile', daily(level)));
        return answers;
      })();
      const slowest = await slowestAnswers(t, other, flood, AFTER_FLOOD_MS);
      const answers = await flood;
      expect(answers.slice(0, KEPT_PER_CONNECTOR)).toEqual(Array(KEPT_PER_CONNECTOR).fill({ status: 'Accepted' }));
      expect(answers.slice(KEPT_PER_CONNECTOR)).toEqual(
        Array(FLOOD_PROFILES - KEPT_PER_CONNECTOR).fill({ status: 'Rejected' }),
      );
      expect(slowest.heartbeatMs).toBeLessThan(STALL_MS);
      expect(slowest.healthMs).toBeLessThan(STALL_MS);
      expect(keptCount(t)).toBe(KEPT_PER_CONNECTOR);
      expect(t.logged('CSMS charging profile refused').at(-1)).toMatchObject({
        reason: `${KEPT_PER_CONNECTOR} profiles kept for the whole station already: chargegate keeps at most ${KEPT_PER_CONNECTOR} per connector and ${KEPT_PER_CONNECTOR} for the whole station`,
      });

      // A kept profile replaced (its id, or under 1.6 its stack level and purpose) is not one more.
      const replaced = daily(3, periods(0));
      expect(await csms.call('CP001', 'SetChargingProfile', replaced)).toEqual({ status: 'Accepted' });
      const sameLevel = maximum16(4, [{ startPeriod: 0, limit: 20 }], {}, { chargingProfileId: 999 });
      expect(await csms.call('CP001', 'SetChargingProfile', sameLevel)).toEqual({ status: 'Accepted' });
      expect(keptCount(t)).toBe(KEPT_PER_CONNECTOR);
      // Each connector has its own 16.
      const connectorDefault = {
        ...maximum16(
          0,
          [{ startPeriod: 0, limit: 30 }],
          {},
          { chargingProfileId: 500, chargingProfilePurpose: 'TxDefaultProfile' },
        ),
        connectorId: 1,
      };
      expect(await csms.call('CP001', 'SetChargingProfile', connectorDefault)).toEqual({ status: 'Accepted' });

      for (const connectorId of [0, 1]) {
        const startedAt = performance.now();
        const week = (await csms.call('CP001', 'GetCompositeSchedule', { connectorId, duration: 7 * 86_400 })) as {
          status: string;
          chargingSchedule: { chargingSchedulePeriod: unknown[] };
        };
        expect(performance.now() - startedAt).toBeLessThan(STALL_MS);
        expect(week.status).toBe('Accepted');
        expect(week.chargingSchedule.chargingSchedulePeriod.length).toBeGreaterThan(1);
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('values OCPP forbids in a CSMS charging profile (#41)', () => {
  it(
    '1.6: negative limits, periods and stack levels, periods not from 0 or not ascending, phases outside 1..3: Rejected, logged, never kept, never sent on; on a circuit or not',
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest(circuitSiteUnderCsms(csms, CP001, 'CP002', 32));
      const stations = { CP001: await t.connect('CP001'), CP002: await t.connect('CP002') };
      for (const station of Object.values(stations)) await station.boot();
      await eventually(() => csms.isConnected('CP001') && csms.isConnected('CP002'), UPLINK_WAIT_MS, 'the uplinks');
      // The issue's own: -10 A from -100 s at stack level -5, then each value alone.
      const forbidden = [
        maximum16(-5, [{ startPeriod: -100, limit: -10 }]),
        maximum16(1, [{ startPeriod: 0, limit: -10 }]),
        maximum16(-5, [{ startPeriod: 0, limit: 10 }]),
        maximum16(1, [
          { startPeriod: -100, limit: 10 },
          { startPeriod: 0, limit: 12 },
        ]),
        maximum16(1, [{ startPeriod: 60, limit: 10 }]),
        maximum16(1, [
          { startPeriod: 0, limit: 10 },
          { startPeriod: 600, limit: 12 },
          { startPeriod: 300, limit: 8 },
        ]),
        maximum16(1, [
          { startPeriod: 0, limit: 10 },
          { startPeriod: 0, limit: 12 },
        ]),
        maximum16(1, [{ startPeriod: 0, limit: 10, numberPhases: 4 }]),
        maximum16(1, [{ startPeriod: 0, limit: 10, numberPhases: 0 }]),
        maximum16(1, [{ startPeriod: 0, limit: 10 }], { duration: -60 }),
        maximum16(1, [{ startPeriod: 0, limit: 10 }], { minChargingRate: -1 }),
        { ...maximum16(1, [{ startPeriod: 0, limit: 10 }]), connectorId: -1 },
      ];
      for (const identity of ['CP001', 'CP002'] as const)
        for (const params of forbidden)
          expect(await csms.call(identity, 'SetChargingProfile', params), JSON.stringify(params)).toEqual({
            status: 'Rejected',
          });
      expect(keptCount(t)).toBe(0);
      expect(stations.CP002.received.map((r) => r.action)).not.toContain('SetChargingProfile');
      // CP001 holds load management's fail-safe only: 6 A, never -10.
      expect(stations.CP001.limitA(0)).toBe(6);
      const refused = t.logged('CSMS charging profile refused');
      expect(refused).toHaveLength(2 * forbidden.length);
      expect(refused[0]).toMatchObject({ stationId: 'CP001', reason: 'stackLevel -5: OCPP takes 0 or more' });
      expect(refused.slice(0, forbidden.length).map((r) => r.reason)).toEqual([
        'stackLevel -5: OCPP takes 0 or more',
        'limit -10 (period 1): OCPP takes 0 or more',
        'stackLevel -5: OCPP takes 0 or more',
        'startPeriod -100 (period 1): the first period starts at 0',
        'startPeriod 60 (period 1): the first period starts at 0',
        'startPeriod 300 (period 3): periods start in ascending order',
        'startPeriod 0 (period 2): periods start in ascending order',
        'numberPhases 4 (period 1): OCPP takes 1 to 3',
        'numberPhases 0 (period 1): OCPP takes 1 to 3',
        'duration -60: OCPP takes 0 or more',
        'minChargingRate -1: OCPP takes 0 or more',
        'connectorId -1: OCPP takes 0 or more',
      ]);

      // What OCPP allows still goes on: the station on no circuit gets it, the one on a circuit has it kept.
      const allowed = maximum16(0, [
        { startPeriod: 0, limit: 16, numberPhases: 3 },
        { startPeriod: 600, limit: 10 },
      ]);
      for (const identity of ['CP001', 'CP002'] as const)
        expect(await csms.call(identity, 'SetChargingProfile', allowed)).toEqual({ status: 'Accepted' });
      expect(stations.CP002.received.filter((r) => r.action === 'SetChargingProfile')).toHaveLength(1);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    '2.0.1: the same, and phaseToUse without numberPhases 1, in any of its schedules: Rejected with statusInfo, never kept, never sent on',
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest(circuitSiteUnderCsms(csms, EV201, 'EV202', 32));
      const stations = {
        EV201: await stationV201ForTest(t.url, 'EV201'),
        EV202: await stationV201ForTest(t.url, 'EV202'),
      };
      for (const station of Object.values(stations)) await station.boot();
      await eventually(() => csms.isConnected('EV201') && csms.isConnected('EV202'), UPLINK_WAIT_MS, 'the uplinks');
      const ok = [{ startPeriod: 0, limit: 10 }];
      const forbidden = [
        maximum201(-5, [{ startPeriod: -100, limit: -10 }]),
        maximum201(1, [{ startPeriod: 0, limit: -10 }]),
        maximum201(1, ok, [{ startPeriod: 0, limit: -10 }]),
        maximum201(1, [{ startPeriod: 0, limit: 10, numberPhases: 3, phaseToUse: 2 }]),
        maximum201(1, [{ startPeriod: 0, limit: 10, numberPhases: 1, phaseToUse: 4 }]),
        maximum201(1, [
          { startPeriod: 0, limit: 10 },
          { startPeriod: 0, limit: 8 },
        ]),
        { ...maximum201(1, ok), evseId: -1 },
      ];
      for (const identity of ['EV201', 'EV202'] as const)
        for (const params of forbidden)
          expect(await csms.call(identity, 'SetChargingProfile', params), JSON.stringify(params)).toEqual({
            status: 'Rejected',
            statusInfo: { reasonCode: 'InvalidValue', additionalInfo: expect.any(String) },
          });
      expect(keptCount(t)).toBe(0);
      expect(stations.EV202.profiles.profilesOf(0)).toEqual([]);
      expect(t.logged('CSMS charging profile refused').map((r) => r.reason)).toEqual(
        expect.arrayContaining([
          'limit -10 (schedule 2, period 1): OCPP takes 0 or more',
          'phaseToUse 2 (period 1): only with numberPhases 1',
          'phaseToUse 4 (period 1): OCPP takes 1 to 3',
          'evseId -1: OCPP takes 0 or more',
        ]),
      );

      // The bound holds for 2.0.1 too: an EVSE's 17th default, at a stack level of its own, is Rejected.
      const defaults = Array.from({ length: KEPT_PER_CONNECTOR + 1 }, (_, level) => {
        const params = maximum201(level, ok) as { chargingProfile: Record<string, unknown> };
        return {
          evseId: 1,
          chargingProfile: { ...params.chargingProfile, chargingProfilePurpose: 'TxDefaultProfile' },
        };
      });
      const answers = [];
      for (const params of defaults) answers.push(await csms.call('EV201', 'SetChargingProfile', params));
      expect(answers.slice(0, KEPT_PER_CONNECTOR)).toEqual(Array(KEPT_PER_CONNECTOR).fill({ status: 'Accepted' }));
      expect(answers.at(-1)).toEqual({
        status: 'Rejected',
        statusInfo: { reasonCode: 'OutOfStorage', additionalInfo: expect.stringContaining('at most 16 per connector') },
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

/** A composite schedule as either version's answer carries it. */
interface CompositeSchedule {
  chargingRateUnit: string;
  chargingSchedulePeriod: Array<{ startPeriod: number; limit: number }>;
}

/** A composite as the CSMS reads it, either version: its periods and unit. */
function periodsIn(answer: unknown): { unit: string; periods: CompositeSchedule['chargingSchedulePeriod'] } {
  const a = answer as { chargingSchedule?: CompositeSchedule; schedule?: CompositeSchedule };
  const schedule = a.chargingSchedule ?? a.schedule!;
  return { unit: schedule.chargingRateUnit, periods: schedule.chargingSchedulePeriod };
}

describe('GetCompositeSchedule and ClearChargingProfile for a station on no circuit, answered by chargegate (#42.2)', () => {
  it(
    "1.6: the CSMS's own profiles stacked by OCPP's rules under the charge point's maxCurrentA, whatever the station would answer; a cleared profile Accepted when chargegate held it",
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest(circuitSiteUnderCsms(csms, CP001, 'CP002', 32));
      const station = await t.connect('CP002');
      await station.boot();
      await eventually(() => csms.isConnected('CP002'), UPLINK_WAIT_MS, 'the uplink');
      const composite = async (connectorId: number, unit = 'A') =>
        periodsIn(
          await csms.call('CP002', 'GetCompositeSchedule', { connectorId, duration: 600, chargingRateUnit: unit }),
        );
      // Nothing from the CSMS: the charge point's maxCurrentA (32 A, three phases by default).
      expect(await composite(1)).toEqual({ unit: 'A', periods: [{ startPeriod: 0, limit: 32 }] });

      const startSchedule = new Date(Math.floor(Date.now() / 1000) * 1000);
      const stationMaximum = maximum16(0, [{ startPeriod: 0, limit: 13_800 }], { chargingRateUnit: 'W' });
      const connectorDefault = {
        connectorId: 1,
        csChargingProfiles: {
          chargingProfileId: 11,
          stackLevel: 1,
          chargingProfilePurpose: 'TxDefaultProfile',
          chargingProfileKind: 'Absolute',
          chargingSchedule: {
            startSchedule: startSchedule.toISOString(),
            chargingRateUnit: 'A',
            chargingSchedulePeriod: [
              { startPeriod: 0, limit: 16 },
              { startPeriod: 300, limit: 8 },
            ],
          },
        },
      };
      for (const params of [stationMaximum, connectorDefault])
        expect(await csms.call('CP002', 'SetChargingProfile', params)).toEqual({ status: 'Accepted' });
      // The station holds them as the CSMS sent them.
      expect(station.received.map((r) => r.params)).toEqual([stationMaximum, connectorDefault]);
      const answer = (await csms.call('CP002', 'GetCompositeSchedule', { connectorId: 1, duration: 600 })) as {
        scheduleStart: string;
      };
      const lowersAtS = (startSchedule.getTime() + 300_000 - Date.parse(answer.scheduleStart)) / 1000;
      expect(periodsIn(answer).periods).toEqual([
        { startPeriod: 0, limit: 16 },
        { startPeriod: lowersAtS, limit: 8 },
      ]);
      // The whole station: its one connector, under its maximum; in W on three phases at 230 V.
      expect((await composite(0, 'W')).periods).toEqual([
        { startPeriod: 0, limit: 11_040 },
        { startPeriod: lowersAtS, limit: 5520 },
      ]);

      // A transaction's own profile prevails over the default, under the station's maximum (20 A).
      const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
      await eventually(() => csms.of('StartTransaction', 'CP002').length === 1, UPLINK_WAIT_MS, 'the start upstream');
      const { answer: started } = csms.received.find((m) => m.action === 'StartTransaction')!;
      const csmsTransactionId = (started as { transactionId: number }).transactionId;
      const txProfile = {
        connectorId: 1,
        csChargingProfiles: {
          chargingProfileId: 12,
          transactionId: csmsTransactionId,
          stackLevel: 0,
          chargingProfilePurpose: 'TxProfile',
          // Absolute from before the window asked: a Relative one would start within its first second.
          chargingProfileKind: 'Absolute',
          chargingSchedule: {
            startSchedule: startSchedule.toISOString(),
            chargingRateUnit: 'A',
            chargingSchedulePeriod: [{ startPeriod: 0, limit: 25 }],
          },
        },
      };
      expect(await csms.call('CP002', 'SetChargingProfile', txProfile)).toEqual({ status: 'Accepted' });
      expect(station.received.at(-1)?.params).toMatchObject({ csChargingProfiles: { transactionId } });
      expect((await composite(1)).periods).toEqual([{ startPeriod: 0, limit: 20 }]);

      // Cleared: the station clears it too; chargegate held it, so Accepted even from a station that had lost it.
      station.profiles.clear({ id: 12 });
      expect(await csms.call('CP002', 'ClearChargingProfile', { id: 12 })).toEqual({ status: 'Accepted' });
      expect(station.received.at(-1)).toEqual({ action: 'ClearChargingProfile', params: { id: 12 } });
      expect((await composite(1)).periods[0]).toEqual({ startPeriod: 0, limit: 16 });
      expect(await csms.call('CP002', 'ClearChargingProfile', { id: 12 })).toEqual({ status: 'Unknown' });

      // A remote start's profile goes to the station with the start, and chargegate keeps it for that transaction.
      await station.stopTransaction({ transactionId, reason: 'Local' });
      const chargingProfile = {
        chargingProfileId: 13,
        stackLevel: 0,
        chargingProfilePurpose: 'TxProfile',
        chargingProfileKind: 'Absolute',
        chargingSchedule: {
          startSchedule: startSchedule.toISOString(),
          chargingRateUnit: 'A',
          chargingSchedulePeriod: [{ startPeriod: 0, limit: 14 }],
        },
      };
      const remote = { connectorId: 1, idTag: 'TAG-R', chargingProfile };
      expect(await csms.call('CP002', 'RemoteStartTransaction', remote)).toEqual({ status: 'Accepted' });
      expect(station.received.at(-1)).toEqual({ action: 'RemoteStartTransaction', params: remote });
      await station.nextRemoteStart();
      await eventually(
        () => t.logged("the CSMS's remote start profile applies to its transaction").length === 1,
        UPLINK_WAIT_MS,
        'the profile bound to its transaction',
      );
      expect((await composite(1)).periods).toEqual([{ startPeriod: 0, limit: 14 }]);
      // A connector the station does not have.
      expect(await csms.call('CP002', 'GetCompositeSchedule', { connectorId: 5, duration: 600 })).toEqual({
        status: 'Rejected',
      });
      expect(station.received.map((r) => r.action)).not.toContain('GetCompositeSchedule');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "2.0.1: the same in 2.0.1's shape (strict schema): EVSE 1 at its maxCurrentA, then under the CSMS's station maximum; cleared by chargegate",
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest(circuitSiteUnderCsms(csms, EV201, 'EV202', 32));
      const station = await stationV201ForTest(t.url, 'EV202');
      await station.boot();
      await eventually(() => csms.isConnected('EV202'), UPLINK_WAIT_MS, 'the uplink');
      const composite = async (evseId: number) => {
        const answer = await csms.call('EV202', 'GetCompositeSchedule', { evseId, duration: 600 });
        expect(answer).toMatchObject({ status: 'Accepted', schedule: { evseId, duration: 600 } });
        return periodsIn(answer).periods;
      };
      expect(await composite(1)).toEqual([{ startPeriod: 0, limit: 32 }]);
      const stationMaximum = maximum201(0, [{ startPeriod: 0, limit: 20 }]);
      expect(await csms.call('EV202', 'SetChargingProfile', stationMaximum)).toEqual({ status: 'Accepted' });
      expect(station.profiles.profilesOf(0).map((p) => p.id)).toEqual([100]);
      expect([await composite(1), await composite(0)]).toEqual([
        [{ startPeriod: 0, limit: 20 }],
        [{ startPeriod: 0, limit: 20 }],
      ]);
      station.profiles.clear({ id: 100 });
      expect(await csms.call('EV202', 'ClearChargingProfile', { chargingProfileId: 100 })).toEqual({
        status: 'Accepted',
      });
      expect(await composite(1)).toEqual([{ startPeriod: 0, limit: 32 }]);
      expect(await csms.call('EV202', 'GetCompositeSchedule', { evseId: 5, duration: 600 })).toMatchObject({
        status: 'Rejected',
        statusInfo: { reasonCode: 'UnsupportedRequest' },
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

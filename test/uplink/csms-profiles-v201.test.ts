import { describe, expect, it } from 'vitest';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, type TestDaemon } from '../support/daemon.js';
import { stationV201ForTest } from '../support/for-test.js';
import type { StationV201 } from '../support/station-v201.js';
import { circuitSiteUnderCsms, EV201, UPLINK_WAIT_MS } from '../support/uplink.js';

/*
 * docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles, for an OCPP 2.0.1 station: ocpp-rpc's strict RPCServer in 2.0.1 as
 * the CSMS, so every answer chargegate gives it is checked against the official 2.0.1 schemas.
 */

/** A step runs at least every second and the stations answer at once: a change shows well within this. */
const WITHIN_MS = 10_000;
/** The CSMS's own profile id: chargegate's profiles on the station never carry it. */
const CSMS_PROFILE_ID = 77;

/** EV201 (EVSEs 1 and 2, 32 A each) alone on circuit `main`; EV202 on no circuit. */
function config(csms: TestCsms, maxCurrentA: number): Record<string, unknown> {
  return circuitSiteUnderCsms(csms, EV201, 'EV202', maxCurrentA);
}

/** A 2.0.1 charging profile of one schedule in A. */
function profile(
  purpose: string,
  limitA: number,
  fields: Record<string, unknown> = {},
  schedule: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: CSMS_PROFILE_ID,
    stackLevel: 3,
    chargingProfilePurpose: purpose,
    chargingProfileKind: 'Relative',
    chargingSchedule: [
      { id: 1, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: limitA }], ...schedule },
    ],
    ...fields,
  };
}

/** `count` periods a minute apart. */
function manyPeriods(count: number): Array<{ startPeriod: number; limit: number }> {
  return Array.from({ length: count }, (_, i) => ({ startPeriod: i * 60, limit: 6 + (i % 10) }));
}

/** Every profile the station holds: chargegate's, never the CSMS's. */
function heldProfileIds(station: StationV201): number[] {
  return [0, 1, 2].flatMap((evse) => station.profiles.profilesOf(evse)).map((p) => p.id);
}

async function siteForTest(maxCurrentA = 32): Promise<{ csms: TestCsms; t: TestDaemon; station: StationV201 }> {
  const csms = await TestCsms.startForTest();
  const t = await daemonForTest(config(csms, maxCurrentA));
  const station = await stationV201ForTest(t.url, 'EV201');
  await station.boot();
  await eventually(() => csms.isConnected('EV201'), UPLINK_WAIT_MS, 'the uplink');
  await expect.poll(() => station.limitA(0), { timeout: WITHIN_MS }).toBe(6);
  return { csms, t, station };
}

/** A car on the EVSE: its transaction started with the driver's token; the station's id for it. */
async function arrive(station: StationV201, evseId: number, idToken: string): Promise<string> {
  const transactionId = station.newTransactionId();
  await station.transactionEvent('Started', transactionId, { evseId, idToken, chargingState: 'Charging' });
  return transactionId;
}

describe("the CSMS's charging profiles for a 2.0.1 station on a circuit (docs/design/uplink.md#uplink-what-the-csms-sees)", () => {
  it(
    "a TxProfile on the station's transactionId caps its car and leaves the rest to the other; a lower circuit wins; GetCompositeSchedule in 2.0.1's shape; cleared, load management's limit returns and the fail-safe stays",
    async () => {
      const { csms, t, station } = await siteForTest();
      const first = await arrive(station, 1, 'TAG-1');
      await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(32);

      const set = { evseId: 1, chargingProfile: profile('TxProfile', 10, { transactionId: first }) };
      expect(await csms.call('EV201', 'SetChargingProfile', set)).toEqual({ status: 'Accepted' });
      await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(10);
      await arrive(station, 2, 'TAG-2');
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([10, 22]);

      t.temp.write(config(csms, 12));
      expect(await t.daemon.reload()).toBe(true);
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([6, 6]);
      expect(await csms.call('EV201', 'GetCompositeSchedule', { evseId: 1, duration: 600 })).toEqual({
        status: 'Accepted',
        schedule: {
          evseId: 1,
          duration: 600,
          scheduleStart: expect.any(String),
          chargingRateUnit: 'A',
          chargingSchedulePeriod: [{ startPeriod: 0, limit: 6 }],
        },
      });
      t.temp.write(config(csms, 32));
      expect(await t.daemon.reload()).toBe(true);
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([10, 22]);
      const periods = async (params: Record<string, unknown>) =>
        (
          (await csms.call('EV201', 'GetCompositeSchedule', params)) as {
            schedule: { chargingSchedulePeriod: unknown };
          }
        ).schedule.chargingSchedulePeriod;
      // 10 A on three phases at 230 V.
      expect(await periods({ evseId: 1, duration: 600, chargingRateUnit: 'W' })).toEqual([
        { startPeriod: 0, limit: 6900 },
      ]);
      expect(await periods({ evseId: 0, duration: 60 })).toEqual([{ startPeriod: 0, limit: 32 }]);

      expect(await csms.call('EV201', 'ClearChargingProfile', { chargingProfileId: CSMS_PROFILE_ID })).toEqual({
        status: 'Accepted',
      });
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([16, 16]);
      expect(await csms.call('EV201', 'ClearChargingProfile', {})).toEqual({ status: 'Unknown' });
      expect(station.limitA(0)).toBe(6);
      expect(heldProfileIds(station)).not.toContain(CSMS_PROFILE_ID);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "the station's fail-safe is the lower of the circuit's and the CSMS's defaults and station maximum at every instant, in 2.0.1; GetCompositeSchedule tells it",
    async () => {
      const { csms, station } = await siteForTest();
      const startSchedule = new Date(Math.floor(Date.now() / 1000) * 1000);
      const at = (s: number) => new Date(startSchedule.getTime() + s * 1000);
      const absolute = (
        purpose: string,
        id: number,
        periods: Array<{ startPeriod: number; limit: number }>,
        unit = 'A',
      ) => ({
        evseId: 0,
        chargingProfile: profile(
          purpose,
          0,
          { id, chargingProfileKind: 'Absolute' },
          { chargingRateUnit: unit, startSchedule: startSchedule.toISOString(), chargingSchedulePeriod: periods },
        ),
      });
      const defaults = absolute('TxDefaultProfile', CSMS_PROFILE_ID, [
        { startPeriod: 0, limit: 10 },
        { startPeriod: 120, limit: 4 },
        { startPeriod: 240, limit: 16 },
      ]);
      // 6900 W: 10 A on three phases for the whole station, 5 A for each of its two EVSEs.
      const maximum = absolute(
        'ChargingStationMaxProfile',
        CSMS_PROFILE_ID + 1,
        [{ startPeriod: 0, limit: 6900 }],
        'W',
      );
      for (const params of [defaults, maximum])
        expect(await csms.call('EV201', 'SetChargingProfile', params)).toEqual({ status: 'Accepted' });
      const held = () => [60, 180, 300].flatMap((s) => [station.limitA(1, at(s)), station.limitA(2, at(s))]);
      await expect.poll(held, { timeout: WITHIN_MS }).toEqual([5, 5, 4, 4, 5, 5]);
      const answer = (await csms.call('EV201', 'GetCompositeSchedule', { evseId: 2, duration: 300 })) as {
        schedule: { scheduleStart: string; chargingSchedulePeriod: Array<{ startPeriod: number; limit: number }> };
      };
      const sinceStart = (s: number) => (at(s).getTime() - Date.parse(answer.schedule.scheduleStart)) / 1000;
      expect(answer.schedule.chargingSchedulePeriod).toEqual([
        { startPeriod: 0, limit: 5 },
        { startPeriod: sinceStart(120), limit: 4 },
        { startPeriod: sinceStart(240), limit: 5 },
      ]);
      expect(heldProfileIds(station)).not.toContain(CSMS_PROFILE_ID);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "refused as a 2.0.1 station refuses, with its reason, or where load management cannot compose; a RequestStartTransaction's profile applies to the transaction of its remoteStartId; a station maximum holds for its cars together; a station on no circuit gets them as they are",
    async () => {
      const { csms, t, station } = await siteForTest();
      const running = await arrive(station, 1, 'TAG-1');
      const refusals: Array<[Record<string, unknown>, string]> = [
        [{ evseId: 1, chargingProfile: profile('TxProfile', 10) }, 'MissingParam'],
        [{ evseId: 1, chargingProfile: profile('TxProfile', 10, { transactionId: 'NOPE' }) }, 'TxNotFound'],
        [{ evseId: 2, chargingProfile: profile('TxProfile', 10, { transactionId: running }) }, 'TxNotFound'],
        [
          { evseId: 1, chargingProfile: profile('ChargingStationMaxProfile', 20, { chargingProfileKind: 'Absolute' }) },
          'InvalidValue',
        ],
        [{ evseId: 0, chargingProfile: profile('ChargingStationMaxProfile', 20) }, 'InvalidValue'],
        [{ evseId: 0, chargingProfile: profile('ChargingStationExternalConstraints', 20) }, 'InvalidValue'],
        [{ evseId: 9, chargingProfile: profile('TxDefaultProfile', 20) }, 'UnsupportedRequest'],
        // More periods than chargegate takes from a CSMS (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles).
        [
          {
            evseId: 1,
            chargingProfile: profile('TxDefaultProfile', 20, {}, { chargingSchedulePeriod: manyPeriods(1001) }),
          },
          'InvalidValue',
        ],
      ];
      for (const [params, reasonCode] of refusals)
        expect(await csms.call('EV201', 'SetChargingProfile', params)).toEqual({
          status: 'Rejected',
          statusInfo: { reasonCode, additionalInfo: expect.any(String) },
        });
      expect(t.logged('CSMS charging profile refused')).toHaveLength(refusals.length);
      // Another id at a stack level and purpose taken on the EVSE, valid at the same time (K01).
      const defaults = (id: number) => ({ evseId: 0, chargingProfile: { ...profile('TxDefaultProfile', 20), id } });
      expect(await csms.call('EV201', 'SetChargingProfile', defaults(80))).toEqual({ status: 'Accepted' });
      expect(await csms.call('EV201', 'SetChargingProfile', defaults(81))).toMatchObject({
        status: 'Rejected',
        statusInfo: { reasonCode: 'DuplicateProfile' },
      });
      expect(
        await csms.call('EV201', 'ClearChargingProfile', {
          chargingProfileCriteria: { chargingProfilePurpose: 'ChargingStationExternalConstraints' },
        }),
      ).toEqual({ status: 'Unknown' });
      expect(
        await csms.call('EV201', 'ClearChargingProfile', {
          chargingProfileCriteria: { evseId: 0, chargingProfilePurpose: 'TxDefaultProfile', stackLevel: 3 },
        }),
      ).toEqual({ status: 'Accepted' });
      expect(await csms.call('EV201', 'GetCompositeSchedule', { evseId: 9, duration: 60 })).toEqual({
        status: 'Rejected',
        statusInfo: { reasonCode: 'UnsupportedRequest', additionalInfo: expect.any(String) },
      });

      // A station maximum of 11 040 W: 16 A on each of three phases.
      const maximum = {
        evseId: 0,
        chargingProfile: profile(
          'ChargingStationMaxProfile',
          0,
          { id: 79, chargingProfileKind: 'Absolute' },
          { chargingRateUnit: 'W', chargingSchedulePeriod: [{ startPeriod: 0, limit: 11_040 }] },
        ),
      };
      expect(await csms.call('EV201', 'SetChargingProfile', maximum)).toEqual({ status: 'Accepted' });
      const remote = {
        evseId: 2,
        remoteStartId: 4711,
        idToken: { idToken: 'TAG-REMOTE', type: 'Central' },
        chargingProfile: profile('TxProfile', 12, { id: 78 }),
      };
      expect(
        await csms.call('EV201', 'RequestStartTransaction', {
          ...remote,
          chargingProfile: profile('TxDefaultProfile', 12),
        }),
      ).toMatchObject({ status: 'Rejected', statusInfo: { reasonCode: 'InvalidValue' } });
      expect(station.remoteRequests).toEqual([]);
      expect(await csms.call('EV201', 'RequestStartTransaction', remote)).toEqual({ status: 'Accepted' });
      // Relayed without the profile, which chargegate keeps for the transaction the station says it began.
      expect(station.remoteRequests.map((r) => r.params)).toEqual([
        { evseId: 2, remoteStartId: 4711, idToken: { idToken: 'TAG-REMOTE', type: 'Central' } },
      ]);
      expect(t.logged('remote start')).toEqual([expect.objectContaining({ by: 'csms', connectorId: 2 })]);
      // The station's maximum holds for both cars together: they share its 16 A.
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([8, 8]);
      expect(t.logged("the CSMS's remote start profile applies to its transaction")).toHaveLength(1);
      expect(
        (
          (await csms.call('EV201', 'GetCompositeSchedule', { evseId: 0, duration: 60 })) as {
            schedule: { chargingSchedulePeriod: unknown };
          }
        ).schedule.chargingSchedulePeriod,
      ).toEqual([{ startPeriod: 0, limit: 16 }]);
      expect(heldProfileIds(station).filter((id) => id >= 77 && id <= 81)).toEqual([]);
      // Alone, the remote car gets what the CSMS gave its start: 12 A, below the station's 16.
      await station.transactionEvent('Ended', running, { stoppedReason: 'EVDisconnected' });
      await expect.poll(() => station.limitA(2), { timeout: WITHIN_MS }).toBe(12);

      const unmanaged = await stationV201ForTest(t.url, 'EV202');
      await unmanaged.boot();
      await eventually(() => csms.isConnected('EV202'), UPLINK_WAIT_MS, 'the second uplink');
      expect(await csms.call('EV202', 'SetChargingProfile', defaults(80))).toEqual({ status: 'Accepted' });
      expect(await csms.call('EV202', 'ClearChargingProfile', { chargingProfileId: 80 })).toEqual({
        status: 'Accepted',
      });
      expect(await csms.call('EV202', 'RequestStartTransaction', remote)).toEqual({ status: 'Accepted' });
      expect(unmanaged.remoteRequests.map((r) => r.params)).toEqual([remote]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

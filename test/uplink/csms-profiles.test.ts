import { describe, expect, it } from 'vitest';
import { TestCsms } from '../support/csms.js';
import { CP001, daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, type TestDaemon } from '../support/daemon.js';
import type { SimulatedStation, StationOptions } from '../support/station.js';
import { circuitSiteUnderCsms, UPLINK_WAIT_MS } from '../support/uplink.js';

/** A step runs at least every second and the stations answer at once: a change shows well within this. */
const WITHIN_MS = 10_000;
/** The CSMS's own profile id: chargegate's profiles on the station never carry it. */
const CSMS_PROFILE_ID = 77;

/** CP001 (connectors 1 and 2, 32 A each) alone on circuit `main`; CP002 on no circuit. */
function config(csms: TestCsms, maxCurrentA: number): Record<string, unknown> {
  return circuitSiteUnderCsms(csms, CP001, 'CP002', maxCurrentA);
}

function txProfile(
  csmsTransactionId: number | undefined,
  periods: Array<{ startPeriod: number; limit: number }>,
  schedule: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    chargingProfileId: CSMS_PROFILE_ID,
    ...(csmsTransactionId !== undefined && { transactionId: csmsTransactionId }),
    stackLevel: 3,
    chargingProfilePurpose: 'TxProfile',
    chargingProfileKind: 'Relative',
    chargingSchedule: { chargingRateUnit: 'A', chargingSchedulePeriod: periods, ...schedule },
  };
}

/**
 * A SetChargingProfile of an Absolute schedule from startSchedule: periods as [startPeriod, limit]; the CSMS's own
 * profile id unless another is given.
 */
function absoluteProfile(
  connectorId: number,
  purpose: string,
  periods: Array<[number, number]>,
  {
    startSchedule,
    unit = 'A',
    id = CSMS_PROFILE_ID,
    transactionId,
  }: { startSchedule: Date; unit?: string; id?: number; transactionId?: number },
): Record<string, unknown> {
  const schedulePeriods = periods.map(([startPeriod, limit]) => ({ startPeriod, limit }));
  return {
    connectorId,
    csChargingProfiles: {
      ...txProfile(transactionId, schedulePeriods, {
        chargingRateUnit: unit,
        startSchedule: startSchedule.toISOString(),
      }),
      chargingProfileId: id,
      chargingProfilePurpose: purpose,
      chargingProfileKind: 'Absolute',
    },
  };
}

/** The profiles chargegate sent the station: never the CSMS's own. */
function sentProfileIds(station: SimulatedStation): number[] {
  return station.received
    .filter((r) => r.action === 'SetChargingProfile')
    .map(
      (r) => (r.params as { csChargingProfiles: { chargingProfileId: number } }).csChargingProfiles.chargingProfileId,
    );
}

async function siteForTest(
  maxCurrentA = 32,
  stationOptions: Omit<StationOptions, 'password'> = {},
): Promise<{ csms: TestCsms; t: TestDaemon; station: SimulatedStation }> {
  const csms = await TestCsms.startForTest();
  const t = await daemonForTest(config(csms, maxCurrentA));
  const station = await t.connect('CP001', undefined, stationOptions);
  await station.boot();
  await eventually(() => csms.of('BootNotification').length > 0, UPLINK_WAIT_MS, 'the uplink boot');
  await expect.poll(() => station.limitA(0), { timeout: WITHIN_MS }).toBe(6);
  return { csms, t, station };
}

describe("the CSMS's charging profiles composed with load management (docs/design/uplink.md#uplink-what-the-csms-sees)", () => {
  it(
    "a TxProfile on the CSMS's transaction id caps its car and leaves the headroom to the other; a lower circuit wins; GetCompositeSchedule tells the lower; cleared, load management's limit returns and the fail-safe stays",
    async () => {
      const { csms, t, station } = await siteForTest();
      await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
      await eventually(() => csms.of('StartTransaction').length === 1, UPLINK_WAIT_MS, 'the start upstream');
      await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(32);

      // 5001: the CSMS's own id for the transaction.
      const set = { connectorId: 1, csChargingProfiles: txProfile(5001, [{ startPeriod: 0, limit: 10 }]) };
      expect(await csms.call('CP001', 'SetChargingProfile', set)).toEqual({ status: 'Accepted' });
      await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(10);
      // A second car shares the circuit: what the CSMS leaves of the first one's share is the second's.
      await station.startTransaction({ connectorId: 2, idTag: 'TAG-2' });
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([10, 22]);

      // The circuit goes below what the CSMS allows: the circuit's share holds.
      t.temp.write(config(csms, 12));
      expect(await t.daemon.reload()).toBe(true);
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([6, 6]);
      expect(await csms.call('CP001', 'GetCompositeSchedule', { connectorId: 1, duration: 600 })).toEqual({
        status: 'Accepted',
        connectorId: 1,
        scheduleStart: expect.any(String),
        chargingSchedule: {
          duration: 600,
          startSchedule: expect.any(String),
          chargingRateUnit: 'A',
          chargingSchedulePeriod: [{ startPeriod: 0, limit: 6 }],
        },
      });
      t.temp.write(config(csms, 32));
      expect(await t.daemon.reload()).toBe(true);
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([10, 22]);
      const composite = (await csms.call('CP001', 'GetCompositeSchedule', {
        connectorId: 1,
        duration: 600,
        chargingRateUnit: 'W',
      })) as { chargingSchedule: { chargingSchedulePeriod: unknown } };
      // 10 A on three phases at 230 V.
      expect(composite.chargingSchedule.chargingSchedulePeriod).toEqual([{ startPeriod: 0, limit: 6900 }]);
      const whole = (await csms.call('CP001', 'GetCompositeSchedule', { connectorId: 0, duration: 60 })) as {
        chargingSchedule: { chargingSchedulePeriod: unknown };
      };
      expect(whole.chargingSchedule.chargingSchedulePeriod).toEqual([{ startPeriod: 0, limit: 32 }]);

      expect(await csms.call('CP001', 'ClearChargingProfile', { id: CSMS_PROFILE_ID })).toEqual({ status: 'Accepted' });
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([16, 16]);
      expect(await csms.call('CP001', 'ClearChargingProfile', {})).toEqual({ status: 'Unknown' });
      expect(station.limitA(0)).toBe(6);
      expect(station.received.map((r) => r.action)).not.toContain('ClearChargingProfile');
      expect(sentProfileIds(station)).not.toContain(CSMS_PROFILE_ID);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a schedule that lowers later reaches the station as one profile that lowers then, and GetCompositeSchedule shows both periods',
    async () => {
      const { csms, station } = await siteForTest();
      await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
      await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(32);
      const startSchedule = new Date(Math.floor(Date.now() / 1000) * 1000);
      const profile = absoluteProfile(
        1,
        'TxProfile',
        [
          [0, 16],
          [120, 8],
        ],
        { startSchedule },
      );
      expect(await csms.call('CP001', 'SetChargingProfile', profile)).toEqual({ status: 'Accepted' });
      await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(16);
      const at = (s: number) => new Date(startSchedule.getTime() + s * 1000);
      expect([station.limitA(1, at(119)), station.limitA(1, at(121))]).toEqual([16, 8]);
      const answer = (await csms.call('CP001', 'GetCompositeSchedule', { connectorId: 1, duration: 300 })) as {
        scheduleStart: string;
        chargingSchedule: { chargingSchedulePeriod: Array<{ startPeriod: number; limit: number }> };
      };
      const lowersAtS = (startSchedule.getTime() + 120_000 - Date.parse(answer.scheduleStart)) / 1000;
      expect(answer.chargingSchedule.chargingSchedulePeriod).toEqual([
        { startPeriod: 0, limit: 16 },
        { startPeriod: lowersAtS, limit: 8 },
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "the station's fail-safe is the lower of the circuit's and the CSMS's defaults and maximum at every instant (split between its connectors), so a car starting and a gateway gone never exceed the CSMS; GetCompositeSchedule tells it; cleared, the circuit's fail-safe alone",
    async () => {
      const { csms, station } = await siteForTest();
      const startSchedule = new Date(Math.floor(Date.now() / 1000) * 1000);
      const at = (s: number) => new Date(startSchedule.getTime() + s * 1000);
      const defaults = absoluteProfile(
        0,
        'TxDefaultProfile',
        [
          [0, 10],
          [120, 4],
          [240, 16],
        ],
        { startSchedule },
      );
      expect(await csms.call('CP001', 'SetChargingProfile', defaults)).toEqual({ status: 'Accepted' });
      const held = () => [60, 180, 300].flatMap((s) => [station.limitA(1, at(s)), station.limitA(2, at(s))]);
      // The circuit's 6 A, the CSMS's 4 A from 120 s to 240 s.
      await expect.poll(held, { timeout: WITHIN_MS }).toEqual([6, 6, 4, 4, 6, 6]);

      // 6900 W: 10 A on three phases for the whole station, 5 A for each of its two connectors.
      const maximum = absoluteProfile(0, 'ChargePointMaxProfile', [[0, 6900]], {
        startSchedule,
        unit: 'W',
        id: CSMS_PROFILE_ID + 1,
      });
      expect(await csms.call('CP001', 'SetChargingProfile', maximum)).toEqual({ status: 'Accepted' });
      await expect.poll(held, { timeout: WITHIN_MS }).toEqual([5, 5, 4, 4, 5, 5]);
      const answer = (await csms.call('CP001', 'GetCompositeSchedule', { connectorId: 1, duration: 300 })) as {
        scheduleStart: string;
        chargingSchedule: { chargingSchedulePeriod: Array<{ startPeriod: number; limit: number }> };
      };
      const sinceStart = (s: number) => (at(s).getTime() - Date.parse(answer.scheduleStart)) / 1000;
      expect(answer.chargingSchedule.chargingSchedulePeriod).toEqual([
        { startPeriod: 0, limit: 5 },
        { startPeriod: sinceStart(120), limit: 4 },
        { startPeriod: sinceStart(240), limit: 5 },
      ]);

      // A car that starts runs on that fail-safe (held above), then on its TxProfile: never above the CSMS's either.
      await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
      await expect.poll(() => station.limitA(1, at(180)), { timeout: WITHIN_MS }).toBe(4);

      expect(await csms.call('CP001', 'ClearChargingProfile', {})).toEqual({ status: 'Accepted' });
      await expect
        .poll(() => [station.limitA(2, at(60)), station.limitA(2, at(180))], { timeout: WITHIN_MS })
        .toEqual([6, 6]);
      expect(sentProfileIds(station)).not.toContain(CSMS_PROFILE_ID);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a station that takes no schedule of that many periods gets the lowest of its fail-safe and of its TxProfiles as one period, and stays controlled',
    async () => {
      const { csms, t, station } = await siteForTest(32, { maxPeriods: 1 });
      const twoPeriods = (limitA: number, laterA: number): Array<[number, number]> => [
        [0, limitA],
        [120, laterA],
      ];
      const defaults = absoluteProfile(0, 'TxDefaultProfile', twoPeriods(10, 4), { startSchedule: new Date() });
      expect(await csms.call('CP001', 'SetChargingProfile', defaults)).toEqual({ status: 'Accepted' });
      await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(4);
      const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
      await eventually(
        () => station.profiles.profilesOf(1).some((p) => p.purpose === 'TxProfile'),
        WITHIN_MS,
        "load management's TxProfile",
      );
      expect(station.limitA(1)).toBe(4);

      // Booted again without the CSMS's defaults: the fail-safe is one period again, and only a TxProfile that
      // changes is refused.
      await station.stopTransaction({ transactionId });
      expect(await csms.call('CP001', 'ClearChargingProfile', {})).toEqual({ status: 'Accepted' });
      await station.boot();
      await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(6);
      await station.startTransaction({ connectorId: 1, idTag: 'TAG-2' });
      await eventually(() => csms.of('StartTransaction').length === 2, UPLINK_WAIT_MS, 'the second start upstream');
      const csmsTransactionId = csms.received.filter((m) => m.action === 'StartTransaction').at(-1)?.answer
        ?.transactionId as number;
      // 8 A only after the 300 s a TxProfile covers (profileValidityS): the flat one is the lowest within them.
      const lowering = absoluteProfile(1, 'TxProfile', [...twoPeriods(12, 10), [400, 8]], {
        startSchedule: new Date(),
        transactionId: csmsTransactionId,
      });
      expect(await csms.call('CP001', 'SetChargingProfile', lowering)).toEqual({ status: 'Accepted' });
      await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(10);
      const composite = (await csms.call('CP001', 'GetCompositeSchedule', { connectorId: 1, duration: 600 })) as {
        chargingSchedule: { chargingSchedulePeriod: unknown };
      };
      expect(composite.chargingSchedule.chargingSchedulePeriod).toEqual([{ startPeriod: 0, limit: 10 }]);
      expect(
        t.logged('station refuses charging profiles: counted as uncontrolled at its maxCurrentA until it boots again'),
      ).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "refused where OCPP refuses it or load management cannot compose it; a RemoteStart's profile applies to the transaction it starts; a station maximum holds for its cars together; a station on no circuit gets the profiles as they are",
    async () => {
      const { csms, t, station } = await siteForTest();
      const maxProfile = (connectorId: number, schedule: Record<string, unknown> = {}) => ({
        connectorId,
        csChargingProfiles: {
          ...txProfile(undefined, [{ startPeriod: 0, limit: 20 }], schedule),
          chargingProfilePurpose: 'ChargePointMaxProfile',
        },
      });
      // No transaction runs on connector 1; a station maximum belongs on connector 0; 9 is no connector of CP001's;
      // more periods than chargegate takes from a CSMS.
      const periods = Array.from({ length: 1001 }, (_, i) => ({ startPeriod: i * 60, limit: 6 + (i % 10) }));
      for (const params of [
        {
          connectorId: 1,
          csChargingProfiles: { ...txProfile(undefined, periods), chargingProfilePurpose: 'TxDefaultProfile' },
        },
        { connectorId: 1, csChargingProfiles: txProfile(undefined, [{ startPeriod: 0, limit: 10 }]) },
        maxProfile(1),
        {
          connectorId: 9,
          csChargingProfiles: {
            ...txProfile(undefined, [{ startPeriod: 0, limit: 10 }]),
            chargingProfilePurpose: 'TxDefaultProfile',
          },
        },
      ])
        expect(await csms.call('CP001', 'SetChargingProfile', params)).toEqual({ status: 'Rejected' });
      expect(t.logged('CSMS charging profile refused')).toHaveLength(4);
      expect(t.logged('CSMS charging profile refused')[0]).toMatchObject({
        reason: 'a schedule of more than 1000 periods: chargegate takes at most 1000 from a CSMS',
      });

      // A station maximum of 11 040 W: 16 A on each of three phases.
      const maximum = maxProfile(0, {
        chargingRateUnit: 'W',
        chargingSchedulePeriod: [{ startPeriod: 0, limit: 11_040 }],
      });
      expect(await csms.call('CP001', 'SetChargingProfile', maximum)).toEqual({ status: 'Accepted' });
      const remote = {
        connectorId: 2,
        idTag: 'TAG-REMOTE',
        chargingProfile: { ...txProfile(undefined, [{ startPeriod: 0, limit: 12 }]), chargingProfileId: 78 },
      };
      expect(await csms.call('CP001', 'RemoteStartTransaction', remote)).toEqual({ status: 'Accepted' });
      expect(station.received.find((r) => r.action === 'RemoteStartTransaction')?.params).toEqual({
        connectorId: 2,
        idTag: 'TAG-REMOTE',
      });
      // The start itself is the domain's remote start, as one without a profile: checked and logged as the CSMS's.
      expect(t.logged('remote start')).toEqual([expect.objectContaining({ by: 'csms', connectorId: 2 })]);
      await station.nextRemoteStart();
      await expect.poll(() => station.limitA(2), { timeout: WITHIN_MS }).toBe(12);
      // The station's maximum holds for both cars together: they share its 16 A.
      await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
      await expect.poll(() => [station.limitA(1), station.limitA(2)], { timeout: WITHIN_MS }).toEqual([8, 8]);
      const whole = (await csms.call('CP001', 'GetCompositeSchedule', { connectorId: 0, duration: 60 })) as {
        chargingSchedule: { chargingSchedulePeriod: unknown };
      };
      expect(whole.chargingSchedule.chargingSchedulePeriod).toEqual([{ startPeriod: 0, limit: 16 }]);

      const unmanaged = await t.connect('CP002');
      await unmanaged.boot();
      await eventually(() => csms.isConnected('CP002'), UPLINK_WAIT_MS, 'the second uplink');
      expect(await csms.call('CP002', 'SetChargingProfile', maximum)).toEqual({ status: 'Accepted' });
      expect(await csms.call('CP002', 'ClearChargingProfile', {})).toEqual({ status: 'Accepted' });
      expect(unmanaged.received.map((r) => r.action)).toEqual(['SetChargingProfile', 'ClearChargingProfile']);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "a station that refuses profiles (uncontrolled) gets the CSMS's as they are, and the CSMS gets the station's answer: the limit is never silently dropped",
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest(config(csms, 32));
      const station = await t.connect('CP001', undefined, { refuseProfiles: 'Rejected' });
      await station.boot();
      await eventually(() => csms.of('BootNotification').length > 0, UPLINK_WAIT_MS, 'the uplink boot');
      await eventually(
        () =>
          t.logged('station refuses charging profiles: counted as uncontrolled at its maxCurrentA until it boots again')
            .length > 0,
        WITHIN_MS,
        'the station counted as uncontrolled',
      );
      const defaults = {
        ...txProfile(undefined, [{ startPeriod: 0, limit: 10 }]),
        chargingProfilePurpose: 'TxDefaultProfile',
      };
      for (const connectorId of [1, 0]) {
        const set = { connectorId, csChargingProfiles: defaults };
        expect(await csms.call('CP001', 'SetChargingProfile', set)).toEqual({ status: 'Rejected' });
        expect(station.received.at(-1)).toEqual({ action: 'SetChargingProfile', params: set });
      }
      const remote = {
        connectorId: 2,
        idTag: 'TAG-REMOTE',
        chargingProfile: txProfile(undefined, [{ startPeriod: 0, limit: 12 }]),
      };
      expect(await csms.call('CP001', 'RemoteStartTransaction', remote)).toEqual({ status: 'Accepted' });
      expect(station.received.find((r) => r.action === 'RemoteStartTransaction')?.params).toEqual(remote);
      // What the CSMS set there is the station's to clear too.
      const clear = { chargingProfilePurpose: 'TxDefaultProfile' };
      await csms.call('CP001', 'ClearChargingProfile', clear);
      expect(station.received.at(-1)).toEqual({ action: 'ClearChargingProfile', params: clear });
      expect(t.logged("CSMS charging profile kept: composed with load management's limits")).toHaveLength(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

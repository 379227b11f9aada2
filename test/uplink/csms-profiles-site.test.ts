import { describe, expect, it, onTestFinished } from 'vitest';
import { METER_MODELS } from '../../src/modbus/index.js';
import { SiteUnderLoad } from '../load/site-under-load.js';
import { circuitMeterConfig } from '../modbus/harness.js';
import { exitOf } from '../support/cli.js';
import { TestCsms } from '../support/csms.js';
import { eventually, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { spawnDaemonForTest, stationForTest, stationV201ForTest, tempSiteForTest } from '../support/for-test.js';
import { freePort } from '../support/free-port.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import type { SimulatedStation } from '../support/station.js';
import type { StationV201 } from '../support/station-v201.js';

/*
 * docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles, end to end on a built daemon: a 1.6 or a 2.0.1 station on a metered
 * circuit whose car draws what its profiles allow, a Modbus TCP grid meter that sees the building plus that car, and
 * ocpp-rpc's strict RPCServer as the operator's CSMS, in the station's version, setting a TxProfile on the
 * transaction by the id it knows it by.
 */

const LIMIT_A = 32;
const FAILSAFE_A = 6;
const RAISE_AFTER_S = 1;
const CSMS_LIMIT_A = 10;
const CSMS_PROFILE_ID = 77;
const SAMPLE_MS = 50;
const UPLINK_WAIT_MS = 30_000;
const WITHIN_MS = 15_000;
/** Held for longer than a raise takes: nothing is left to move the limit. */
const HOLD_MS = 3 * RAISE_AFTER_S * 1000;

/** What the CSMS says to the station in its OCPP version; the rest of the scenario is the same for both. */
interface Version {
  name: string;
  stationId: string;
  connect(ocppUrl: string): Promise<SimulatedStation | StationV201>;
  /** The id the CSMS knows the station's transaction by, once the start reached it. */
  transactionId(csms: TestCsms): unknown;
  /** The CSMS's TxProfile of CSMS_LIMIT_A on that transaction. */
  setProfile(transactionId: unknown): [string, Record<string, unknown>];
  compositeSchedule(): [string, Record<string, unknown>];
  periodsOf(answer: unknown): unknown;
  clearById(): [string, Record<string, unknown>];
  clearDefaults(): [string, Record<string, unknown>];
}

const TX_PROFILE = {
  stackLevel: 3,
  chargingProfilePurpose: 'TxProfile',
  chargingProfileKind: 'Relative',
};
const SCHEDULE = { chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: CSMS_LIMIT_A }] };

const VERSIONS: Version[] = [
  {
    name: 'OCPP 1.6',
    stationId: 'CP001',
    connect: (url) => stationForTest(url, 'CP001', undefined, { callTimeoutMs: 5000 }),
    // The id the CSMS gave the transaction.
    transactionId: (csms) => csms.received.find((m) => m.action === 'StartTransaction')?.answer?.transactionId,
    setProfile: (transactionId) => [
      'SetChargingProfile',
      {
        connectorId: 1,
        csChargingProfiles: {
          chargingProfileId: CSMS_PROFILE_ID,
          transactionId,
          ...TX_PROFILE,
          chargingSchedule: SCHEDULE,
        },
      },
    ],
    compositeSchedule: () => ['GetCompositeSchedule', { connectorId: 1, duration: 3600 }],
    periodsOf: (answer) =>
      (answer as { chargingSchedule: { chargingSchedulePeriod: unknown } }).chargingSchedule.chargingSchedulePeriod,
    clearById: () => ['ClearChargingProfile', { id: CSMS_PROFILE_ID }],
    clearDefaults: () => ['ClearChargingProfile', { chargingProfilePurpose: 'TxDefaultProfile' }],
  },
  {
    name: 'OCPP 2.0.1',
    stationId: 'EV201',
    connect: (url) => stationV201ForTest(url, 'EV201'),
    // The station's own id, as its TransactionEvent Started named it.
    transactionId: (csms) =>
      (csms.of('TransactionEvent', 'EV201')[0]?.transactionInfo as { transactionId: string } | undefined)
        ?.transactionId,
    setProfile: (transactionId) => [
      'SetChargingProfile',
      {
        evseId: 1,
        chargingProfile: {
          id: CSMS_PROFILE_ID,
          transactionId,
          ...TX_PROFILE,
          chargingSchedule: [{ id: 1, ...SCHEDULE }],
        },
      },
    ],
    compositeSchedule: () => ['GetCompositeSchedule', { evseId: 1, duration: 3600 }],
    periodsOf: (answer) =>
      (answer as { schedule: { chargingSchedulePeriod: unknown } }).schedule.chargingSchedulePeriod,
    clearById: () => ['ClearChargingProfile', { chargingProfileId: CSMS_PROFILE_ID }],
    clearDefaults: () => [
      'ClearChargingProfile',
      { chargingProfileCriteria: { chargingProfilePurpose: 'TxDefaultProfile' } },
    ],
  },
];

describe.each(VERSIONS)("the CSMS's charging profiles on a metered circuit, on a built daemon: $name", (version) => {
  const { stationId } = version;
  it(
    'the station always obeys the lower of the CSMS and the circuit; GetCompositeSchedule tells it; a restart keeps the profile; cleared, the circuit share returns and the fail-safe stays',
    async () => {
      const csms = await TestCsms.startForTest();
      const call = ([action, params]: [string, Record<string, unknown>]) => csms.call(stationId, action, params);
      const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
      onTestFinished(() => sim.close());
      const chargePointId = `${stationId}-A`;
      const temp = tempSiteForTest({
        log: { level: 'info' },
        http: { host: '127.0.0.1', port: await freePort() },
        // A fixed port: the station reconnects to the address it knows after the restart.
        ocpp: { host: '127.0.0.1', port: await freePort(), path: '/ocpp', securityProfile: 0, callTimeoutMs: 2000 },
        sites: [
          {
            id: 's1',
            stations: [{ id: stationId, chargePoints: [{ id: chargePointId, connectors: [1] }] }],
            meters: [circuitMeterConfig('grid', 1, { type: 'tcp', host: '127.0.0.1', port: sim.port }, 2)],
            webhooks: [],
            circuits: [
              {
                id: 'main',
                maxCurrentA: LIMIT_A,
                meter: 'grid',
                failsafeCurrentA: FAILSAFE_A,
                chargePoints: [chargePointId],
              },
            ],
          },
        ],
        loadManagement: { minCurrentA: 6, raiseAfterS: RAISE_AFTER_S, profileValidityS: 300 },
        upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile: 0 } },
      });
      await sim.set(1, { energyKWh: 1000, currentA: [4, 4, 4], powerW: 2760 });
      const first = await spawnDaemonForTest(temp.configPath, { built: true, readyTimeoutMs: 60_000 });
      const station = await version.connect(first.ready.ocppUrl);
      await station.boot();
      const site = new SiteUnderLoad({
        limitA: LIMIT_A,
        otherA: [4, 4, 4],
        ports: [{ name: stationId, station, connectorId: 1 }],
        sampleMs: SAMPLE_MS,
        reportMs: 1000,
      });
      onTestFinished(() => site.stop());
      sim.follow(1, () => site.meterValues());
      site.start();
      await site.arrive(stationId);
      const transactionId = await eventually(() => version.transactionId(csms), UPLINK_WAIT_MS, 'the start upstream');
      const limit = () => site.limitA(stationId);
      // The circuit's share: 32 A less the building's 4.
      await expect.poll(limit, { timeout: WITHIN_MS, interval: SAMPLE_MS }).toBe(28);

      expect(await call(version.setProfile(transactionId))).toEqual({ status: 'Accepted' });
      await expect.poll(limit, { timeout: WITHIN_MS, interval: SAMPLE_MS }).toBe(CSMS_LIMIT_A);
      const cappedAt = Date.now();

      // The building takes more: the circuit leaves the car less than the CSMS allows, and that holds.
      site.setOther([24, 24, 24], 'the building takes 24 A');
      await expect.poll(limit, { timeout: WITHIN_MS, interval: SAMPLE_MS }).toBe(8);
      // Answered by chargegate; the strict CSMS checks the answer against its version's schema.
      const composite = async () => version.periodsOf(await call(version.compositeSchedule()));
      expect(await composite()).toEqual([{ startPeriod: 0, limit: 8 }]);
      // The building lets go: the car goes back up to what the CSMS allows, not to the circuit's 28.
      site.setOther([4, 4, 4], 'the building back to 4 A');
      await expect
        .poll(() => site.heldMs([stationId], ([a]) => a === CSMS_LIMIT_A), { timeout: WITHIN_MS, interval: SAMPLE_MS })
        .toBeGreaterThanOrEqual(HOLD_MS);
      expect(await composite()).toEqual([{ startPeriod: 0, limit: CSMS_LIMIT_A }]);

      first.child.kill('SIGTERM');
      await exitOf(first.child);
      const restartedAt = Date.now();
      await spawnDaemonForTest(temp.configPath, { built: true, readyTimeoutMs: 60_000 });
      await station.reconnect();
      await eventually(
        () => csms.of('BootNotification', stationId).length === 2,
        UPLINK_WAIT_MS,
        'the uplink after the restart',
      );
      // The restarted daemon starts the car on the fail-safe or less, and raises it to what the CSMS allows, kept.
      await expect
        .poll(() => site.samples.some((s) => s.atMs > restartedAt && s.limits.get(stationId)! <= FAILSAFE_A), {
          timeout: WITHIN_MS,
          interval: SAMPLE_MS,
        })
        .toBe(true);
      await expect
        .poll(() => site.heldMs([stationId], ([a]) => a === CSMS_LIMIT_A), { timeout: WITHIN_MS, interval: SAMPLE_MS })
        .toBeGreaterThanOrEqual(HOLD_MS);
      expect(await composite()).toEqual([{ startPeriod: 0, limit: CSMS_LIMIT_A }]);
      // From the CSMS's profile on, the car was never allowed more than it.
      const after = site.samples.filter((s) => s.atMs >= cappedAt);
      expect(after.filter((s) => s.limits.get(stationId)! > CSMS_LIMIT_A)).toEqual([]);

      expect(await call(version.clearById())).toEqual({ status: 'Accepted' });
      await expect.poll(limit, { timeout: WITHIN_MS, interval: SAMPLE_MS }).toBe(28);
      expect(await call(version.clearDefaults())).toEqual({ status: 'Unknown' });
      // The clears never reached the station: its fail-safe stays, and it never held the CSMS's profile.
      expect(station.limitA(0)).toBe(FAILSAFE_A);
      const held = [0, 1].flatMap((c) => station.profiles.profilesOf(c)).map((p) => p.id);
      expect(held).not.toContain(CSMS_PROFILE_ID);
      site.stop();
      expect(site.unexcused(2000 + 200 + SAMPLE_MS)).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

import { describe, expect, it, onTestFinished } from 'vitest';
import { CONNECTED_GRACE_MS } from '../../src/load/failsafe.js';
import { METER_MODELS } from '../../src/modbus/index.js';
import { circuitMeterConfig } from '../modbus/harness.js';
import { daemonForTest, type TestDaemon } from '../support/daemon.js';
import { stationV201ForTest } from '../support/for-test.js';
import { expectOnlyAfter, MovableLoadClock } from '../support/load-clock.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import type { SimulatedStation } from '../support/station.js';

const RAISE_AFTER_S = 2;
/** A step runs at least every second, and a station answers at once: every change shows well within this. */
const WITHIN_MS = 5_000;

/** One site, its stations each one charge point `<station>-A` on connector 1, all on one unmetered circuit. */
function circuitConfig(
  stationIds: string[],
  chargePoints: Array<Record<string, unknown>> = [],
  maxCurrentA = 24,
): Record<string, unknown> {
  return {
    sites: [
      {
        id: 's1',
        stations: stationIds.map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] })),
        meters: [],
        webhooks: [],
        chargePoints,
        circuits: [{ id: 'main', maxCurrentA, chargePoints: stationIds.map((id) => `${id}-A`) }],
      },
    ],
    loadManagement: { minCurrentA: 6, raiseAfterS: RAISE_AFTER_S, profileValidityS: 300 },
    ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: 500 },
  };
}

/**
 * The daemon on a clock the test moves (clock.meanwhile for waits on raiseAfterS and the connected grace); the
 * stations read their profiles at clock.now().
 */
async function daemonWithCircuit(
  ...args: Parameters<typeof circuitConfig>
): Promise<TestDaemon & { clock: MovableLoadClock }> {
  const clock = new MovableLoadClock();
  return Object.assign(await daemonForTest(circuitConfig(...args), { loadClock: clock }), { clock });
}

describe('load management limits a circuit through charging profiles (docs/configuration/circuits.md#circuits-load-management)', () => {
  it('1.6: shares an unmetered circuit, lowers at once for a newcomer, raises only after raiseAfterS', async () => {
    const { clock, ...t } = await daemonWithCircuit(['CP001', 'CP002', 'CP003']);
    const [a, b, c] = [await t.connect('CP001'), await t.connect('CP002'), await t.connect('CP003')] as const;
    const limits =
      (...stations: SimulatedStation[]) =>
      () =>
        stations.map((s) => s.limitA(1, clock.now()));
    for (const s of [a, b, c]) {
      await s.boot();
      // After every boot: the fail-safe (6 A by default) as the station's TxDefaultProfile.
      await expect.poll(() => s.limitA(0, clock.now()), { timeout: WITHIN_MS }).toBe(6);
    }
    await a.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
    await b.startTransaction({ connectorId: 1, idTag: 'TAG-2' });
    await expect.poll(clock.meanwhile(limits(a, b)), { timeout: WITHIN_MS }).toEqual([12, 12]);

    const third = await c.startTransaction({ connectorId: 1, idTag: 'TAG-3' });
    // The newcomer runs on the fail-safe at first: the others get what it leaves, at once (the test does not move the clock).
    await expect.poll(() => Math.max(...(limits(a, b)() as number[])), { timeout: 2_500 }).toBeLessThanOrEqual(9);
    await expect.poll(clock.meanwhile(limits(a, b, c)), { timeout: WITHIN_MS }).toEqual([8, 8, 8]);

    await c.stopTransaction({ transactionId: third });
    await expectOnlyAfter(clock, RAISE_AFTER_S * 1000, limits(a, b), [12, 12], WITHIN_MS);
  });

  it('2.0.1: the fail-safe on EVSE 0 after the boot, and a TxProfile on its transaction', async () => {
    const { clock, ...t } = await daemonWithCircuit(['EV201']);
    const station = await stationV201ForTest(t.url, 'EV201');
    await station.boot();
    await expect.poll(() => station.profiles.profilesOf(0).length, { timeout: WITHIN_MS }).toBe(1);
    expect(station.limitA(0, clock.now())).toBe(6);
    const stationTransactionId = station.newTransactionId();
    await station.transactionEvent('Started', stationTransactionId, {
      evseId: 1,
      idToken: 'TAG-1',
      chargingState: 'Charging',
    });
    await expect
      .poll(() => station.profiles.profilesOf(1), { timeout: WITHIN_MS })
      .toEqual([expect.objectContaining({ purpose: 'TxProfile', transactionId: stationTransactionId })]);
    await expect
      .poll(
        clock.meanwhile(() => station.limitA(1, clock.now())),
        { timeout: WITHIN_MS },
      )
      .toBe(24);
  });

  it('a station that connects without booting (chargegate restarted under it) gets the fail-safe after a grace; so does one connected when a reload brings its circuit', async () => {
    const { clock, ...t } = await daemonWithCircuit(['CP001', 'CP002']);
    const station = await t.connect('CP001');
    await expectOnlyAfter(clock, CONNECTED_GRACE_MS, () => station.limitA(0, clock.now()), 6, WITHIN_MS);

    const unmanaged = { ...circuitConfig(['CP001', 'CP002']) };
    const [site] = unmanaged.sites as Array<Record<string, unknown>>;
    t.temp.write({ ...unmanaged, sites: [{ ...site, circuits: [] }] });
    expect(await t.daemon.reload()).toBe(true);
    // Connected while no circuit is managed: the load manager made by the next reload hears of it from the start.
    const other = await t.connect('CP002');
    t.temp.write(circuitConfig(['CP001', 'CP002']));
    expect(await t.daemon.reload()).toBe(true);
    await expectOnlyAfter(clock, CONNECTED_GRACE_MS, () => other.limitA(0, clock.now()), 6, WITHIN_MS);
  });

  it('a limit refused because the station ended its transaction while the limit was on its way (its stop follows) counts as no refusal', async () => {
    const { clock, ...t } = await daemonWithCircuit(['CP001', 'CP002']);
    const [a, b] = [await t.connect('CP001'), await t.connect('CP002')] as const;
    for (const s of [a, b]) await s.boot();
    const ending = await a.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
    await expect
      .poll(
        clock.meanwhile(() => a.limitA(1, clock.now())),
        { timeout: WITHIN_MS },
      )
      .toBe(24);
    // The car leaves: the station ends the transaction, then its StopTransaction crosses the lowering a newcomer brings.
    a.endLocally(ending);
    await b.startTransaction({ connectorId: 1, idTag: 'TAG-2' });
    await expect
      .poll(() => a.received.filter((r) => r.action === 'SetChargingProfile').length, { timeout: WITHIN_MS })
      .toBe(3);
    await a.stopTransaction({ transactionId: ending });

    await a.startTransaction({ connectorId: 1, idTag: 'TAG-3' });
    await expect
      .poll(
        clock.meanwhile(() => [a.limitA(1, clock.now()), b.limitA(1, clock.now())]),
        { timeout: WITHIN_MS },
      )
      .toEqual([12, 12]);
    expect(
      t.logged('station refuses charging profiles: counted as uncontrolled at its maxCurrentA until it boots again'),
    ).toEqual([]);
  });

  it('a station refusing profiles is uncontrolled, logged once, and counted at its maxCurrentA', async () => {
    const { clock, ...t } = await daemonWithCircuit(['CP001', 'CPX'], [{ id: 'CPX-A', maxCurrentA: 10 }]);
    const controlled = await t.connect('CP001');
    const refusing = await t.connect('CPX', undefined, { refuseProfiles: 'Rejected' });
    await controlled.boot();
    await refusing.boot();
    await refusing.startTransaction({ connectorId: 1, idTag: 'TAG-X' });
    await controlled.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
    await expect
      .poll(
        clock.meanwhile(() => controlled.limitA(1, clock.now())),
        { timeout: WITHIN_MS },
      )
      .toBe(14);
    expect(refusing.limitA(1, clock.now())).toBeUndefined();
    const refused = t.logged(
      'station refuses charging profiles: counted as uncontrolled at its maxCurrentA until it boots again',
    );
    expect(refused).toEqual([expect.objectContaining({ stationId: 'CPX', outcome: 'rejected' })]);
  });

  it('SIGHUP: a lower circuit limit applies at once', async () => {
    const { clock, ...t } = await daemonWithCircuit(['CP001']);
    const station = await t.connect('CP001');
    await station.boot();
    await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
    await expect
      .poll(
        clock.meanwhile(() => station.limitA(1, clock.now())),
        { timeout: WITHIN_MS },
      )
      .toBe(24);
    t.temp.write(circuitConfig(['CP001'], [], 12));
    expect(await t.daemon.reload()).toBe(true);
    await expect.poll(() => station.limitA(1, clock.now()), { timeout: 2_000 }).toBe(12);
  });
});

describe('load management on a metered circuit', () => {
  const OFFLINE_AFTER_S = 2;

  it('a step in the other load lowers the share within 2 s; a lost meter puts the circuit on the fail-safe', async () => {
    const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
    onTestFinished(() => sim.close());
    await sim.set(1, { energyKWh: 1, currentA: [5, 5, 5], powerW: 3_450 });
    const t = await daemonForTest({
      sites: [
        {
          id: 's1',
          stations: [{ id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] }],
          meters: [circuitMeterConfig('grid', 1, { type: 'tcp', host: '127.0.0.1', port: sim.port }, OFFLINE_AFTER_S)],
          webhooks: [],
          circuits: [{ id: 'main', maxCurrentA: 40, meter: 'grid', chargePoints: ['CP001-A'] }],
        },
      ],
      loadManagement: { minCurrentA: 6, raiseAfterS: 1, profileValidityS: 300 },
      ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: 500 },
    });
    const health = async () =>
      ((await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/health`)).json()) as { load?: unknown }).load;
    const station = await t.connect('CP001');
    // The meter sees the other load and the car, which draws what its profiles allow.
    let otherA = [5, 5, 5];
    sim.follow(1, () => ({ currentA: otherA.map((a) => a + station.drawnA(1)) }));
    await station.boot();
    await station.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
    await station.reportDrawn(1);
    // Capped at the charge point's 32 A (CHARGE_POINT_DEFAULTS), below the 35 A the meter leaves.
    await expect.poll(() => station.limitA(1), { timeout: WITHIN_MS }).toBe(32);
    expect(await health()).toMatchObject({ status: 'ok' });

    // The car has taken its raise: the meter's increase since is all its own, and the step shows.
    otherA = [20, 25, 20];
    await expect.poll(() => station.limitA(1), { timeout: 2_000 }).toBe(15);

    await sim.setOnline(1, false);
    await expect.poll(() => station.limitA(1), { timeout: (OFFLINE_AFTER_S + 1) * 1000 }).toBe(6);
    expect(await health()).toMatchObject({ status: 'warning', circuitsWithoutMeter: ['main'] });
  });

  it("the cars' reported draw is not other load: a meter showing them keeps their shares (1.6 and 2.0.1)", async () => {
    const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
    onTestFinished(() => sim.close());
    const OTHER_A = 5;
    await sim.set(1, { energyKWh: 1, currentA: [OTHER_A, OTHER_A, OTHER_A], powerW: 3_450 });
    const t = await daemonForTest({
      sites: [
        {
          id: 's1',
          stations: ['CP001', 'EV201'].map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] })),
          meters: [circuitMeterConfig('grid', 1, { type: 'tcp', host: '127.0.0.1', port: sim.port }, OFFLINE_AFTER_S)],
          webhooks: [],
          chargePoints: [
            { id: 'CP001-A', maxCurrentA: 16 },
            { id: 'EV201-A', maxCurrentA: 16 },
          ],
          circuits: [{ id: 'main', maxCurrentA: 40, meter: 'grid', chargePoints: ['CP001-A', 'EV201-A'] }],
        },
      ],
      loadManagement: { minCurrentA: 6, raiseAfterS: 1, profileValidityS: 300 },
      ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: 500 },
    });
    const v16 = await t.connect('CP001');
    await v16.boot();
    await v16.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
    const v201 = await stationV201ForTest(t.url, 'EV201');
    await v201.boot();
    await v201.transactionEvent('Started', v201.newTransactionId(), {
      evseId: 1,
      idToken: 'TAG-2',
      chargingState: 'Charging',
    });
    // 35 A left beside the other load: both at their 16 A.
    await expect.poll(() => [v16.limitA(1), v201.limitA(1)], { timeout: WITHIN_MS }).toEqual([16, 16]);

    // The meter now shows the cars too; they say what they draw, so the other load is still 5 A.
    await v16.reportDrawn(1);
    await v201.reportDrawn(1);
    const drawn = v16.drawnA(1) + v201.drawnA(1);
    expect(drawn).toBe(32);
    await sim.set(1, { currentA: [OTHER_A + drawn, OTHER_A + drawn, OTHER_A + drawn] });
    const readingsSeen = Date.now() + 3 * 1000;
    while (Date.now() < readingsSeen) {
      expect([v16.limitA(1), v201.limitA(1)]).toEqual([16, 16]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // A real step in the other load still lowers them.
    await sim.set(1, { currentA: [OTHER_A + 10 + drawn, OTHER_A + drawn, OTHER_A + drawn] });
    await expect.poll(() => [v16.limitA(1), v201.limitA(1)], { timeout: 2_000 }).toEqual([12.5, 12.5]);

    // A car that pauses (SuspendedEV) draws nothing, whatever it last reported: a step in the other load that
    // takes its place is other load, answered at once.
    await v16.statusNotification({ connectorId: 1, status: 'SuspendedEV' });
    const heatPumpA = 15;
    const pausedSite = OTHER_A + heatPumpA + v201.drawnA(1);
    await sim.set(1, { currentA: [pausedSite, pausedSite, pausedSite] });
    await expect.poll(() => [v16.limitA(1), v201.limitA(1)], { timeout: 2_000 }).toEqual([10, 10]);

    // A current that is none is answered, warned about, and changes nothing.
    const garbage = { value: 'sixteen', measurand: 'Current.Import', unit: 'A' };
    await expect(
      v16.call('MeterValues', {
        connectorId: 1,
        meterValue: [{ timestamp: new Date().toISOString(), sampledValue: [garbage] }],
      }),
    ).resolves.toEqual({});
    expect(t.logged('Current.Import that is no current: ignored')).toEqual([
      expect.objectContaining({ stationId: 'CP001', connectorId: 1, refused: 1 }),
    ]);
  });
});

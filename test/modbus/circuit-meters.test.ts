import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import {
  METER_MODELS,
  MeterService,
  type CircuitMeterHealth,
  type CircuitMeterReading,
  type MeterHealth,
} from '../../src/modbus/index.js';
import { Site } from '../../src/site/index.js';
import { DirectWriter, type Database } from '../../src/store/index.js';
import { tempDirForTest } from '../support/for-test.js';
import { externalTool, MeterSimulator } from '../support/meter-simulator.js';
import { databasePerTest } from '../support/temp-database.js';
import {
  circuitMeterConfig,
  eventually,
  meterConfig,
  meterEvents,
  NAN_WORDS,
  waitForEvent,
  type ConnectionConfig,
} from './harness.js';
import { behindDeviceServer } from './session-scenarios.js';

const SDM630_CURRENT_L1 = 0x0006;
const SDM630_ENERGY = 0x0048;
const OFFLINE_AFTER_S = 2;

/**
 * Circuit meters (issue 29) through the MeterService the daemon runs, on real Modbus frames: what load management
 * will be told, what GET /health shows, and that nothing of it reaches the database.
 */
describe('circuit meters', () => {
  const t = databasePerTest();

  async function startService(meters: Array<Record<string, unknown>>) {
    const configOf = (list: Array<Record<string, unknown>>) =>
      parseConfig(JSON.stringify({ sites: [{ id: 's1', meters: list, webhooks: [] }] }));
    let config = configOf(meters);
    const site = new Site({ db: t.db, config: () => config });
    // A quick flush: a circuit meter that reached the database would show within the test.
    const service = await MeterService.start({
      config,
      site,
      writer: new DirectWriter(t.db),
      logger: createLogger('silent'),
      flushIntervalMs: 100,
    });
    onTestFinished(() => service.stop());
    const readings: CircuitMeterReading[] = [];
    service.onCircuitReading((r) => readings.push(r));
    return {
      service,
      readings,
      health: (id: string) => service.report().meters[id] as CircuitMeterHealth,
      sessionHealth: (id: string) => service.report().meters[id] as MeterHealth,
      reload: (list: Array<Record<string, unknown>>) => {
        config = configOf(list);
        return service.reload(config);
      },
    };
  }

  /** Waits for the meter to go offline and back; returns how long after its last good reading it went. */
  async function offlineAndBack(
    s: Awaited<ReturnType<typeof startService>>,
    meterId: string,
    setOnline: (online: boolean) => Promise<void>,
  ): Promise<number> {
    const offlineBefore = s.readings.filter((r) => !r.online).length;
    await setOnline(false);
    const offline = await eventually(
      () => s.readings.filter((r) => !r.online)[offlineBefore],
      15_000,
      `${meterId} offline`,
    );
    const lateMs = offline.at.getTime() - Date.parse(s.health(meterId).lastGoodReadingAt!);
    expect(s.health(meterId)).toMatchObject({ role: 'circuit', online: false, status: 'warning' });
    expect(s.service.circuitReadings().find((r) => r.meterId === meterId)).toEqual(offline);
    await setOnline(true);
    await eventually(() => s.readings.at(-1)?.online, 15_000, `${meterId} back online`);
    expect(s.readings.filter((r) => !r.online)).toHaveLength(offlineBefore + 1);
    expect(s.health(meterId)).toMatchObject({ online: true, status: 'ok' });
    return lateMs;
  }

  /** Rows a meter left in the tables a session meter writes. */
  function traces(db: Database, meterId: string): Record<string, number> {
    const count = (sql: string) => db.prepare(sql).pluck().get(meterId) as number;
    return {
      events: meterEvents(db, meterId).length,
      transactions: count('SELECT count(*) FROM transactions WHERE station_id = ?'),
      connectors: count('SELECT count(*) FROM connectors WHERE station_id = ?'),
      detectors: count('SELECT count(*) FROM meter_detectors WHERE meter_id = ?'),
      health: count('SELECT count(*) FROM meter_health WHERE meter_id = ?'),
    };
  }
  const NO_TRACES = { events: 0, transactions: 0, connectors: 0, detectors: 0, health: 0 };

  it('over Modbus TCP: current per phase and power, garbage rejected, offline within offlineAfterS + 1 s and back, nothing written', async () => {
    const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
    onTestFinished(() => sim.close());
    const tcp: ConnectionConfig = { type: 'tcp', host: '127.0.0.1', port: sim.port };
    await sim.set(1, { energyKWh: 100, currentA: [10, 20, 30], powerW: 13_800 });
    const s = await startService([circuitMeterConfig('grid', 1, tcp, OFFLINE_AFTER_S)]);
    const changesAtStart = t.db.prepare('SELECT total_changes()').pluck().get();

    const first = await eventually(() => s.readings[0], 10_000, 'a reading of grid');
    expect(first).toEqual({
      meterId: 'grid',
      at: expect.any(Date),
      online: true,
      currentA: { L1: 10, L2: 20, L3: 30 },
      powerW: 13_800,
    });
    expect(s.service.circuitReadings()).toEqual([expect.objectContaining({ meterId: 'grid', online: true })]);
    expect(s.health('grid')).toMatchObject({
      role: 'circuit',
      status: 'ok',
      online: true,
      lastReading: { currentA: [10, 20, 30], powerW: 13_800 },
    });
    // Currents and power only: the energy register is never asked for.
    expect(sim.requests.filter((r) => r.address === SDM630_ENERGY)).toEqual([]);

    await sim.setRegisters(1, 4, SDM630_CURRENT_L1, NAN_WORDS);
    await eventually(() => s.health('grid').rejected >= 2, 10_000, 'NaN rejected');
    expect(s.health('grid').lastError).toBe('bad reading: current L1 is NaN');
    const goodSoFar = s.readings.filter((r) => r.online).length;
    await sim.set(1, { currentA: [2e6, 20, 30] });
    await eventually(
      () => s.health('grid').lastError === 'bad reading: current L1 2000000 A is beyond any meter',
      10_000,
      'an absurd current rejected',
    );
    expect(s.readings.filter((r) => r.online)).toHaveLength(goodSoFar);
    await sim.set(1, { currentA: [11, 21, 31] });
    await eventually(() => s.readings.some((r) => r.online && r.currentA.L1 === 11), 10_000, 'a good reading again');
    expect(s.readings.at(-1)).toMatchObject({ currentA: { L1: 11, L2: 21, L3: 31 } });

    const lateMs = await offlineAndBack(s, 'grid', (online) => sim.setOnline(1, online));
    expect(lateMs).toBeGreaterThanOrEqual(OFFLINE_AFTER_S * 1000);
    expect(lateMs).toBeLessThanOrEqual((OFFLINE_AFTER_S + 1) * 1000);
    expect(s.service.report().status).toBe('ok');

    expect(t.db.prepare('SELECT total_changes()').pluck().get()).toBe(changesAtStart);
    expect(traces(t.db, 'grid')).toEqual(NO_TRACES);
  }, 60_000);

  it.skipIf(!externalTool('socat'))(
    'added on reload to a serial device server line it shares with a session meter, which polls on undisturbed',
    async () => {
      const line = await behindDeviceServer(tempDirForTest('circuit-meter'), (device) =>
        MeterSimulator.rtu({ device, units: { 1: METER_MODELS.sdm630, 2: METER_MODELS.sdm630 } }),
      );
      onTestFinished(() => line.close());
      await line.meter.set(1, { energyKWh: 50, currentA: [0, 0, 0], powerW: 0 });
      await line.meter.set(2, { energyKWh: 9, currentA: [40, 41, 42], powerW: 28_290 });
      const sessionMeter = meterConfig(1, line.connection);
      const s = await startService([sessionMeter]);
      await eventually(() => (s.service.report().meters.m1?.readings ?? 0) >= 3, 15_000, 'readings of m1');
      // The one bus, the device server's.
      const bus = () => Object.values(s.service.report().buses)[0]!;
      const before = { readings: s.sessionHealth('m1').readings, requests: bus().requests };

      await s.reload([sessionMeter, circuitMeterConfig('c2', 2, line.connection, OFFLINE_AFTER_S)]);
      // A restarted poller would count its readings from 0, a recreated bus its requests.
      expect(s.sessionHealth('m1').readings).toBeGreaterThanOrEqual(before.readings);
      expect(bus().requests).toBeGreaterThanOrEqual(before.requests);
      const first = await eventually(() => s.readings[0], 15_000, 'a reading of c2');
      expect(first).toMatchObject({ meterId: 'c2', online: true, currentA: { L1: 40, L2: 41, L3: 42 } });
      expect(bus()).toMatchObject({ reconnects: 0 });

      // The session meter detects on: a session on m1, none for the 40 A the circuit meter sees.
      await line.meter.set(1, { currentA: [16, 16, 16], powerW: 11_040 });
      await waitForEvent(t.db, 'm1', 'StartTransaction');

      const lateMs = await offlineAndBack(s, 'c2', (online) => line.meter.setOnline(2, online));
      expect(lateMs).toBeLessThanOrEqual((OFFLINE_AFTER_S + 1) * 1000);
      expect(s.sessionHealth('m1')).toMatchObject({ online: true, session: { phase: 'charging' } });
      expect(traces(t.db, 'c2')).toEqual(NO_TRACES);
    },
    90_000,
  );
});

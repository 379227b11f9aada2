import { describe, expect, it, onTestFinished } from 'vitest';
import { loadHealth, METER_MODELS, type CircuitMeterHealth, type MetersReport } from '../../src/modbus/index.js';
import { daemonForTest, type TestDaemon } from '../support/daemon.js';
import { runCliJson } from '../support/cli.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import {
  circuitMeterConfig,
  eventually,
  FAST_DETECTION,
  meterConfig,
  meterEvents,
  meterHealth,
  statusTrail,
  waitForEvent,
  waitForStatus,
} from './harness.js';

/** m2's session ends in the first case: what happens at its stop is the point, not how long the quiet lasts. */
const QUICK_STOP = { ...FAST_DETECTION, stopDelayS: 1 };

describe('meters in the running daemon', () => {
  it('reload adds, changes and removes meters without a restart; a removed meter closes its session with reason Other', async () => {
    const sim = await MeterSimulator.tcp({
      units: { 1: METER_MODELS.sdm630, 2: METER_MODELS.sdm630, 3: METER_MODELS.sdm630 },
    });
    onTestFinished(() => sim.close());
    const tcp = { type: 'tcp', host: '127.0.0.1', port: sim.port } as const;
    for (const unit of [1, 2, 3]) await sim.set(unit, { energyKWh: 10 * unit, currentA: [0, 0, 0], powerW: 0 });
    const sites = (meters: Array<Record<string, unknown>>) => ({
      sites: [{ id: 's1', meters, webhooks: [{ id: 'partner', url: 'http://127.0.0.1:9/webhook/events' }] }],
    });
    const t: TestDaemon = await daemonForTest(sites([meterConfig(1, tcp), meterConfig(3, tcp)]));
    const { db } = t;
    const port = t.daemon.httpPort;

    await sim.set(1, { currentA: [16, 16, 16] });
    const started = await waitForEvent(db, 'm1', 'StartTransaction');
    await sim.set(1, { energyKWh: 10.5 });
    await eventually(
      async () => (await meterHealth(port, 'm1'))?.lastReading?.energyKWh === 10.5,
      10_000,
      'm1 at 10.5 kWh',
    );
    const m3Readings = (await meterHealth(port, 'm3'))!.readings;

    // m1 leaves, m2 arrives, m3 stays as it was.
    t.temp.write({
      log: { level: 'info' },
      ...sites([meterConfig(2, tcp, { idTag: 'FLEET-42', detection: QUICK_STOP }), meterConfig(3, tcp)]),
    });
    expect(await t.daemon.reload()).toBe(true);
    const stop = await waitForEvent(db, 'm1', 'StopTransaction');
    expect(stop.payload).toEqual({
      stationId: 'm1',
      chargePointId: 'MB-1',
      connectorId: 1,
      idTag: 'MODBUS-m1',
      meterStart: 10,
      meterStop: 10.5,
      transactionId: started.payload.transactionId,
      reason: 'Other',
      startedAt: started.payload.startedAt,
      // The last good reading before the meter left the config.
      stoppedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/),
    });
    await waitForStatus(db, 'm2', 'Available');
    const report = await eventually(
      async () => {
        const body = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as {
          status: string;
          meters: MetersReport;
        };
        return Object.keys(body.meters.meters).sort().join() === 'm2,m3' ? body.meters : undefined;
      },
      10_000,
      'health listing m2 and m3',
    );
    // m3's poller was left alone: its count of readings did not start over.
    expect(report.meters.m3!.readings).toBeGreaterThanOrEqual(m3Readings);
    expect(report.buses[`tcp://127.0.0.1:${sim.port}`]).toMatchObject({ connected: true, reconnects: 0 });

    await sim.set(2, { currentA: [0, 10, 0] });
    const m2Start = await waitForEvent(db, 'm2', 'StartTransaction');
    expect(m2Start.payload).toMatchObject({ stationId: 'm2', idTag: 'FLEET-42', meterStart: 20 });

    // `meter status` (another process) shows what the daemon last wrote.
    await eventually(
      () => loadHealth(db).find((h) => h.meterId === 'm2')?.health.session.phase === 'charging',
      10_000,
      'm2 charging in the stored health',
    );
    const status = await runCliJson<{ meters: Array<Record<string, unknown>> }>([
      'meter',
      'status',
      '--config',
      t.temp.configPath,
    ]);
    expect(status.code).toBe(0);
    expect(status.data.meters).toEqual([
      expect.objectContaining({
        meterId: 'm2',
        siteId: 's1',
        chargePointId: 'MB-2',
        stale: false,
        status: 'ok',
        online: true,
        session: { phase: 'charging', transactionId: m2Start.payload.transactionId },
        busLatencyMs: expect.objectContaining({ average: expect.any(Number) }),
      }),
      expect.objectContaining({
        meterId: 'm3',
        status: 'ok',
        lastReading: { energyKWh: 30, currentA: [0, 0, 0], powerW: 0 },
        errors: 0,
        rejected: 0,
      }),
    ]);

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^chargegate_meter_up\{meter="m2"\} 1$/m);
    expect(metrics).toMatch(/^chargegate_meter_session_active\{meter="m2"\} 1$/m);
    expect(metrics).toMatch(/^chargegate_meter_energy_import_kwh\{meter="m3"\} 30$/m);
    expect(metrics).toMatch(/^chargegate_meter_current_amperes\{meter="m2",phase="L2"\} 10$/m);
    expect(metrics).toMatch(
      new RegExp(
        `^chargegate_modbus_request_duration_seconds_count\\{bus="tcp://127.0.0.1:${sim.port}",outcome="ok"\\} \\d+$`,
        'm',
      ),
    );
    expect(metrics).not.toMatch(/meter="m1"/);

    // m2 changes mid-session: its poller restarts from the stored state, the session goes on and ends once.
    t.temp.write({
      log: { level: 'info' },
      ...sites([
        meterConfig(2, tcp, { idTag: 'FLEET-43', pollIntervalMs: 150, detection: QUICK_STOP }),
        meterConfig(3, tcp),
      ]),
    });
    expect(await t.daemon.reload()).toBe(true);
    await eventually(
      async () => {
        const m2 = await meterHealth(port, 'm2');
        return m2 !== undefined && m2.readings >= 3 && m2.readings < 20;
      },
      10_000,
      'the restarted m2 poller reading',
    );
    expect((await meterHealth(port, 'm2'))?.session).toEqual({
      phase: 'charging',
      transactionId: m2Start.payload.transactionId,
    });
    await sim.set(2, { energyKWh: 20.25, currentA: [0, 0, 0] });
    const m2Stop = await waitForEvent(db, 'm2', 'StopTransaction');
    expect(m2Stop.payload).toMatchObject({
      idTag: 'FLEET-42',
      meterStart: 20,
      meterStop: 20.25,
      transactionId: m2Start.payload.transactionId,
    });
    expect(meterEvents(db, 'm2', 'StartTransaction')).toHaveLength(1);
    expect(statusTrail(db, 'm2')).toEqual(['Available/NoError', 'Charging/NoError', 'Available/NoError']);
    expect(statusTrail(db, 'm3')).toEqual(['Available/NoError']);
    expect(meterEvents(db, 'm3', 'StartTransaction')).toHaveLength(0);
  }, 90_000);

  it('believes a meter that answered zeros at power-up once its real energy repeats', async () => {
    const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
    onTestFinished(() => sim.close());
    const t: TestDaemon = await daemonForTest({
      sites: [{ id: 's1', meters: [meterConfig(1, { type: 'tcp', host: '127.0.0.1', port: sim.port })], webhooks: [] }],
    });
    await waitForStatus(t.db, 'm1', 'Available');
    expect((await meterHealth(t.daemon.httpPort, 'm1'))?.lastReading?.energyKWh).toBe(0);

    await sim.set(1, { energyKWh: 52_345.5, currentA: [16, 16, 16], powerW: 11_040 });
    const started = await waitForEvent(t.db, 'm1', 'StartTransaction');
    expect(started.payload).toMatchObject({ meterStart: 52_345.5 });
    expect((await meterHealth(t.daemon.httpPort, 'm1'))?.rejected).toBe(2);
    expect(t.logged('energy jump confirmed by consistent readings; accepted')).toEqual([
      expect.objectContaining({ meter: 'm1', from: 0, to: 52_345.5, readings: 3 }),
    ]);
  }, 60_000);

  it('a meter turned into a circuit meter on reload closes its session as a removed meter does, stands for no charge point, and is polled as a circuit meter', async () => {
    const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
    onTestFinished(() => sim.close());
    const tcp = { type: 'tcp', host: '127.0.0.1', port: sim.port } as const;
    const t: TestDaemon = await daemonForTest({ sites: [{ id: 's1', meters: [meterConfig(1, tcp)], webhooks: [] }] });
    await sim.set(1, { energyKWh: 7, currentA: [16, 16, 16], powerW: 11_040 });
    await waitForEvent(t.db, 'm1', 'StartTransaction');

    t.temp.write({ sites: [{ id: 's1', meters: [circuitMeterConfig('m1', 1, tcp)], webhooks: [] }] });
    expect(await t.daemon.reload()).toBe(true);
    expect((await waitForEvent(t.db, 'm1', 'StopTransaction')).payload).toMatchObject({
      reason: 'Other',
      meterStop: 7,
    });
    const status = (await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/status.json`)).json()) as {
      meters: unknown[];
      chargePoints: Array<{ chargePointId: string }>;
    };
    expect(status.meters).toEqual([]);
    expect(status.chargePoints.map((cp) => cp.chargePointId)).not.toContain('MB-1');
    const health = await eventually(
      async () => {
        const m1 = await meterHealth<CircuitMeterHealth>(t.daemon.httpPort, 'm1');
        return m1?.role === 'circuit' && m1.readings > 0 ? m1 : undefined;
      },
      10_000,
      'm1 polled as a circuit meter',
    );
    expect(health).toMatchObject({
      status: 'ok',
      online: true,
      lastReading: { currentA: [16, 16, 16], powerW: 11_040 },
    });
    expect(health).not.toHaveProperty('session');
    // Its session series went with its session; its readings stay.
    const metrics = await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/metrics`)).text();
    expect(metrics).not.toMatch(/^chargegate_meter_(session_active|energy_import_kwh)\{meter="m1"\}/m);
    expect(metrics).toMatch(/^chargegate_meter_current_amperes\{meter="m1",phase="L3"\} 16$/m);
    expect(metrics).toMatch(/^chargegate_meter_up\{meter="m1"\} 1$/m);
    // The circuit meter's readings caused nothing after the session it closed.
    expect(meterEvents(t.db, 'm1').at(-1)?.eventType).toBe('StopTransaction');
  }, 60_000);
});

import { describe, expect, it, onTestFailed, onTestFinished } from 'vitest';
import { openDatabase, type Database } from '../../src/store/index.js';
import { daemonForTest, type EventRow } from '../support/daemon.js';
import { receiverForTest, spawnDaemonForTest, tempSiteForTest } from '../support/for-test.js';
import { METER_MODELS } from '../../src/modbus/index.js';
import {
  externalTool,
  MeterSimulator,
  openDeviceServer,
  openPtyPair,
  type ScriptableMeter,
} from '../support/meter-simulator.js';
import {
  deliveriesOf,
  eventually,
  FAST_DETECTION,
  meterConfig,
  meterEvents,
  meterHealth,
  NAN_WORDS,
  statusTrail,
  waitForEvent,
  waitForStatus,
  type ConnectionConfig,
} from './harness.js';

/** A simulator the scenarios run against: ours on modbus-serial, or Debian's pymodbus; over TCP or RTU. */
export interface SimulatorFactory {
  name: string;
  /** False when an external tool is missing outside CI (in CI that is an error, see externalTool). */
  available: boolean;
  start(
    dir: string,
    units: number[],
  ): Promise<{ meter: ScriptableMeter; connection: ConnectionConfig; close(): Promise<void> }>;
}

/** A simulator on one end of a socat pseudo-terminal pair, chargegate on the other: Modbus RTU as on a cable. */
export async function onPtyPair(
  dir: string,
  startMeter: (device: string) => Promise<ScriptableMeter>,
): ReturnType<SimulatorFactory['start']> {
  const pty = await openPtyPair(dir);
  const meter = await startMeter(pty.meterSide);
  return {
    meter,
    connection: { type: 'rtu', device: pty.controllerSide, baudRate: 9600 },
    async close() {
      await meter.close();
      await pty.close();
    },
  };
}

/** A simulator on the far side of a socat serial device server in transparent mode: raw RTU over TCP. */
export async function behindDeviceServer(
  dir: string,
  startMeter: (device: string) => Promise<ScriptableMeter>,
): ReturnType<SimulatorFactory['start']> {
  const server = await openDeviceServer(dir);
  const meter = await startMeter(server.meterSide);
  return {
    meter,
    connection: { type: 'rtuovertcp', host: server.host, port: server.port },
    async close() {
      await meter.close();
      await server.close();
    },
  };
}

/** Units of our simulator, each an SDM630. */
const sdm630s = (units: number[]) => Object.fromEntries(units.map((u) => [u, METER_MODELS.sdm630]));

/** Our simulator over Modbus TCP (modbus-serial ServerTCP). */
export const OUR_SIMULATOR_TCP: SimulatorFactory = {
  name: 'our simulator over Modbus TCP (modbus-serial ServerTCP)',
  available: true,
  async start(_dir, units) {
    const sim = await MeterSimulator.tcp({ units: sdm630s(units) });
    return { meter: sim, connection: { type: 'tcp', host: '127.0.0.1', port: sim.port }, close: () => sim.close() };
  },
};

/** Our simulator over Modbus RTU on a socat pseudo-terminal pair (modbus-serial ServerSerial). */
export const OUR_SIMULATOR_RTU: SimulatorFactory = {
  name: 'our simulator over Modbus RTU on a socat pseudo-terminal pair (modbus-serial ServerSerial)',
  available: externalTool('socat'),
  // A frame gap near RTU's own t3.5 instead of modbus-serial's 30 ms: four meters share the bus, each reading takes
  // several requests, and every request waits the gap out.
  start: (dir, units) =>
    onPtyPair(dir, (device) => MeterSimulator.rtu({ device, units: sdm630s(units), frameGapMs: 5 })),
};

interface Profile {
  meter: ScriptableMeter;
  unitId: number;
  meterId: string;
  db: Database;
  httpPort: number;
}

const CHARGING = { currentA: [16, 16, 16], powerW: 11_040 };
const IDLE = { currentA: [0, 0, 0], powerW: 0 };
const SDM630_ENERGY = 0x0048;

async function idleAt(p: Profile, energyKWh: number): Promise<void> {
  await p.meter.set(p.unitId, { energyKWh, ...IDLE });
  await waitForStatus(p.db, p.meterId, 'Available');
}

/** Idle at energyKWh, then 16 A on every phase until the StartTransaction shows up. */
async function startSession(p: Profile, energyKWh: number): Promise<EventRow> {
  await idleAt(p, energyKWh);
  await p.meter.set(p.unitId, CHARGING);
  return waitForEvent(p.db, p.meterId, 'StartTransaction');
}

/** No current at energyKWh until the StopTransaction shows up. */
async function stopSession(p: Profile, energyKWh: number): Promise<void> {
  await p.meter.set(p.unitId, { energyKWh, ...IDLE });
  await waitForEvent(p.db, p.meterId, 'StopTransaction');
}

/** Exactly one session with these kWh values, and the connector status trail around it. */
function expectOneSession(p: Profile, meterStart: number, meterStop: number, statuses: string[]): void {
  const starts = meterEvents(p.db, p.meterId, 'StartTransaction');
  const stops = meterEvents(p.db, p.meterId, 'StopTransaction');
  expect(starts).toHaveLength(1);
  expect(stops).toHaveLength(1);
  const transactionId = starts[0]!.payload.transactionId;
  const at = { stationId: p.meterId, chargePointId: `MB-${p.unitId}`, connectorId: 1, idTag: `MODBUS-${p.meterId}` };
  // startedAt/stoppedAt: the first reading above startCurrentA and the first quiet one, as the transaction row has
  // them.
  const row = p.db.prepare('SELECT started_at, stopped_at FROM transactions WHERE id = ?').get(transactionId) as {
    started_at: string;
    stopped_at: string;
  };
  const startedAt = expect.toSatisfy((t: string) => Date.parse(t) === Date.parse(row.started_at));
  const stoppedAt = expect.toSatisfy((t: string) => Date.parse(t) === Date.parse(row.stopped_at));
  expect(starts[0]!.payload).toEqual({ ...at, meterStart, transactionId: expect.any(Number), startedAt });
  expect(stops[0]!.payload).toEqual({ ...at, meterStart, meterStop, transactionId, startedAt, stoppedAt });
  expect(statusTrail(p.db, p.meterId)).toEqual(statuses);
}

async function normalSession(p: Profile): Promise<void> {
  await startSession(p, 100);
  await stopSession(p, 100.75);
  expectOneSession(p, 100, 100.75, ['Available/NoError', 'Charging/NoError', 'Available/NoError']);
}

/**
 * A pause (a car balancing its battery) shorter than stopDelayS: one session, not two. The pause lasts 1.5 s by the
 * daemon's clock, from the first quiet reading its detector went 'stopping' on (a stop delay shorter than that ends
 * the session there), to its seeing current again a poll round later; 5 s of stop delay leave room for a slow bus.
 */
async function sessionWithPause(p: Profile): Promise<void> {
  await startSession(p, 200);
  await p.meter.set(p.unitId, { energyKWh: 200.5, ...IDLE });
  const detector = () =>
    p.db.prepare('SELECT phase, phase_since FROM meter_detectors WHERE meter_id = ?').get(p.meterId) as
      { phase: string; phase_since: string | null } | undefined;
  const quietSince = await eventually(
    () => (detector()?.phase === 'stopping' ? Date.parse(detector()!.phase_since!) : undefined),
    20_000,
    `${p.meterId} stopping`,
  );
  await eventually(() => Date.now() >= quietSince + 1500, 20_000, `${p.meterId} quiet for 1.5 s`);
  await p.meter.set(p.unitId, CHARGING);
  await eventually(() => detector()?.phase === 'charging', 20_000, `${p.meterId} charging again`);
  expect(meterEvents(p.db, p.meterId, 'StopTransaction')).toHaveLength(0);
  await stopSession(p, 201);
  expectOneSession(p, 200, 201, ['Available/NoError', 'Charging/NoError', 'Available/NoError']);
}

/**
 * The meter stops answering mid-session: Faulted/PowerMeterFailure, the session stays open, and ends normally later.
 */
async function meterDropsOff(p: Profile): Promise<void> {
  await startSession(p, 300);
  const faultedBefore = statusTrail(p.db, p.meterId).filter((s) => s.startsWith('Faulted/')).length;
  await p.meter.setOnline(p.unitId, false);
  await waitForStatus(p.db, p.meterId, 'Faulted', faultedBefore + 1);
  expect((await meterHealth(p.httpPort, p.meterId))?.online).toBe(false);
  await p.meter.set(p.unitId, { energyKWh: 300.5 });
  await p.meter.setOnline(p.unitId, true);
  await waitForStatus(p.db, p.meterId, 'Charging', 2);
  expect(meterEvents(p.db, p.meterId, 'StopTransaction')).toHaveLength(0);
  await stopSession(p, 300.5);
  expectOneSession(p, 300, 300.5, [
    'Available/NoError',
    'Charging/NoError',
    'Faulted/PowerMeterFailure',
    'Charging/NoError',
    'Available/NoError',
  ]);
}

/**
 * NaN, backwards and negative energy are rejected: they neither start a session nor end up in meterStop. (Honest
 * steps stay under 1 kWh: a larger jump within seconds is rejected as implausible, see reading.ts.)
 */
async function garbageRegisters(p: Profile): Promise<void> {
  const rejectedSoFar = async () => (await meterHealth(p.httpPort, p.meterId))?.rejected ?? 0;
  const waitRejected = async (more: number) => {
    const target = (await rejectedSoFar()) + more;
    await eventually(
      async () => (await rejectedSoFar()) >= target,
      30_000,
      `${more} more rejected readings of ${p.meterId}`,
    );
  };
  await idleAt(p, 400);
  await p.meter.setRegisters(p.unitId, 4, SDM630_ENERGY, NAN_WORDS);
  await p.meter.set(p.unitId, CHARGING);
  await waitRejected(8);
  expect(meterEvents(p.db, p.meterId, 'StartTransaction')).toHaveLength(0);
  await p.meter.set(p.unitId, { energyKWh: 400 });
  await waitForEvent(p.db, p.meterId, 'StartTransaction');
  await p.meter.set(p.unitId, { energyKWh: 350 });
  await waitRejected(2);
  await p.meter.set(p.unitId, { energyKWh: -5 });
  await waitRejected(2);
  await p.meter.set(p.unitId, { energyKWh: 3.4e38 });
  await waitRejected(2);
  await stopSession(p, 400.625);
  expectOneSession(p, 400, 400.625, ['Available/NoError', 'Charging/NoError', 'Available/NoError']);
}

/** The scenarios without a pause need no long stop delay: the session ends a second and a half after the current. */
const QUICK_STOP = { ...FAST_DETECTION, stopDelayS: 1.5 };

/**
 * Unit i+1 runs PROFILES[i] from startKWh, already on the register before the daemon's first poll: a jump from 0
 * would be rejected as implausible for a few readings, which on a loaded machine can outlast the drop-off's
 * offlineAfterS and put a Faulted status in the trail before the scenario begins. The drop-off's 5 s outlasts a
 * polling round of four meters on a loaded machine, as the pause's 5 s stop delay outlasts its 1.5 s and a round.
 */
const PROFILES: Array<{ run: (p: Profile) => Promise<void>; startKWh: number; config?: Record<string, unknown> }> = [
  { run: normalSession, startKWh: 100, config: { detection: QUICK_STOP } },
  { run: sessionWithPause, startKWh: 200, config: { detection: { ...FAST_DETECTION, stopDelayS: 5 } } },
  { run: meterDropsOff, startKWh: 300, config: { detection: { ...QUICK_STOP, offlineAfterS: 5 } } },
  // Rejected readings are not good ones: a long run of them would rightly take the meter offline. 60 s keeps the
  // garbage scenario about rejection even when a loaded machine slows the polls.
  { run: garbageRegisters, startKWh: 400, config: { detection: { ...QUICK_STOP, offlineAfterS: 60 } } },
];

/**
 * The "Done when" scenarios against one simulator: real Modbus frames in, Start/Stop events out through
 * the outbox and a real webhook receiver.
 */
export function sessionScenarios(factory: SimulatorFactory): void {
  describe.skipIf(!factory.available)(`sessions detected through ${factory.name}`, () => {
    it('four meters sharing one bus: a normal session, a session with a pause, a meter that drops off and returns, garbage registers', async () => {
      // A dir for the simulator's pseudo-terminals; the daemon gets its own temp site.
      const scratch = tempSiteForTest();
      const units = PROFILES.map((_, i) => i + 1);
      const sim = await factory.start(scratch.dir, units);
      onTestFinished(() => sim.close());
      for (const [i, profile] of PROFILES.entries())
        await sim.meter.set(i + 1, { energyKWh: profile.startKWh, ...IDLE });
      const receiver = await receiverForTest();
      const meters = PROFILES.map((profile, i) => meterConfig(i + 1, sim.connection, profile.config));
      const daemon = await daemonForTest({
        sites: [{ id: 's1', meters, webhooks: [{ id: 'partner', url: receiver.url('/webhook/events') }] }],
      });
      onTestFailed(() =>
        console.log(
          daemon.logs
            .filter((l) => Number(l.level) >= 40)
            .map((l) => JSON.stringify(l))
            .join('\n'),
        ),
      );

      await Promise.all(
        PROFILES.map((profile, i) =>
          profile.run({
            meter: sim.meter,
            unitId: i + 1,
            meterId: `m${i + 1}`,
            db: daemon.db,
            httpPort: daemon.daemon.httpPort,
          }),
        ),
      );

      // Payload and delivery as for OCPP events: one outbox row per event and webhook, each delivered signed.
      const events = units.flatMap((u) => meterEvents(daemon.db, `m${u}`));
      for (const u of units)
        expect(deliveriesOf(daemon.db, `m${u}`)).toHaveLength(meterEvents(daemon.db, `m${u}`).length);
      await receiver.waitFor((requests) => requests.length >= events.length, 20_000);
      const delivered = receiver.requests.map((r) => r.json<{ eventType: string; payload: object }>());
      for (const event of events)
        expect(delivered).toContainEqual(
          expect.objectContaining({ eventType: event.eventType, siteId: 's1', payload: event.payload }),
        );
      expect(daemon.logged('bad meter reading rejected').some((l) => l.meter === 'm4')).toBe(true);
    }, 120_000);
  });
}

/**
 * kill -9 mid-session, against a daemon of its own process (the system lane: sessions-kill-9.test.ts). It tests what
 * the detector keeps across a crash, which no transport changes: our simulator over TCP and over RTU run it, the
 * other transports only the bus scenario.
 */
export function killMidSessionScenario(factory: SimulatorFactory): void {
  describe.skipIf(!factory.available)(`sessions detected through ${factory.name}`, () => {
    it('a daemon killed mid-session neither starts a second session nor loses the stop', async () => {
      const site = tempSiteForTest();
      const sim = await factory.start(site.dir, [1]);
      onTestFinished(() => sim.close());
      site.write({
        log: { level: 'info' },
        sites: [
          {
            id: 's1',
            meters: [meterConfig(1, sim.connection)],
            webhooks: [{ id: 'partner', url: 'http://127.0.0.1:9/webhook/events' }],
          },
        ],
      });
      const run = async () => {
        const { child, logs, ready } = await spawnDaemonForTest(site.configPath);
        onTestFailed(() => console.log(logs.filter((l) => /"level":[4-6]0/.test(l)).join('\n')));
        return { child, httpPort: ready.httpPort };
      };
      const db = openDatabase(site.dataDir);
      onTestFinished(() => void db.close());
      const p: Profile = { meter: sim.meter, unitId: 1, meterId: 'm1', db, httpPort: 0 };

      const stored = () =>
        db.prepare('SELECT phase, phase_since FROM meter_detectors WHERE meter_id = ?').get('m1') as
          { phase: string; phase_since: string | null } | undefined;
      // Readings live in the daemon's memory (an idle meter writes nothing): the running daemon's /health tells them.
      const live = (daemon: { httpPort: number }) => meterHealth(daemon.httpPort, 'm1');
      const killAndRestart = async (daemon: Awaited<ReturnType<typeof run>>) => {
        daemon.child.kill('SIGKILL');
        await new Promise((resolve) => daemon.child.once('exit', resolve));
        const restarted = await run();
        // Readings taken by the restarted daemon while the current kept flowing.
        await eventually(
          async () => ((await live(restarted))?.readings ?? 0) >= 3,
          20_000,
          'readings of the restarted daemon',
        );
        return restarted;
      };

      let daemon = await run();
      const started = await startSession(p, 500);
      await p.meter.set(1, { energyKWh: 500.875 });
      await eventually(
        async () => (await live(daemon))?.lastReading?.energyKWh === 500.875,
        20_000,
        'a reading of 500.875 kWh',
      );

      // Killed while charging: the session goes on, no second StartTransaction.
      daemon = await killAndRestart(daemon);
      expect((await live(daemon))?.session).toEqual({
        phase: 'charging',
        transactionId: started.payload.transactionId,
      });
      expect(meterEvents(db, 'm1', 'StartTransaction')).toHaveLength(1);

      // Killed while waiting out stopDelayS: the stop still comes, dated from the first quiet reading.
      await p.meter.set(1, IDLE);
      const quietSince = await eventually(
        () => (stored()?.phase === 'stopping' ? stored()?.phase_since : undefined),
        20_000,
        'the stopping phase',
      );
      daemon = await killAndRestart(daemon);
      await waitForEvent(db, 'm1', 'StopTransaction');
      expectOneSession(p, 500, 500.875, ['Available/NoError', 'Charging/NoError', 'Available/NoError']);
      expect(
        db.prepare('SELECT stopped_at FROM transactions WHERE id = ?').pluck().get(started.payload.transactionId),
      ).toBe(quietSince);
      expect(deliveriesOf(db, 'm1')).toHaveLength(meterEvents(db, 'm1').length);
    }, 120_000);
  });
}

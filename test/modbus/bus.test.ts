import { createServer, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import {
  BusError,
  busSettingsOf,
  METER_MODELS,
  MeterReader,
  ModbusBus,
  type BusSettings,
} from '../../src/modbus/index.js';
import { externalTool, MeterSimulator, openPtyPair } from '../support/meter-simulator.js';
import { tempSiteForTest } from '../support/for-test.js';
import { eventually } from './harness.js';

const logger = createLogger('silent');
const SDM630_CURRENTS = { functionCode: 4, address: 6, count: 6 } as const;

/** The bus settings the daemon would derive from meter connections written as in the config file. */
function settingsFor(connections: string[]): BusSettings {
  const meters = connections
    .map((c, i) => `      - { id: m${i}, chargePointId: cp${i}, connectorId: 1, model: sdm630, connection: ${c} }`)
    .join('\n');
  const config = parseConfig(`sites:\n  - id: s\n    meters:\n${meters}\n`);
  const buses = busSettingsOf(config.sites[0]!.meters.map((m) => m.connection));
  expect(buses.size).toBe(1);
  return [...buses.values()][0]!;
}

describe('Modbus bus', () => {
  async function tcpMeters(responseDelayMs = 0) {
    const sim = await MeterSimulator.tcp({
      units: { 1: METER_MODELS.sdm630, 2: METER_MODELS.sdm630 },
      responseDelayMs,
    });
    onTestFinished(() => sim.close());
    return sim;
  }

  function openBus(settings: BusSettings): ModbusBus {
    const bus = new ModbusBus(settings, logger);
    onTestFinished(() => bus.close());
    return bus;
  }

  it('says a missing serial device in one clean line: the path once, no nested "Error:"', async () => {
    const bus = openBus(settingsFor(['{ type: rtu, device: /dev/ttyUSB-chargegate-missing, unitId: 1 }']));
    const failure = await bus.read(1, SDM630_CURRENTS, 500).then(
      () => undefined,
      (err: unknown) => err as BusError,
    );
    expect(failure?.message).toBe('cannot open /dev/ttyUSB-chargegate-missing: No such file or directory');
  });

  it('logs a reconnect with its bus key once', async () => {
    const sim = await tcpMeters();
    const port = sim.port;
    const lines: string[] = [];
    const bus = new ModbusBus(
      settingsFor([
        `{ type: tcp, host: 127.0.0.1, port: ${port}, unitId: 1, reconnectMinMs: 50, reconnectMaxMs: 100 }`,
      ]),
      createLogger('info', { write: (line: string) => void lines.push(line) }),
    );
    onTestFinished(() => bus.close());
    await bus.read(1, SDM630_CURRENTS, 500);
    await sim.close();
    await expect(bus.read(1, SDM630_CURRENTS, 300)).rejects.toBeInstanceOf(BusError);
    const back = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 }, port });
    onTestFinished(() => back.close());
    await eventually(
      () => bus.read(1, SDM630_CURRENTS, 300).catch(() => undefined),
      10_000,
      'a reading from the meter that came back',
    );
    const line = lines.find((l) => l.includes('modbus bus reconnected'))!;
    expect(line.match(/"bus":/g)).toEqual(['"bus":']);
    expect(line).toContain(`"bus":"tcp://127.0.0.1:${port}"`);
  });

  it('keeps one request in flight per socket, in order, with a quiet gap and a longer one when the unit changes', async () => {
    const sim = await tcpMeters(15);
    await sim.set(1, { currentA: [1, 2, 3] });
    await sim.set(2, { currentA: [4, 5, 6] });
    const bus = openBus(
      settingsFor([
        `{ type: tcp, host: 127.0.0.1, port: ${sim.port}, unitId: 1, interRequestDelayMs: 20, unitChangeDelayMs: 40 }`,
        `{ type: tcp, host: 127.0.0.1, port: ${sim.port}, unitId: 2, interRequestDelayMs: 10 }`,
      ]),
    );
    expect(bus.settings).toMatchObject({ interRequestDelayMs: 20, unitChangeDelayMs: 40 });
    const units = [1, 1, 2, 2, 1, 2, 1, 1];
    const answers = await Promise.all(units.map((u) => bus.read(u, SDM630_CURRENTS, 1000)));

    // 1.0 A (unit 1) is 0x3F80 0x0000 in float32, 4.0 A (unit 2) is 0x4080 0x0000: each answer came from its unit.
    expect(answers.map((words) => words[0])).toEqual(units.map((u) => (u === 1 ? 0x3f80 : 0x4080)));
    expect(sim.maxInFlight).toBe(1);
    expect(sim.requests.map((r) => r.unitId)).toEqual(units);
    for (let i = 1; i < sim.requests.length; i++) {
      const gap = sim.requests[i]!.receivedAt - sim.requests[i - 1]!.answeredAt!;
      // Timers may fire up to 1 ms early against Date.now() rounding.
      expect(gap).toBeGreaterThanOrEqual((units[i] === units[i - 1] ? 20 : 40) - 1);
    }
    expect(bus.stats()).toMatchObject({ requests: 8, errors: 0, timeouts: 0, reconnects: 0, connected: true });
  });

  it('times out a silent unit without disturbing the others on the socket', async () => {
    const sim = await tcpMeters();
    await sim.set(1, { energyKWh: 42.5 });
    await sim.setOnline(2, false);
    const bus = openBus(settingsFor([`{ type: tcp, host: 127.0.0.1, port: ${sim.port}, unitId: 1 }`]));
    const silent = bus.read(2, SDM630_CURRENTS, 200);
    const answered = bus.read(1, { functionCode: 4, address: 0x48, count: 2 }, 200);
    await expect(silent).rejects.toMatchObject({
      kind: 'timeout',
      message: expect.stringMatching(/unit 2 function 4 registers 6\+6: no answer within 200 ms/),
    });
    expect(await answered).toEqual([0x422a, 0x0000]);
    expect(bus.stats()).toMatchObject({ requests: 2, errors: 1, timeouts: 1 });
  });

  it('recreates the client after the meter goes away and comes back on the same port', async () => {
    const sim = await tcpMeters();
    const port = sim.port;
    const bus = openBus(
      settingsFor([
        `{ type: tcp, host: 127.0.0.1, port: ${port}, unitId: 1, reconnectMinMs: 50, reconnectMaxMs: 100 }`,
      ]),
    );
    expect(await bus.read(1, SDM630_CURRENTS, 500)).toHaveLength(6);
    await sim.close();
    await expect(bus.read(1, SDM630_CURRENTS, 300)).rejects.toBeInstanceOf(BusError);

    const back = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 }, port });
    onTestFinished(() => back.close());
    await back.set(1, { currentA: [16] });
    const words = await eventually(
      () => bus.read(1, SDM630_CURRENTS, 300).catch(() => undefined),
      10_000,
      'a reading from the meter that came back',
    );
    expect(words.slice(0, 2)).toEqual([0x4180, 0x0000]);
    expect(bus.stats().reconnects).toBe(1);
  });

  it('backs off while connecting keeps failing, instead of hammering the peer', async () => {
    // A port that accepts and drops every connection at once.
    let connections = 0;
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      connections += 1;
      sockets.add(socket);
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as { port: number }).port;
    const bus = openBus(
      settingsFor([
        `{ type: tcp, host: 127.0.0.1, port: ${port}, unitId: 1, reconnectMinMs: 200, reconnectMaxMs: 400 }`,
      ]),
    );

    const until = Date.now() + 1500;
    let failures = 0;
    while (Date.now() < until) {
      await bus.read(1, SDM630_CURRENTS, 100).catch(() => (failures += 1));
    }
    // Without backoff this loop would reconnect hundreds of times; with it, about every 200-400 ms.
    expect(failures).toBeGreaterThan(2);
    expect(connections).toBeLessThan(12);
  });

  it('fails queued requests at once when closed', async () => {
    const sim = await tcpMeters(100);
    const bus = new ModbusBus(settingsFor([`{ type: tcp, host: 127.0.0.1, port: ${sim.port}, unitId: 1 }`]), logger);
    const first = bus.read(1, SDM630_CURRENTS, 1000);
    const queued = bus.read(1, SDM630_CURRENTS, 1000);
    await eventually(() => sim.requests.length === 1, 10_000, 'the first request at the meter');
    await bus.close();
    expect(await first).toHaveLength(6);
    await expect(queued).rejects.toMatchObject({ kind: 'closed' });
    expect(sim.requests).toHaveLength(1);
  });

  it.skipIf(!externalTool('socat'))(
    'reads two RTU meters on one serial line through a pseudo-terminal pair',
    async () => {
      const temp = tempSiteForTest();
      const pty = await openPtyPair(temp.dir);
      onTestFinished(() => pty.close());
      const sim = await MeterSimulator.rtu({
        device: pty.meterSide,
        units: { 1: METER_MODELS.sdm630, 7: METER_MODELS.em340 },
      });
      onTestFinished(() => sim.close());
      await sim.set(1, { energyKWh: 1234.5, currentA: [16, 15.5, 0.25], powerW: 7300 });
      await sim.set(7, { energyKWh: 987.6, currentA: [10.123, 0, 0], powerW: -250.5 });
      const connection = (unitId: number) =>
        `{ type: rtu, device: ${pty.controllerSide}, baudRate: 19200, parity: even, unitId: ${unitId} }`;
      const config = parseConfig(`sites:
  - id: s
    meters:
      - { id: a, chargePointId: A, connectorId: 1, model: sdm630, connection: ${connection(1)} }
      - { id: b, chargePointId: B, connectorId: 1, model: em340, connection: ${connection(7)} }
`);
      const [a, b] = config.sites[0]!.meters;
      const bus = openBus([...busSettingsOf([a!.connection, b!.connection]).values()][0]!);
      expect(bus.settings).toMatchObject({
        key: `rtu:${pty.controllerSide}`,
        interRequestDelayMs: 100,
        unitChangeDelayMs: 200,
      });
      // Both readers queue at once: the bus serves their requests first come, first served.
      const [first, second] = await Promise.all([new MeterReader(bus, a!).read(), new MeterReader(bus, b!).read()]);
      expect(first).toMatchObject({ energyKWh: 1234.5, currentA: [16, 15.5, 0.25], powerW: 7300 });
      expect(second.energyKWh).toBeCloseTo(987.6, 9);
      expect(second.currentA[0]).toBeCloseTo(10.123, 9);
      expect(second.powerW).toBeCloseTo(-250.5, 9);
      expect(sim.requests.map((r) => [r.unitId, r.functionCode, r.address, r.count])).toEqual([
        [1, 4, 0x06, 6],
        [7, 3, 0x0c, 42],
        [1, 4, 0x34, 2],
        [1, 4, 0x48, 2],
      ]);
      expect(sim.maxInFlight).toBe(1);
    },
  );
});

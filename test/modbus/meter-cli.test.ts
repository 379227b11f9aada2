import { execFile } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { busSettingsOf, METER_MODELS, ModbusBus } from '../../src/modbus/index.js';
import { runCli, runCliJson } from '../support/cli.js';
import { externalTool, MeterSimulator, openPtyPair } from '../support/meter-simulator.js';
import { DEBIAN_PYTHON, PymodbusMeter } from '../support/pymodbus-meter.js';
import { tempSiteForTest } from '../support/for-test.js';
import { FAST_BUS, meterConfig, type ConnectionConfig } from './harness.js';

interface ReadJson {
  meterId: string;
  model: string;
  bus: string;
  energyKWh: number;
  currentA: number[];
  powerW?: number;
  requests: number;
  problem?: string;
}

const VALUES = { energyKWh: 1234.5, currentA: [16, 15.5, 0.25], powerW: 7300.5 };
const interop =
  externalTool('mbpoll', ['-V']) && externalTool('socat') && externalTool(DEBIAN_PYTHON, ['-c', 'import pymodbus']);

/**
 * mbpoll (libmodbus) reading SDM630 float32 input registers, PDU addressing, high word first. Returns the values
 * by register address.
 */
function mbpoll(where: string[], address: number, count: number): Promise<Map<number, number>> {
  return new Promise((resolve, reject) => {
    execFile(
      'mbpoll',
      [...where, '-a', '1', '-t', '3:float', '-B', '-0', '-r', String(address), '-c', String(count), '-1', '-o', '2'],
      { timeout: 15_000 },
      (err, stdout) => {
        if (err) return reject(new Error(`mbpoll failed: ${err.message}\n${stdout}`));
        resolve(new Map([...stdout.matchAll(/^\[(\d+)\]:\s+(\S+)$/gm)].map((m) => [Number(m[1]), Number(m[2])])));
      },
    );
  });
}

describe('chargegate meter read / status', () => {
  const withMeter = (connection: ConnectionConfig, extra: Record<string, unknown> = {}) => ({
    sites: [{ id: 's1', meters: [meterConfig(1, connection, extra)], webhooks: [] }],
  });

  function siteWith(connection: ConnectionConfig, extra: Record<string, unknown> = {}) {
    return tempSiteForTest(withMeter(connection, extra));
  }

  async function expectSameAsMbpoll(configPath: string, where: string[]): Promise<void> {
    const { code, data } = await runCliJson<ReadJson>(['meter', 'read', 'm1', '--config', configPath]);
    expect(code).toBe(0);
    expect(data).toMatchObject({ meterId: 'm1', model: 'sdm630', requests: 3, ...VALUES });
    const currents = await mbpoll(where, 0x06, 3);
    const power = await mbpoll(where, 0x34, 1);
    const energy = await mbpoll(where, 0x48, 1);
    // mbpoll prints six significant digits; the values are chosen to need no more.
    expect([currents.get(6), currents.get(8), currents.get(10)]).toEqual(data.currentA);
    expect(power.get(0x34)).toBe(data.powerW);
    expect(energy.get(0x48)).toBe(data.energyKWh);
  }

  it.skipIf(!interop)(
    "reads the same values as mbpoll from Debian's pymodbus over Modbus TCP",
    async () => {
      const meter = await PymodbusMeter.start({ tcp: '127.0.0.1:0' });
      onTestFinished(() => meter.close());
      await meter.set(1, VALUES);
      const site = siteWith({ type: 'tcp', host: '127.0.0.1', port: meter.port });
      await expectSameAsMbpoll(site.configPath, ['-m', 'tcp', '-p', String(meter.port), '127.0.0.1']);
    },
    60_000,
  );

  it.skipIf(!interop)(
    "reads the same values as mbpoll from Debian's pymodbus over Modbus RTU, and not while another process holds the device",
    async () => {
      // The pseudo-terminals live in the site's temp dir, so the config can only be written once they exist.
      const site = tempSiteForTest();
      const pty = await openPtyPair(site.dir);
      onTestFinished(() => pty.close());
      const meter = await PymodbusMeter.start({ rtu: pty.meterSide, baudRate: 19200 });
      onTestFinished(() => meter.close());
      await meter.set(1, VALUES);
      site.write(withMeter({ type: 'rtu', device: pty.controllerSide, baudRate: 19200 }));
      await expectSameAsMbpoll(site.configPath, ['-m', 'rtu', '-b', '19200', '-P', 'none', pty.controllerSide]);

      // While another process (here: this one, as the daemon would) holds the serial device, a reading by hand is
      // refused.
      const config = loadConfig(site.configPath);
      const holder = new ModbusBus(
        [...busSettingsOf(config.sites[0]!.meters.map((m) => m.connection)).values()][0]!,
        createLogger('silent'),
      );
      onTestFinished(() => holder.close());
      await holder.read(1, { functionCode: 4, address: 0x48, count: 2 }, 2000);
      const locked = await runCli(['meter', 'read', 'm1', '--config', site.configPath]);
      expect(locked.code).toBe(1);
      expect(locked.stderr).toContain(
        'Cannot lock port (a running daemon holds this serial device; stop it to read the meter by hand)',
      );
    },
    60_000,
  );

  it("prints a Carlo Gavazzi EM340's values for the installer, read in one request", async () => {
    const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.em340 } });
    onTestFinished(() => sim.close());
    await sim.set(1, { energyKWh: 5678.9, currentA: [31.5, 30, 29.875], powerW: 20_480.3 });
    const site = siteWith({ type: 'tcp', host: '127.0.0.1', port: sim.port }, { model: 'em340' });
    const { code, stdout } = await runCli(['meter', 'read', 'm1', '--config', site.configPath]);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines.slice(0, 4)).toEqual([
      `m1: Carlo Gavazzi EM340 (em340) on tcp://127.0.0.1:${sim.port} unit 1`,
      'energy import  5678.900 kWh',
      'current        L1 31.500 A  L2 30.000 A  L3 29.875 A',
      'power          20480.3 W',
    ]);
    expect(lines[4]).toMatch(/^read with 1 request, [\d.]+ ms average latency$/);
    expect(sim.requests.map((r) => [r.functionCode, r.address, r.count])).toEqual([[3, 0x0c, 42]]);
  }, 60_000);

  it('exits 1 with the reason on a bad reading or a silent meter, and for an unknown meter (not found)', async () => {
    const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630, 2: METER_MODELS.sdm630 } });
    onTestFinished(() => sim.close());
    await sim.setRegisters(1, 4, 0x48, [0x7fc0, 0x0000]);
    await sim.setOnline(2, false);
    const tcp = { type: 'tcp', host: '127.0.0.1', port: sim.port } as const;
    const site = tempSiteForTest({
      sites: [{ id: 's1', meters: [meterConfig(1, tcp), meterConfig(2, tcp)], webhooks: [] }],
    });

    const nan = await runCliJson<ReadJson>(['meter', 'read', 'm1', '--config', site.configPath]);
    expect(nan.code).toBe(1);
    expect(nan.data).toMatchObject({ meterId: 'm1', problem: 'energy is NaN' });

    const silent = await runCli(['meter', 'read', 'm2', '--config', site.configPath]);
    expect(silent.code).toBe(1);
    expect(silent.stderr).toContain(
      `chargegate: meter m2: tcp://127.0.0.1:${sim.port} unit 2 function 4 registers 6+6: no answer within ${FAST_BUS.timeoutMs} ms`,
    );

    const unknown = await runCli(['meter', 'read', 'nope', '--config', site.configPath]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no meter "nope" in the config (meters: m1, m2)');

    const status = await runCli(['meter', 'status', '--config', site.configPath]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^m1\s+MB-1\s+-.*never \(is the daemon running\?\)$/m);
  }, 90_000);
});

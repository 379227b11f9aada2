import { beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { parseConfig, type CircuitMeterConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import type { CircuitMeterReading } from '../../src/modbus/index.js';
import { CircuitPoller } from '../../src/modbus/circuit-poller.js';
import { FakeLine, seconds } from './fake-line.js';

const T0 = Date.parse('2026-11-26T08:00:00.000Z');

describe('CircuitPoller (fake timers)', () => {
  let meter: CircuitMeterConfig;

  beforeEach(() => {
    vi.useFakeTimers({ now: T0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const config = parseConfig(`
sites:
  - id: s1
    meters:
      - id: grid
        role: circuit
        model: sdm630
        connection: { type: tcp, host: 127.0.0.1, port: 502, unitId: 1 }
        pollIntervalMs: 1000
        detection: { offlineAfterS: 30 }
`);
    meter = config.sites[0]!.meters[0] as CircuitMeterConfig;
  });

  function start(): { line: FakeLine; poller: CircuitPoller; readings: CircuitMeterReading[] } {
    const line = new FakeLine(meter);
    const readings: CircuitMeterReading[] = [];
    const poller = new CircuitPoller({
      meter,
      bus: line,
      logger: createLogger('silent'),
      onReading: (r) => readings.push(r),
    });
    onTestFinished(async () => {
      poller.halt();
      await poller.finished();
    });
    poller.start();
    return { line, poller, readings };
  }

  it('hands on every good reading with its current per phase and its power', async () => {
    const { line, poller, readings } = start();
    line.currentA = [10, 12.5, 3];
    await seconds(3);
    expect(readings.length).toBeGreaterThanOrEqual(3);
    expect(readings.at(-1)).toEqual({
      meterId: 'grid',
      at: expect.any(Date),
      online: true,
      currentA: { L1: 10, L2: 12.5, L3: 3 },
      powerW: 25.5 * 230,
    });
    expect(poller.latest()).toEqual(readings.at(-1));
    expect(poller.health()).toMatchObject({
      role: 'circuit',
      status: 'ok',
      online: true,
      lastReading: { currentA: [10, 12.5, 3], powerW: 25.5 * 230 },
      rejected: 0,
    });
    expect(poller.health()).not.toHaveProperty('session');
  });

  it('rejects NaN, negative and absurd currents, and hands none of them on', async () => {
    const { line, poller, readings } = start();
    line.currentA = [10, 10, 10];
    await seconds(2);
    const good = readings.length;
    for (const [currentA, error] of [
      [[Number.NaN, 10, 10], 'bad reading: current L1 is NaN'],
      [[10, -4, 10], 'bad reading: negative current L2 -4 A'],
      [[10, 10, 3e9], 'bad reading: current L3 3000000000 A is beyond any meter'],
    ] as const) {
      line.currentA = [...currentA];
      await seconds(2);
      expect(poller.health()).toMatchObject({ lastError: error, status: 'warning', online: true });
    }
    expect(readings).toHaveLength(good);
    expect(poller.health().rejected).toBeGreaterThanOrEqual(6);
    line.currentA = [8, 8, 8];
    await seconds(2);
    expect(readings.at(-1)).toMatchObject({ online: true, currentA: { L1: 8, L2: 8, L3: 8 } });
    expect(poller.health()).toMatchObject({ status: 'ok' });
  });

  it('goes offline offlineAfterS after its last good reading, says so once, and is back with the next good reading', async () => {
    const { line, poller, readings } = start();
    line.currentA = [20, 20, 20];
    await seconds(3);
    line.silent = true;
    const lastGood = poller.latest()!.at.getTime();
    await seconds(29);
    expect(poller.health()).toMatchObject({ online: true, status: 'warning' });
    expect(readings.filter((r) => !r.online)).toEqual([]);
    await seconds(2);
    // A lost circuit meter is a warning (contract 10.1): its circuit's connectors fall back to their fail-safe.
    expect(poller.health()).toMatchObject({ online: false, status: 'warning', role: 'circuit' });
    const offline = readings.filter((r) => !r.online);
    expect(offline).toEqual([{ meterId: 'grid', at: expect.any(Date), online: false }]);
    expect(offline[0]!.at.getTime() - lastGood).toBeGreaterThanOrEqual(30_000);
    expect(offline[0]!.at.getTime() - lastGood).toBeLessThanOrEqual(31_000);
    expect(poller.latest()).toEqual(offline[0]);

    await seconds(20);
    expect(readings.filter((r) => !r.online)).toHaveLength(1);
    line.silent = false;
    await seconds(2);
    expect(readings.at(-1)).toMatchObject({ online: true, currentA: { L1: 20, L2: 20, L3: 20 } });
    expect(poller.health()).toMatchObject({ online: true, status: 'ok' });
  });

  it('a single-phase meter shows the other phases carrying nothing', async () => {
    meter = { ...meter, model: 'sdm120' };
    const { line, readings } = start();
    line.currentA = [7];
    await seconds(2);
    expect(readings.at(-1)).toMatchObject({ currentA: { L1: 7, L2: 0, L3: 0 } });
  });
});

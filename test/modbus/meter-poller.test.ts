import { beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { parseConfig, sessionMeters, type Config } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { MeterPoller } from '../../src/modbus/meter-poller.js';
import { Site } from '../../src/site/index.js';
import { databasePerTest } from '../support/temp-database.js';
import { FakeLine, seconds } from './fake-line.js';
import { meterEvents, statusTrail } from './harness.js';

const T0 = Date.parse('2026-11-25T08:00:00.000Z');

describe('MeterPoller (fake timers, real site)', () => {
  const t = databasePerTest();
  let poller: MeterPoller | undefined;
  let config: Config;

  beforeEach(() => {
    vi.useFakeTimers({ now: T0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    config = parseConfig(`
sites:
  - id: s1
    meters:
      - id: m1
        chargePointId: MB-1
        connectorId: 1
        model: sdm630
        connection: { type: tcp, host: 127.0.0.1, port: 502, unitId: 1 }
        pollIntervalMs: 1000
        detection: { startCurrentA: 1, startDelayS: 10, stopCurrentA: 0.5, stopDelayS: 60, offlineAfterS: 30 }
`);
  });

  function start(): FakeLine {
    const meter = sessionMeters(config.sites[0]!)[0]!;
    const line = new FakeLine(meter);
    const site = new Site({ db: t.db, config: () => config });
    const started = new MeterPoller({ meter, siteId: 's1', site, db: t.db, bus: line, logger: createLogger('silent') });
    onTestFinished(async () => {
      started.halt();
      await started.finished();
    });
    started.start();
    poller = started;
    return line;
  }

  const transactions = () =>
    t.db
      .prepare<[], { startedAt: string; stoppedAt: string | null; meterStartWh: number; meterStopWh: number | null }>(
        'SELECT started_at AS startedAt, stopped_at AS stoppedAt, meter_start_wh AS meterStartWh, meter_stop_wh AS meterStopWh FROM transactions',
      )
      .all();

  it('starts a session startDelayS after the current rose, dated from the first such reading, and stops it stopDelayS after it fell', async () => {
    const line = start();
    await seconds(5);
    line.currentA = [16, 16, 16];
    // This second's poll is done: the next one, a second later, is the first to see the current.
    const rose = Date.now() + 1000;
    await seconds(9);
    expect(transactions()).toEqual([]);
    await seconds(2);
    expect(transactions()).toEqual([
      { startedAt: new Date(rose).toISOString(), stoppedAt: null, meterStartWh: 1_000_000, meterStopWh: null },
    ]);
    expect(poller!.health().session.phase).toBe('charging');

    line.energyKWh = 1000.05;
    line.currentA = [0, 0, 0];
    const fell = Date.now() + 1000;
    await seconds(59);
    expect(transactions()[0]!.stoppedAt).toBeNull();
    await seconds(2);
    expect(transactions()).toEqual([
      {
        startedAt: new Date(rose).toISOString(),
        stoppedAt: new Date(fell).toISOString(),
        meterStartWh: 1_000_000,
        meterStopWh: 1_000_050,
      },
    ]);
    expect(statusTrail(t.db, 'm1')).toEqual(['Available/NoError', 'Charging/NoError', 'Available/NoError']);
  });

  it('declares a silent meter offline offlineAfterS after its last good reading, keeps its session open, and recovers', async () => {
    const line = start();
    line.currentA = [10, 10, 10];
    await seconds(12);
    expect(transactions()).toHaveLength(1);
    line.silent = true;
    const lastGood = Date.now();
    await seconds(29);
    expect(poller!.health()).toMatchObject({ online: true, status: 'warning' });
    await seconds(2);
    expect(poller!.health()).toMatchObject({
      online: false,
      status: 'critical',
      lastGoodReadingAt: new Date(lastGood).toISOString(),
    });
    expect(statusTrail(t.db, 'm1').at(-1)).toBe('Faulted/PowerMeterFailure');
    expect(transactions()[0]!.stoppedAt).toBeNull();

    line.silent = false;
    await seconds(2);
    expect(poller!.health()).toMatchObject({ online: true, status: 'ok' });
    expect(statusTrail(t.db, 'm1').at(-1)).toBe('Charging/NoError');
    expect(meterEvents(t.db, 'm1', 'StopTransaction')).toEqual([]);
  });
});

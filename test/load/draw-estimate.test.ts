import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { LimitOutcome } from '../../src/load/index.js';
import { DrawEstimate, type DrawingTransaction } from '../../src/load/draw-estimate.js';
import { projectSite } from '../../src/load/site-projection.js';
import { capturedLogger } from '../support/captured-log.js';
import { ManualClock, settled } from './manual-clock.js';

/** Two stations on circuit main (40 A), measured by the meter grid. */
const projected = projectSite(
  parseConfig(`sites:
  - id: s1
    stations:
      - { id: CP001, chargePoints: [{ id: CP001-A, connectors: [1] }] }
      - { id: CP002, chargePoints: [{ id: CP002-A, connectors: [1] }] }
    meters:
      - { id: grid, role: circuit, model: sdm630, connection: { type: tcp, host: 127.0.0.1, unitId: 1 } }
    circuits:
      - { id: main, maxCurrentA: 40, meter: grid, chargePoints: [CP001-A, CP002-A] }
`),
  new Set(),
);
const { site } = projected;
const CP1 = 'CP001-A/1';
const CP2 = 'CP002-A/1';
const REPORT_AFTER_MS = 5_000;
const ESTIMATE_MS = 30_000;

const reading = (a: number) => [{ circuitId: 'main', currentA: { L1: a, L2: a, L3: a } }];

function estimateForTest(answers: Record<string, LimitOutcome> = {}) {
  const clock = new ManualClock();
  const asked: string[] = [];
  const { logger, lines } = capturedLogger();
  const draws = new DrawEstimate({
    clock,
    logger,
    limits: {
      requestDrawReport: (stationId) => {
        asked.push(stationId);
        return Promise.resolve(answers[stationId] ?? 'accepted');
      },
    },
    reportAfterRaiseMs: REPORT_AFTER_MS,
    raiseEstimateMs: ESTIMATE_MS,
  });
  return { clock, asked, lines, draws };
}

/** Both cars open, as transactions 1 and 2, with their stations' last reports. */
function open(cp1?: { currentA: number; atMs: number }, cp2?: { currentA: number; atMs: number }) {
  return new Map<string, DrawingTransaction>([
    [CP1, { id: 1, reported: cp1 }],
    [CP2, { id: 2, reported: cp2 }],
  ]);
}

describe('what the cars draw (draw-estimate.ts)', () => {
  it('is what their stations reported, at most what each may draw now, and unknown without a report', () => {
    const { draws } = estimateForTest();
    draws.read(site, open({ currentA: 16, atMs: 0 }), reading(30), (key) => (key === CP1 ? 10 : undefined));
    // A report older than a lowering says more than the car may draw now.
    expect([draws.drawnA(1), draws.drawnA(2)]).toEqual([10, undefined]);
  });

  it("counts the increase the meter shows since a raise as the raised cars', shared, up to the raise, until a report", async () => {
    const { clock, draws } = estimateForTest();
    const reported = { currentA: 6, atMs: 0 };
    await clock.advance(1000);
    draws.raising(CP1, 1, 15, reading(22));
    draws.raising(CP2, 2, 15, reading(22));
    await clock.advance(1000);
    // The meter shows 10 A more before the stations say so: 5 A each on top of their reports of 6 A.
    draws.read(site, open(reported, reported), reading(32), () => undefined);
    expect([draws.drawnA(1), draws.drawnA(2)]).toEqual([11, 11]);
    // More than the raises: at most the raise.
    draws.read(site, open(reported, reported), reading(60), () => undefined);
    expect([draws.drawnA(1), draws.drawnA(2)]).toEqual([15, 15]);
    // CP001's station reports: its raise ends, its report counts again; CP002's stays counted from the meter.
    await clock.advance(1000);
    const fresh = open({ currentA: 14, atMs: clock.monotonicMs() }, reported);
    draws.settle(fresh, clock.monotonicMs());
    draws.read(site, fresh, reading(32), () => undefined);
    // CP002 alone is raised now: the 10 A increase is all its own, up to its raise.
    expect([draws.drawnA(1), draws.drawnA(2)]).toEqual([14, 15]);
    // The window over, the last report again, however old.
    await clock.advance(ESTIMATE_MS);
    draws.settle(fresh, clock.monotonicMs());
    draws.read(site, fresh, reading(32), () => undefined);
    expect([draws.drawnA(1), draws.drawnA(2)]).toEqual([14, 6]);
  });

  it('shares the increase among cars raised together in proportion to what each raise adds to its report', async () => {
    const { clock, draws } = estimateForTest();
    draws.raising(CP1, 1, 13, reading(26));
    draws.raising(CP2, 2, 13, reading(26));
    await clock.advance(1000);
    // 3 A more for CP001 (reported 10 A), 7 A more for CP002 (reported 6 A): the 10 A the meter shows are theirs.
    draws.read(site, open({ currentA: 10, atMs: 0 }, { currentA: 6, atMs: 0 }), reading(36), () => undefined);
    expect([draws.drawnA(1), draws.drawnA(2)]).toEqual([13, 13]);
  });

  it("asks a raised car's station for a report once the car had time to take it; one that refuses, once until it boots", async () => {
    const { clock, asked, lines, draws } = estimateForTest({ CP002: 'notSupported' });
    const station = (stationId: string) => projected.stations.get(`${stationId}-A/1`)!;
    for (const [key, id] of [
      [CP1, 1],
      [CP2, 2],
    ] as const) {
      draws.raising(key, id, 15, reading(22));
      draws.answered(key, station(key.slice(0, 5)), 15, true);
    }
    await clock.advance(REPORT_AFTER_MS - 1);
    expect(asked).toEqual([]);
    await clock.advance(1);
    expect(asked).toEqual(['CP001', 'CP002']);
    await settled();
    expect(lines.filter((l) => l.msg?.toString().startsWith('station does not report on request'))).toEqual([
      expect.objectContaining({ stationId: 'CP002', outcome: 'notSupported' }),
    ]);

    // Raised again: CP002 is not asked until it boots.
    for (const key of [CP1, CP2]) draws.answered(key, station(key.slice(0, 5)), 15, true);
    await clock.advance(REPORT_AFTER_MS);
    expect(asked).toEqual(['CP001', 'CP002', 'CP001']);
    draws.booted('CP002');
    draws.answered(CP2, station('CP002'), 15, true);
    await clock.advance(REPORT_AFTER_MS);
    expect(asked).toEqual(['CP001', 'CP002', 'CP001', 'CP002']);

    // A raise not taken is no car's: nobody is asked, and nothing is asked after stop().
    draws.answered(CP1, station('CP001'), 15, false);
    draws.answered(CP2, station('CP002'), 15, true);
    draws.stop();
    await clock.advance(REPORT_AFTER_MS);
    expect(asked).toHaveLength(4);
  });
});

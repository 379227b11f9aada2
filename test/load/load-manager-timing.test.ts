import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import {
  LoadManager,
  type LimitOutcome,
  type OpenTransaction,
  type PhaseCurrents,
  type ReportedDraw,
} from '../../src/load/index.js';
import { capturedLogger } from '../support/captured-log.js';
import { baseConfig } from '../support/temp-site.js';
import { ManualClock } from './manual-clock.js';
import { openTransactionOn } from './open-transactions.js';

/*
 * The load controller's shell between readings and answers (docs/configuration/circuits.md#circuits-load-management), where the site
 * scenario (site-scenario.test.ts) found it wrong; isolated here on the LoadManager with its ports played by the
 * test: a meter whose readings arrive when the test says, stations whose reports are what the test says and whose
 * answers take a round trip, and a timer step every 20 ms between readings, as a real meter polled every 200 ms to
 * 1 s leaves. Time is the test's (manual-clock.ts): nothing sleeps.
 */

/** A station's answer to SetChargingProfile comes back after this (loopback: a few ms). */
const ROUND_TRIP_MS = 2;

const LIMIT_A = 40;
const OTHER_A = 10;

const config = parseConfig(
  JSON.stringify({
    ...baseConfig('/tmp/unused'),
    loadManagement: { minCurrentA: 6, raiseAfterS: 0.1, profileValidityS: 300 },
    sites: [
      {
        id: 's1',
        stations: ['CP001', 'CP002'].map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] })),
        meters: [
          {
            id: 'grid',
            role: 'circuit',
            model: 'sdm630',
            connection: { type: 'tcp', host: '127.0.0.1', port: 1502, unitId: 1 },
          },
        ],
        circuits: [{ id: 'main', maxCurrentA: LIMIT_A, meter: 'grid', chargePoints: ['CP001-A', 'CP002-A'] }],
      },
    ],
  }),
);

/** raiseAfterS and a few steps: long enough for a raise to be decided and answered. */
const RAISE_MS = 200;

const CARS: OpenTransaction[] = [openTransactionOn(1, 'CP001'), openTransactionOn(2, 'CP002')];

/**
 * Two cars charging on a 40 A metered circuit, the meter, their reports and their limits in the test's hands; the
 * stations answer a request for a report as `reportAnswers` says (accepted by default) and report only when the test
 * says.
 */
function siteForTest(
  options: {
    reportAfterRaiseMs?: number;
    raiseEstimateMs?: number;
    reportAnswers?: Record<string, LimitOutcome>;
  } = {},
) {
  let readingA: PhaseCurrents = { L1: OTHER_A, L2: OTHER_A, L3: OTHER_A };
  const listeners = new Set<() => void>();
  const reported = new Map<number, ReportedDraw>();
  const sent: Array<{ stationId: string; currentA: number }> = [];
  const asked: Array<{ stationId: string; connectorId: number }> = [];
  const { logger, lines } = capturedLogger();
  const clock = new ManualClock();
  const load = new LoadManager({
    config,
    clock,
    limits: {
      setFailsafe: () => Promise.resolve('accepted'),
      setTransactionLimit: (stationId, limit) => {
        sent.push({ stationId, currentA: limit.currentA });
        return new Promise((resolve) => clock.after(ROUND_TRIP_MS, () => resolve('accepted')));
      },
      requestDrawReport: (stationId, connectorId) => {
        asked.push({ stationId, connectorId });
        return Promise.resolve(options.reportAnswers?.[stationId] ?? 'accepted');
      },
    },
    meters: {
      circuitReadings: () => [{ meterId: 'grid', online: true, currentA: readingA }],
      onCircuitReading: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    transactions: {
      open: () => CARS,
      reportedDraw: (transactionId) => reported.get(transactionId),
      onOpenedOrClosed: () => () => undefined,
    },
    logger,
    stepIntervalMs: 20,
    ...(options.reportAfterRaiseMs !== undefined && { reportAfterRaiseMs: options.reportAfterRaiseMs }),
    ...(options.raiseEstimateMs !== undefined && { raiseEstimateMs: options.raiseEstimateMs }),
  });
  onTestFinished(() => load.stop());
  const allowed = (stationId: string) => sent.filter((s) => s.stationId === stationId).at(-1)?.currentA;
  return {
    clock,
    sent,
    asked,
    lines,
    allowed,
    /** A reading arrives: the other load plus what the cars draw now. */
    read(otherA: number, carsA: number) {
      const a = otherA + carsA;
      readingA = { L1: a, L2: a, L3: a };
      for (const listener of listeners) listener();
    },
    /** Each car's station says what it draws. */
    report(currentA: number) {
      for (const car of CARS) reported.set(car.id, { currentA, atMs: clock.monotonicMs() });
    },
    /** Both cars on (40 - 10) / 2 = 15 A, drawing it, reported and read. */
    async settled() {
      this.report(6);
      this.read(OTHER_A, 12);
      await clock.advance(RAISE_MS);
      expect([allowed('CP001'), allowed('CP002')]).toEqual([15, 15]);
      this.report(15);
      this.read(OTHER_A, 30);
    },
  };
}

describe('limits on their way to the stations', () => {
  it('a step while they are on their way sends nothing again when it decides the same', async () => {
    const site = siteForTest();
    // The first step sends both cars the fail-safe; a reading's step comes before the answers and decides the same.
    site.report(6);
    site.read(OTHER_A, 12);
    await site.clock.advance(50);
    // Each answer used to find the other car's limit marked as outdated by that step, and to step again, which marked
    // the other again: the two stations were sent their limit over and over, one round trip apart.
    expect(site.sent).toHaveLength(2);
  });
});

describe("the cars' draw beside a circuit reading", () => {
  it('steps between two readings do not count a lowering the last reading predates as other load', async () => {
    const site = siteForTest();
    await site.settled();
    // The other load steps up 10 A: both lowered to (40 - 20) / 2 = 10 A at once; the stations say so soon after.
    const from = site.sent.length;
    site.read(OTHER_A + 10, 30);
    await site.clock.advance(RAISE_MS);
    expect([site.allowed('CP001'), site.allowed('CP002')]).toEqual([10, 10]);
    site.report(10);
    // Until the meter's next reading, the timer's steps still see the cars at 15 A in the last one: that is what they
    // drew then, not 10 A (else the other load looks 10 A higher and a car is sent to 0).
    const lowest = () => Math.min(...site.sent.slice(from).map((s) => s.currentA));
    await site.clock.advance(200);
    expect(lowest()).toBe(10);
    site.read(OTHER_A + 10, 20);
    await site.clock.advance(200);
    expect([site.allowed('CP001'), site.allowed('CP002'), lowest()]).toEqual([10, 10, 10]);
  });

  // Issue 29: a station reports its car's draw every MeterValueSampleInterval (often a minute or more), the meter
  // every poll. Between a raise and the raised car's next report the meter shows the car taking its raise while its
  // report still says less; taken for other load, it lowered the car at the next reading and raised it again after
  // raiseAfterS, a saw-tooth for as long as reports lagged. The meter's increase since the raise is now the car's, up
  // to its raise, until its station reports.
  it('a raise the meter shows before the raised car reports it is not taken for other load', async () => {
    const site = siteForTest();
    site.report(6);
    site.read(OTHER_A, 12);
    await site.clock.advance(RAISE_MS);
    expect([site.allowed('CP001'), site.allowed('CP002')]).toEqual([15, 15]);
    // The cars take their 15 A; their stations say so at their next periodic report, not yet.
    const from = site.sent.length;
    for (let i = 0; i < 3; i += 1) {
      site.read(OTHER_A, 30);
      await site.clock.advance(50);
    }
    expect(site.sent.slice(from)).toEqual([]);
  });

  it('a step in the other load with a raise the cars do not take is answered once their stations report', async () => {
    const site = siteForTest();
    site.report(6);
    site.read(OTHER_A, 12);
    await site.clock.advance(RAISE_MS);
    expect([site.allowed('CP001'), site.allowed('CP002')]).toEqual([15, 15]);
    // The cars stay at 6 A and the other load steps 10 A: the meter's 10 A more count as the raised cars' (5 A each,
    // within their raises), and the 9 A each leaves unused covers it; their reports end that.
    site.read(OTHER_A + 10, 12);
    await site.clock.advance(50);
    site.report(6);
    site.read(OTHER_A + 10, 12);
    await site.clock.advance(RAISE_MS);
    expect([site.allowed('CP001'), site.allowed('CP002')]).toEqual([10, 10]);
  });

  it('a raise never reported counts from the meter for raiseEstimateMs only; a station asked once when it will not report', async () => {
    const site = siteForTest({
      reportAfterRaiseMs: 0,
      raiseEstimateMs: 1000,
      reportAnswers: { CP002: 'notSupported' },
    });
    site.report(6);
    site.read(OTHER_A, 12);
    await site.clock.advance(RAISE_MS);
    expect([site.allowed('CP001'), site.allowed('CP002')]).toEqual([15, 15]);
    // Each station is asked for a report after the raise; neither reports, the cars take 15 A.
    await site.clock.advance(RAISE_MS);
    expect(site.asked).toEqual([
      { stationId: 'CP001', connectorId: 1 },
      { stationId: 'CP002', connectorId: 1 },
    ]);
    const from = site.sent.length;
    for (let i = 0; i < 3; i += 1) {
      site.read(OTHER_A, 30);
      await site.clock.advance(50);
    }
    expect(site.sent.slice(from)).toEqual([]);
    // The window over, the reports of 6 A count again: 40 - 12 = 28 A of other load, (40 - 28) / 2 = 6 A each.
    await site.clock.advance(1000);
    site.read(OTHER_A, 30);
    await site.clock.advance(50);
    expect([site.allowed('CP001'), site.allowed('CP002')]).toEqual([6, 6]);
    // The cars at 6 A: raised again, and only the station that reports on request is asked again.
    site.read(OTHER_A, 12);
    await site.clock.advance(RAISE_MS);
    expect([site.allowed('CP001'), site.allowed('CP002')]).toEqual([15, 15]);
    await site.clock.advance(RAISE_MS);
    expect(site.asked.filter((a) => a.stationId === 'CP001')).toHaveLength(2);
    expect(site.asked.filter((a) => a.stationId === 'CP002')).toHaveLength(1);
    expect(site.lines.filter((l) => l.msg?.toString().startsWith('station does not report on request'))).toEqual([
      expect.objectContaining({ stationId: 'CP002', outcome: 'notSupported' }),
    ]);
  });
});

import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { LoadManager, type OpenTransaction, type PhaseCurrents } from '../../src/load/index.js';
import { capturedLogger } from '../support/captured-log.js';
import { baseConfig } from '../support/temp-site.js';

/*
 * The load controller's shell between readings and answers (README "Circuits (load management)"), where the site
 * scenario (site-scenario.test.ts) found it wrong; isolated here on the LoadManager with its ports played by the
 * test: a meter whose readings arrive when the test says, stations whose reports are what the test says and whose
 * answers take a round trip, and a timer step every 20 ms between readings, as a real meter polled every 200 ms to
 * 1 s leaves.
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

const CARS: OpenTransaction[] = [
  { id: 1, stationId: 'CP001', chargePointId: 'CP001-A', connectorId: 1, stationTransactionId: null },
  { id: 2, stationId: 'CP002', chargePointId: 'CP002-A', connectorId: 1, stationTransactionId: null },
];

/** Two cars charging on a 40 A metered circuit, the meter, their reports and their limits in the test's hands. */
function siteForTest() {
  let readingA: PhaseCurrents = { L1: OTHER_A, L2: OTHER_A, L3: OTHER_A };
  const listeners = new Set<() => void>();
  const reportedA = new Map<number, number>();
  const sent: Array<{ stationId: string; currentA: number }> = [];
  const load = new LoadManager({
    config,
    limits: {
      setFailsafe: () => Promise.resolve('accepted'),
      setTransactionLimit: (stationId, limit) => {
        sent.push({ stationId, currentA: limit.currentA });
        return new Promise((resolve) => setTimeout(() => resolve('accepted'), ROUND_TRIP_MS));
      },
      requestDrawReport: () => Promise.resolve('accepted'),
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
      drawnA: (transactionId) => reportedA.get(transactionId),
      onOpenedOrClosed: () => () => undefined,
    },
    logger: capturedLogger().logger,
    stepIntervalMs: 20,
  });
  onTestFinished(() => load.stop());
  const allowed = (stationId: string) => sent.filter((s) => s.stationId === stationId).at(-1)?.currentA;
  return {
    sent,
    allowed,
    /** A reading arrives: the other load plus what the cars draw now. */
    read(otherA: number, carsA: number) {
      const a = otherA + carsA;
      readingA = { L1: a, L2: a, L3: a };
      for (const listener of listeners) listener();
    },
    /** Each car's station says what it draws. */
    report(currentA: number) {
      for (const car of CARS) reportedA.set(car.id, currentA);
    },
    /** Both cars on (40 - 10) / 2 = 15 A, drawing it, reported and read. */
    async settled() {
      this.report(6);
      this.read(OTHER_A, 12);
      await expect.poll(() => [allowed('CP001'), allowed('CP002')]).toEqual([15, 15]);
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
    await new Promise((resolve) => setTimeout(resolve, 50));
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
    await expect.poll(() => [site.allowed('CP001'), site.allowed('CP002')]).toEqual([10, 10]);
    site.report(10);
    // Until the meter's next reading, the timer's steps still see the cars at 15 A in the last one: that is what they
    // drew then, not 10 A (else the other load looks 10 A higher and a car is sent to 0).
    const lowest = () => Math.min(...site.sent.slice(from).map((s) => s.currentA));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lowest()).toBe(10);
    site.read(OTHER_A + 10, 20);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect([site.allowed('CP001'), site.allowed('CP002'), lowest()]).toEqual([10, 10, 10]);
  });

  // Open (issue 29): a station reports its car's draw every MeterValueSampleInterval (often a minute or more), the
  // meter every poll. Between a raise and the raised car's next report, the meter shows the car taking its raise
  // while its report still says less: the controller cannot tell that from other load growing, counts it as such
  // (the safe side) and lowers at the next reading, then raises again after raiseAfterS: the shares saw-tooth for as
  // long as reports lag the meter. A fix needs a decision (ask the station for a report after a raise, or trust the
  // raised car to take its new limit and risk a step hidden in it), so this test says the bug is there: it fails the
  // day the controller holds a raise against a report it has not had yet.
  it.fails('a raise the meter shows before the raised car reports it is not taken for other load', async () => {
    const site = siteForTest();
    site.report(6);
    site.read(OTHER_A, 12);
    await expect.poll(() => [site.allowed('CP001'), site.allowed('CP002')]).toEqual([15, 15]);
    // The cars take their 15 A; their stations say so at their next periodic report, not yet.
    const from = site.sent.length;
    for (let i = 0; i < 3; i += 1) {
      site.read(OTHER_A, 30);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(site.sent.slice(from)).toEqual([]);
  });
});

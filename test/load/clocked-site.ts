import { onTestFinished } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { LoadManager, type OpenTransaction, type ReportedDraw } from '../../src/load/index.js';
import { capturedLogger } from '../support/captured-log.js';
import { baseConfig } from '../support/temp-site.js';
import { ManualClock } from './manual-clock.js';
import { openTransactionOn } from './open-transactions.js';

/** A limit a station received: which, how much, and when (the manual clock's ms). */
export interface Received {
  stationId: string;
  currentA: number;
  atMs: number;
}

/**
 * Stations CP001..CP00n, one connector each, on one metered circuit `main` of limitA, in the test's hands on a manual
 * clock: the meter reads what the test says, a station reports its car's draw when the test says, answers every limit
 * at once (accepted), and the load manager steps every second as in the daemon.
 */
export function clockedSite(options: { stations: number; limitA: number; raiseAfterS: number }) {
  const stationIds = Array.from({ length: options.stations }, (_, i) => `CP00${i + 1}`);
  const config = parseConfig(
    JSON.stringify({
      ...baseConfig('/tmp/unused'),
      loadManagement: { minCurrentA: 6, raiseAfterS: options.raiseAfterS, profileValidityS: 300 },
      sites: [
        {
          id: 's1',
          stations: stationIds.map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] })),
          meters: [
            {
              id: 'grid',
              role: 'circuit',
              model: 'sdm630',
              connection: { type: 'tcp', host: '127.0.0.1', port: 1502, unitId: 1 },
            },
          ],
          circuits: [
            { id: 'main', maxCurrentA: options.limitA, meter: 'grid', chargePoints: stationIds.map((id) => `${id}-A`) },
          ],
        },
      ],
    }),
  );
  const clock = new ManualClock();
  let readingA = 0;
  const readingListeners = new Set<() => void>();
  const openListeners = new Set<(transactionId: number) => void>();
  const open = new Map<number, OpenTransaction>();
  const reported = new Map<number, ReportedDraw>();
  const received: Received[] = [];
  const { logger, lines } = capturedLogger();
  const load = new LoadManager({
    config,
    clock,
    limits: {
      setFailsafe: () => Promise.resolve('accepted'),
      setTransactionLimit: (stationId, limit) => {
        received.push({ stationId, currentA: limit.currentA, atMs: clock.monotonicMs() });
        return Promise.resolve('accepted');
      },
      requestDrawReport: () => Promise.resolve('accepted'),
    },
    meters: {
      circuitReadings: () => [
        { meterId: 'grid', online: true, currentA: { L1: readingA, L2: readingA, L3: readingA } },
      ],
      onCircuitReading: (listener) => {
        readingListeners.add(listener);
        return () => readingListeners.delete(listener);
      },
    },
    transactions: {
      open: () => [...open.values()],
      reportedDraw: (transactionId) => reported.get(transactionId),
      onOpenedOrClosed: (listener) => {
        openListeners.add(listener);
        return () => openListeners.delete(listener);
      },
    },
    logger,
  });
  onTestFinished(() => load.stop());
  return {
    clock,
    load,
    lines,
    stationIds,
    /** Every limit the station received, in order. */
    receivedBy: (stationId: string) => received.filter((r) => r.stationId === stationId),
    /** The meter reads this per phase. */
    read(currentA: number) {
      readingA = currentA;
      for (const listener of readingListeners) listener();
    },
    /** A car starts charging on the station (transaction id = its number), its start answered. */
    start(stationId: string) {
      const t = openTransactionOn(stationIds.indexOf(stationId) + 1, stationId);
      open.set(t.id, t);
      for (const listener of openListeners) listener(t.id);
    },
    /** The station reports its car's draw per phase. */
    report(stationId: string, currentA: number) {
      reported.set(stationIds.indexOf(stationId) + 1, { currentA, atMs: clock.monotonicMs() });
    },
  };
}

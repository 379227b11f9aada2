import { formatZonedTimestamp } from '../../src/time/index.js';
import type { MovableLoadClock } from '../support/load-clock.js';
import type { SimulatedStation } from '../support/station.js';

/** loadManagement.raiseAfterS of these tests: a raise shows this long after the headroom does. */
export const RAISE_AFTER_S = 2;

/**
 * Two sites with a circuit each: s1's `main` (24 A) carries CP001-A and CP002-A, s2's `garage` (16 A) CP003-A.
 * Groups at every scope level, to see who may set a circuit's limit.
 */
export function temporaryLimitSite(): Record<string, unknown> {
  const station = (id: string) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] });
  return {
    sites: [
      {
        id: 's1',
        stations: [station('CP001'), station('CP002')],
        meters: [],
        webhooks: [],
        circuits: [{ id: 'main', maxCurrentA: 24, chargePoints: ['CP001-A', 'CP002-A'] }],
      },
      {
        id: 's2',
        stations: [station('CP003')],
        meters: [],
        webhooks: [],
        circuits: [{ id: 'garage', maxCurrentA: 16, chargePoints: ['CP003-A'] }],
      },
    ],
    groups: [
      { id: 'ops', scope: 'company:acme', permissions: ['charge-points:read', 'charge-points:control'] },
      { id: 'viewer-s1', scope: 'site:s1', permissions: ['charge-points:read'] },
      { id: 'control-s1', scope: 'site:s1', permissions: ['charge-points:control'] },
      { id: 'control-s2', scope: 'site:s2', permissions: ['charge-points:control'] },
      { id: 'control-cp001', scope: 'station:CP001', permissions: ['charge-points:read', 'charge-points:control'] },
    ],
    loadManagement: { minCurrentA: 6, raiseAfterS: RAISE_AFTER_S, profileValidityS: 300 },
    ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: 500, changePollMs: 200 },
  };
}

/** An instant as a partner would send it: ISO 8601 with milliseconds and the Brussels offset. */
export function inBrussels(at: Date | number): string {
  return formatZonedTimestamp(new Date(at), 'Europe/Brussels');
}

/** Boots the stations and starts a transaction on connector 1 of each. */
export async function charging(...stations: SimulatedStation[]): Promise<void> {
  for (const [i, station] of stations.entries()) {
    await station.boot();
    await station.startTransaction({ connectorId: 1, idTag: `TAG-${i + 1}` });
  }
}

/** What the stations' profiles allow on connector 1 at the load clock's now (the daemon's loadClock). */
export const limitsOn =
  (clock: MovableLoadClock, ...stations: Array<Pick<SimulatedStation, 'limitA'>>) =>
  (): Array<number | undefined> =>
    stations.map((s) => s.limitA(1, clock.now()));

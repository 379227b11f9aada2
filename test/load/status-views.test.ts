import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { constant, controlLoad, INITIAL_CONTROLLER_STATE } from '../../src/load/index.js';
import { projectSite } from '../../src/load/site-projection.js';
import { compositesOf, loadHealth, statusOf, type LastStep } from '../../src/load/status-views.js';

/** main (40 A, metered) with CP001-A and a Modbus charger MB-1 on it; CP001 also has CP001-B on garage below it. */
const projected = projectSite(
  parseConfig(`sites:
  - id: s1
    stations:
      - { id: CP001, chargePoints: [{ id: CP001-A, connectors: [1] }, { id: CP001-B, connectors: [2] }] }
    meters:
      - { id: grid, role: circuit, model: sdm630, connection: { type: tcp, host: 127.0.0.1, unitId: 1 } }
      - { id: mb1, chargePointId: MB-1, connectorId: 1, model: sdm120, connection: { type: tcp, host: 127.0.0.1, unitId: 2 } }
    chargePoints:
      - { id: MB-1, maxCurrentA: 16, phases: 1, phase: L1 }
    circuits:
      - { id: main, maxCurrentA: 40, meter: grid, chargePoints: [CP001-A, MB-1] }
      - { id: garage, parent: main, maxCurrentA: 20, chargePoints: [CP001-B] }
`),
  new Set(),
);

/** One step with CP001-A charging (transaction 7, drawing 6 A) and the meter reading readingA per phase (none: lost). */
function lastStep(readingA: number | undefined): LastStep {
  const readings =
    readingA === undefined ? [] : [{ circuitId: 'main', currentA: { L1: readingA, L2: readingA, L3: readingA } }];
  const sessions = [{ connectorKey: 'CP001-A/1', drawnA: 6 }];
  const step = controlLoad(projected.site, { atMs: 0, readings, sessions }, INITIAL_CONTROLLER_STATE);
  return {
    projected,
    site: projected.site,
    circuits: step.circuits,
    decisions: step.connectors,
    sessions: new Map([['CP001-A/1', { transactionId: 7, drawnA: 6 }]]),
    applied: new Map(),
  };
}

const WINDOW = { fromMs: Date.parse('2026-11-29T06:00:00Z'), toMs: Date.parse('2026-11-29T06:05:00Z') };

describe('the views of the last step (status-views.ts)', () => {
  it('shows each circuit with what its charging connectors may draw, and each connector, idle or not', () => {
    const { circuits, connectors } = statusOf(lastStep(16));
    expect(circuits.map((c) => [c.circuitId, c.siteId, c.meter, c.meterId, c.maxCurrentA, c.allowedA.L1])).toEqual([
      // The car starts on the fail-safe (6 A), on main; garage has none charging.
      ['main', 's1', 'ok', 'grid', 40, 6],
      ['garage', 's1', 'none', undefined, 20, 0],
    ]);
    expect(connectors).toEqual([
      {
        siteId: 's1',
        circuitId: 'main',
        chargePointId: 'CP001-A',
        connectorId: 1,
        stationId: 'CP001',
        state: 'sharing',
        allowedA: 6,
        drawnA: 6,
        transactionId: 7,
      },
      { siteId: 's1', circuitId: 'main', chargePointId: 'MB-1', connectorId: 1, state: 'idle' },
      {
        siteId: 's1',
        circuitId: 'garage',
        chargePointId: 'CP001-B',
        connectorId: 2,
        stationId: 'CP001',
        state: 'idle',
      },
    ]);
  });

  it('reports load as warning naming a circuit whose meter is lost', () => {
    expect(loadHealth(() => lastStep(16).circuits).report()).toEqual({ status: 'ok' });
    expect(loadHealth(() => lastStep(undefined).circuits).report()).toEqual({
      status: 'warning',
      circuitsWithoutMeter: ['main'],
    });
  });

  it("gives a charging connector the lower of the CSMS's schedule and its limit, an idle one the fail-safe, a refusing one none", () => {
    const failsafe = constant(WINDOW, 6);
    const sources = {
      failsafe,
      open: [{ id: 7, chargePointId: 'CP001-A', connectorId: 1, startedAt: new Date(WINDOW.fromMs).toISOString() }],
      uncontrolled: () => false,
      flat: false,
      validityMs: 300_000,
      csmsSchedules: { scheduleOf: () => constant(WINDOW, 4), onChange: () => () => {} },
    };
    expect(compositesOf(lastStep(16), 'CP001', WINDOW, sources)).toEqual([
      { connectorId: 1, phases: 3, composite: constant(WINDOW, 4) },
      { connectorId: 2, phases: 3, composite: failsafe },
    ]);
    expect(
      compositesOf(lastStep(16), 'CP001', WINDOW, { ...sources, uncontrolled: (key) => key === 'CP001-B/2' })[1],
    ).toEqual({ connectorId: 2, phases: 3 });
    // A station load management does not manage has no fail-safe here: no composites.
    expect(compositesOf(lastStep(16), 'CP009', WINDOW, { ...sources, failsafe: undefined })).toEqual([]);
  });
});

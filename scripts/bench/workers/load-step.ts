import {
  controlLoad,
  INITIAL_CONTROLLER_STATE,
  PHASES,
  type ControllerState,
  type LoadSite,
  type Observation,
} from '../../../src/load/index.js';
import { benchCircuits, OTHER_HIGH_A, OTHER_LOW_A } from '../load-site.js';
import { nowMs, percentile } from '../measure.js';
import { serveWorker } from '../worker-protocol.js';

/**
 * Scenario 8's cost of one controller step: chargegate's pure core (controlLoad) on the scenario's site, every
 * connector charging, the other load stepping between two readings (so shares move and raises wait), against the
 * simplest controller that keeps nested limits (each circuit's headroom split equally among the connectors below it,
 * each connector the least of its circuits' splits): no fairness, damping, rotation, dead band or fail-safe.
 */
export const loadStepApi = {
  measure(payload: { connectors: number; batches: number; stepsPerBatch: number }): {
    controlLoadUs: number;
    naiveUs: number;
  } {
    const site = siteOf(payload.connectors);
    let state: ControllerState = INITIAL_CONTROLLER_STATE;
    let atMs = 0;
    // Every car reports 6 A, which the meter sees beside the other load; 5 readings a second.
    const observation = (i: number): Observation => {
      atMs += 200;
      const a = (Math.floor(i / 20) % 2 === 0 ? OTHER_LOW_A : OTHER_HIGH_A) + 6 * site.connectors.length;
      return {
        atMs,
        readings: [{ circuitId: 'main', currentA: { L1: a, L2: a, L3: a } }],
        sessions: site.connectors.map((k) => ({ connectorKey: k.id, drawnA: 6 })),
      };
    };
    const chargegate = timePerStep(payload, (i) => {
      state = controlLoad(site, observation(i), state).state;
    });
    const naive = timePerStep(payload, (i) => naiveShares(site, observation(i)));
    return { controlLoadUs: chargegate, naiveUs: naive };
  },
};

/** Median over batches of the time per step, in µs, after a warm-up batch. */
function timePerStep(payload: { batches: number; stepsPerBatch: number }, step: (i: number) => void): number {
  let i = 0;
  const batch = () => {
    const startedAt = nowMs();
    for (let n = 0; n < payload.stepsPerBatch; n += 1) step(i++);
    return ((nowMs() - startedAt) * 1000) / payload.stepsPerBatch;
  };
  batch();
  return percentile(
    Array.from({ length: payload.batches }, () => batch()),
    50,
  )!;
}

function siteOf(connectors: number): LoadSite {
  const circuits = benchCircuits(connectors);
  return {
    circuits: circuits.map(({ id, parent, maxCurrentA, metered }) => ({
      id,
      ...(parent !== undefined && { parent }),
      maxCurrentA,
      failsafeCurrentA: 6,
      metered,
    })),
    connectors: circuits.flatMap((c) =>
      c.chargePoints.map((cp) => ({
        id: `${cp}/1`,
        circuitId: c.id,
        maxCurrentA: 32,
        controllable: true,
        phases: 3 as const,
      })),
    ),
    settings: { minCurrentA: 6, raiseAfterS: 1 },
  };
}

/** The baseline: equal splits of each circuit's headroom, the least of a connector's circuits, rounded down. */
function naiveShares(site: LoadSite, observed: Observation): Map<string, number> {
  const readings = new Map(observed.readings.map((r) => [r.circuitId, r.currentA]));
  const drawn = new Map(observed.sessions.map((s) => [s.connectorKey, s.drawnA ?? 0]));
  const ancestry = (circuitId: string | undefined): string[] => {
    const circuit = site.circuits.find((c) => c.id === circuitId);
    return circuit ? [circuit.id, ...ancestry(circuit.parent)] : [];
  };
  const splitA = new Map(
    site.circuits.map((circuit) => {
      const below = site.connectors.filter((k) => ancestry(k.circuitId).includes(circuit.id));
      const measured = readings.get(circuit.id);
      const otherA = measured
        ? Math.max(...PHASES.map((p) => measured[p])) - below.reduce((sum, k) => sum + (drawn.get(k.id) ?? 0), 0)
        : 0;
      return [circuit.id, (circuit.maxCurrentA - Math.max(0, otherA)) / Math.max(1, below.length)];
    }),
  );
  return new Map(
    site.connectors.map((k) => {
      const shareA = Math.min(k.maxCurrentA, ...ancestry(k.circuitId).map((id) => splitA.get(id) ?? 0));
      return [k.id, Math.floor(shareA * 10) / 10];
    }),
  );
}

export type LoadStepApi = typeof loadStepApi;

serveWorker(loadStepApi);

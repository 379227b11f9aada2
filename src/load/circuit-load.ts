import {
  PHASES,
  type CircuitFacts,
  type CircuitLoad,
  type ConnectorFacts,
  type LoadSite,
  type Observation,
  type Phase,
  type PhaseCurrents,
} from './types.js';

/** The default failsafeCurrentA (docs/configuration/circuits.md#circuits-load-management), for a tree where no circuit sets one. */
const DEFAULT_FAILSAFE_A = 6;
/**
 * maxPowerW becomes a current summed over the phases at the nominal 230 V per phase (power factor 1: a load drawing
 * reactive current is over-counted, never under).
 */
export const VOLTS_PER_PHASE = 230;
/** Floating-point sums of tenths of amperes: a limit met to within this is met. */
export const EPSILON_A = 1e-9;

/**
 * One bound the sharing connectors must keep together: a circuit's phase (each connector on it counts once), or
 * its maxPowerW (a three-phase connector counts three times). capacityA is what the circuit leaves once its other
 * load and the fail-safe allowances are counted.
 */
export interface Limit {
  capacityA: number;
  weights: ReadonlyMap<string, number>;
}

/** What one observation of the site means for sharing: who shares, who is fixed, what each circuit leaves. */
export interface LoadModel {
  /** Charging connectors the controller shares among (controllable, no lost meter above), in site order. */
  sharing: ConnectorFacts[];
  /** Charging connectors below a lost meter, with their fail-safe allowance. */
  failsafeA: ReadonlyMap<string, number>;
  /** Charging connectors that take no profile. */
  uncontrolled: ConnectorFacts[];
  limits: Limit[];
  circuits: CircuitLoad[];
}

export function loadsPhase(connector: ConnectorFacts, phase: Phase): boolean {
  return connector.phases === 3 || connector.phase === phase;
}

/**
 * The fail-safe a connector's TxDefaultProfile carries: its circuit's failsafeCurrentA or the nearest one above, at
 * most its maxCurrentA.
 */
export function failsafeOf(site: LoadSite, connector: ConnectorFacts): number {
  for (const circuit of ancestry(site, connector.circuitId)) {
    if (circuit.failsafeCurrentA !== undefined) return Math.min(circuit.failsafeCurrentA, connector.maxCurrentA);
  }
  return Math.min(DEFAULT_FAILSAFE_A, connector.maxCurrentA);
}

export function loadModel(site: LoadSite, observed: Observation): LoadModel {
  const readings = new Map(observed.readings.map((r) => [r.circuitId, r.currentA]));
  const sessions = new Map(observed.sessions.map((s) => [s.connectorKey, s]));
  const lost = (circuit: CircuitFacts) => circuit.metered && !readings.has(circuit.id);
  const charging = site.connectors.filter((k) => sessions.has(k.id));
  const failsafeA = new Map(
    charging
      .filter((k) => k.controllable && ancestry(site, k.circuitId).some(lost))
      .map((k) => [k.id, failsafeOf(site, k)]),
  );
  const sharing = charging.filter((k) => k.controllable && !failsafeA.has(k.id));
  const below = new Map(site.circuits.map((c) => [c.id, connectorsBelow(site, c.id)]));

  /**
   * Measured minus what the managed connectors draw; without a working meter, uncontrolled connectors at their maximum
   * plus what the circuits below carry.
   */
  const otherLoad = (circuit: CircuitFacts, phase: Phase): number => {
    const measured = readings.get(circuit.id);
    if (circuit.metered && measured) {
      const drawn = (below.get(circuit.id) ?? [])
        .filter((k) => k.controllable && loadsPhase(k, phase))
        .reduce((sum, k) => sum + (sessions.get(k.id)?.drawnA ?? 0), 0);
      return Math.max(0, measured[phase] - drawn);
    }
    const uncontrolled = site.connectors
      .filter((k) => !k.controllable && k.circuitId === circuit.id && loadsPhase(k, phase))
      .reduce((sum, k) => sum + k.maxCurrentA, 0);
    return site.circuits
      .filter((c) => c.parent === circuit.id)
      .reduce((sum, c) => sum + otherLoad(c, phase), uncontrolled);
  };

  const limits: Limit[] = [];
  const circuits = site.circuits.map((circuit): CircuitLoad => {
    const on = below.get(circuit.id) ?? [];
    const otherA = phaseCurrents((p) => otherLoad(circuit, p));
    const fixedA = phaseCurrents(
      (p) => otherA[p] + on.filter((k) => loadsPhase(k, p)).reduce((sum, k) => sum + (failsafeA.get(k.id) ?? 0), 0),
    );
    const sharers = on.filter((k) => sharing.includes(k));
    for (const p of PHASES) {
      const weights = new Map(sharers.filter((k) => loadsPhase(k, p)).map((k) => [k.id, 1]));
      if (weights.size > 0) limits.push({ capacityA: Math.max(0, circuit.maxCurrentA - fixedA[p]), weights });
    }
    if (circuit.maxPowerW !== undefined && sharers.length > 0) {
      const fixedTotalA = PHASES.reduce((sum, p) => sum + fixedA[p], 0);
      limits.push({
        capacityA: Math.max(0, circuit.maxPowerW / VOLTS_PER_PHASE - fixedTotalA),
        weights: new Map(sharers.map((k) => [k.id, k.phases])),
      });
    }
    const measuredA = readings.get(circuit.id);
    return {
      circuitId: circuit.id,
      meter: !circuit.metered ? 'none' : measuredA ? 'ok' : 'lost',
      ...(circuit.metered && measuredA ? { measuredA } : {}),
      otherA,
      headroomA: circuit.maxCurrentA - Math.max(...PHASES.map((p) => fixedA[p])),
    };
  });

  return { sharing, failsafeA, uncontrolled: charging.filter((k) => !k.controllable), limits, circuits };
}

/** Whether allowances (absent: 0) overstep a limit. */
export function oversteps(limits: readonly Limit[], allowedA: ReadonlyMap<string, number>): boolean {
  return limits.some(
    (limit) =>
      [...limit.weights].reduce((sum, [id, weight]) => sum + weight * (allowedA.get(id) ?? 0), 0) >
      limit.capacityA + EPSILON_A,
  );
}

/** The circuit and those above it, nearest first. */
function ancestry(site: LoadSite, circuitId: string): CircuitFacts[] {
  const chain: CircuitFacts[] = [];
  for (let id: string | undefined = circuitId; id !== undefined;) {
    const circuit = site.circuits.find((c) => c.id === id);
    if (!circuit) break;
    chain.push(circuit);
    id = circuit.parent;
  }
  return chain;
}

/** The connectors on a circuit and on the circuits below it. */
export function connectorsBelow(site: LoadSite, circuitId: string): ConnectorFacts[] {
  return site.connectors.filter((k) => ancestry(site, k.circuitId).some((c) => c.id === circuitId));
}

export function phaseCurrents(of: (phase: Phase) => number): PhaseCurrents {
  return { L1: of('L1'), L2: of('L2'), L3: of('L3') };
}

import type {
  CircuitFacts,
  ConnectorDecision,
  ConnectorFacts,
  LoadSite,
  Observation,
  Phase,
} from '../../src/load/index.js';

/**
 * Contract 10.1 written out a second way, plainly and slowly, to judge the controller by: what each circuit must
 * leave for what chargegate does not allow, and whether a set of allowances fits.
 */
const PHASES: Phase[] = ['L1', 'L2', 'L3'];
const VOLTS = 230;
const TOLERANCE = 1e-6;

export function loadsPhase(k: ConnectorFacts, p: Phase): boolean {
  return k.phases === 3 || k.phase === p;
}

export function subtreeIds(site: LoadSite, circuitId: string): Set<string> {
  const ids = new Set([circuitId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const c of site.circuits) {
      if (c.parent !== undefined && ids.has(c.parent) && !ids.has(c.id)) {
        ids.add(c.id);
        grew = true;
      }
    }
  }
  return ids;
}

function ancestry(site: LoadSite, circuitId: string): CircuitFacts[] {
  const chain: CircuitFacts[] = [];
  for (let c = site.circuits.find((x) => x.id === circuitId); c; c = site.circuits.find((x) => x.id === c?.parent))
    chain.push(c);
  return chain;
}

export function meterLost(site: LoadSite, observed: Observation, c: CircuitFacts): boolean {
  return c.metered && !observed.readings.some((r) => r.circuitId === c.id);
}

/** Connectors that must run at their fail-safe: managed, charging, below a circuit whose meter is lost. */
export function failsafeOf(site: LoadSite, observed: Observation, k: ConnectorFacts): number | undefined {
  if (!k.controllable || !observed.sessions.some((s) => s.connectorKey === k.id)) return undefined;
  const chain = ancestry(site, k.circuitId);
  if (!chain.some((c) => meterLost(site, observed, c))) return undefined;
  const failsafe = chain.find((c) => c.failsafeCurrentA !== undefined)?.failsafeCurrentA ?? 6;
  return Math.min(failsafe, k.maxCurrentA);
}

/**
 * What circuit `c` carries on phase `p` that chargegate does not allow: measured other load, or uncontrolled connectors
 * at their maximum.
 */
export function otherLoad(site: LoadSite, observed: Observation, c: CircuitFacts, p: Phase): number {
  const reading = observed.readings.find((r) => r.circuitId === c.id);
  if (c.metered && reading) {
    const below = subtreeIds(site, c.id);
    const drawn = site.connectors
      .filter((k) => k.controllable && below.has(k.circuitId) && loadsPhase(k, p))
      .reduce((sum, k) => sum + (observed.sessions.find((s) => s.connectorKey === k.id)?.drawnA ?? 0), 0);
    return Math.max(0, reading.currentA[p] - drawn);
  }
  const uncontrolled = site.connectors
    .filter((k) => !k.controllable && k.circuitId === c.id && loadsPhase(k, p))
    .reduce((sum, k) => sum + k.maxCurrentA, 0);
  return site.circuits
    .filter((child) => child.parent === c.id)
    .reduce((sum, child) => sum + otherLoad(site, observed, child, p), uncontrolled);
}

/** Every way the allowances of the sharing (and waiting) connectors overstep a circuit: empty when they fit. */
export function violations(site: LoadSite, observed: Observation, allowedA: ReadonlyMap<string, number>): string[] {
  const found: string[] = [];
  for (const c of site.circuits) {
    const below = subtreeIds(site, c.id);
    const on = site.connectors.filter((k) => below.has(k.circuitId));
    const fixed = (p: Phase) =>
      otherLoad(site, observed, c, p) +
      on.filter((k) => loadsPhase(k, p)).reduce((sum, k) => sum + (failsafeOf(site, observed, k) ?? 0), 0);
    const shared = (p: Phase) =>
      on.filter((k) => loadsPhase(k, p)).reduce((sum, k) => sum + (allowedA.get(k.id) ?? 0), 0);
    for (const p of PHASES) {
      const room = Math.max(0, c.maxCurrentA - fixed(p));
      if (shared(p) > room + TOLERANCE) found.push(`${c.id} ${p}: ${shared(p)} A allowed, ${room} A free`);
    }
    if (c.maxPowerW !== undefined) {
      const room = Math.max(0, c.maxPowerW / VOLTS - PHASES.reduce((sum, p) => sum + fixed(p), 0));
      const shared = on.reduce((sum, k) => sum + (allowedA.get(k.id) ?? 0) * k.phases, 0);
      if (shared > room + TOLERANCE) found.push(`${c.id} power: ${shared} A allowed, ${room} A free`);
    }
  }
  return found;
}

/**
 * The allowances a step gave the connectors that share (failsafe ones are fixed, uncontrolled ones counted as other
 * load).
 */
export function sharedAllowances(decisions: readonly ConnectorDecision[]): Map<string, number> {
  return new Map(
    decisions.filter((d) => d.state === 'sharing' || d.state === 'waiting').map((d) => [d.connectorKey, d.allowedA]),
  );
}

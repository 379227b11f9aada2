import { CHARGE_POINT_DEFAULTS } from './circuits.js';
import type { ChargePointFactsConfig, CircuitConfig, SiteConfig } from './schema.js';

/** One circuit with what hangs below it: the circuits naming it as parent and its charge points' electrical facts. */
export interface CircuitNode {
  circuit: CircuitConfig;
  children: CircuitNode[];
  chargePoints: ChargePointFactsConfig[];
}

/** A site's circuits as trees, roots and children in config order; a site without circuits gives none. */
export function circuitTree(site: SiteConfig): CircuitNode[] {
  const factsOf = (id: string): ChargePointFactsConfig =>
    site.chargePoints.find((cp) => cp.id === id) ?? { id, ...CHARGE_POINT_DEFAULTS };
  const nodeOf = (circuit: CircuitConfig): CircuitNode => ({
    circuit,
    children: site.circuits.filter((c) => c.parent === circuit.id).map(nodeOf),
    chargePoints: circuit.chargePoints.map(factsOf),
  });
  return site.circuits.filter((c) => c.parent === undefined).map(nodeOf);
}

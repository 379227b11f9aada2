import { EPSILON_A, loadModel, type Limit, type LoadModel } from './circuit-load.js';
import type { CircuitLoad, ConnectorFacts, ConnectorState, LoadSettings, LoadSite, Observation } from './types.js';

export interface Share {
  connectorKey: string;
  state: ConnectorState;
  /**
   * sharing: its fair share (0 or at least minCurrentA); waiting: 0; failsafe: the fail-safe; uncontrolled: its
   * maxCurrentA.
   */
  shareA: number;
}

/**
 * Who is served and with how much, for one observation: connectors are admitted in `priority` order (those not
 * listed after, in site order) while everyone admitted still fits at minCurrentA (see admit for what is set aside
 * for one that waits), the rest wait at 0 A; the admitted share max-min fairly. Charging connectors come back in
 * site order.
 */
export function allocate(
  site: LoadSite,
  observed: Observation,
  priority: readonly string[],
): { connectors: Share[]; circuits: CircuitLoad[] } {
  const model = loadModel(site, observed);
  const rank = (id: string) => (priority.includes(id) ? priority.indexOf(id) : priority.length);
  const ordered = [...model.sharing].sort((a, b) => rank(a.id) - rank(b.id));
  const sharesA = shareFairly(model.limits, ordered, site.settings, new Set());
  return { connectors: sharesOf(site, model, sharesA), circuits: model.circuits };
}

/** The shares of the admitted connectors, by id; whoever is not in the map waits. */
export function shareFairly(
  limits: readonly Limit[],
  ordered: readonly ConnectorFacts[],
  settings: LoadSettings,
  inTurn: ReadonlySet<string>,
): Map<string, number> {
  return roundedDown(waterFill(limits, admit(limits, ordered, settings.minCurrentA, inTurn)));
}

export function sharesOf(site: LoadSite, model: LoadModel, sharesA: ReadonlyMap<string, number>): Share[] {
  return site.connectors.flatMap((k): Share[] => {
    const failsafeA = model.failsafeA.get(k.id);
    if (failsafeA !== undefined) return [{ connectorKey: k.id, state: 'failsafe', shareA: failsafeA }];
    if (model.uncontrolled.includes(k)) return [{ connectorKey: k.id, state: 'uncontrolled', shareA: k.maxCurrentA }];
    if (!model.sharing.includes(k)) return [];
    const shareA = sharesA.get(k.id);
    return [
      shareA === undefined
        ? { connectorKey: k.id, state: 'waiting', shareA: 0 }
        : { connectorKey: k.id, state: 'sharing', shareA },
    ];
  });
}

/**
 * As many as fit at minCurrentA, first come first. One that does not fit is passed over and a later one may still
 * fit (another phase, another circuit); but if it would fit alone, its minCurrentA stays set aside on every limit
 * it is on against those after it, or single-phase connectors taking turns could keep a three-phase one waiting for
 * ever. Connectors within their turn neither set aside nor yield to what is set aside: they keep their share until
 * the turn ends.
 */
function admit(
  limits: readonly Limit[],
  ordered: readonly ConnectorFacts[],
  minCurrentA: number,
  inTurn: ReadonlySet<string>,
): ConnectorFacts[] {
  const admittedA = limits.map(() => 0);
  const setAsideA = limits.map(() => 0);
  const minOf = (k: ConnectorFacts, limit: Limit) => (limit.weights.get(k.id) ?? 0) * minCurrentA;
  return ordered.filter((k) => {
    if (k.maxCurrentA < minCurrentA) return false;
    const turnKept = inTurn.has(k.id);
    const fits = limits.every(
      (limit, i) =>
        !limit.weights.has(k.id) ||
        (admittedA[i] ?? 0) + (turnKept ? 0 : (setAsideA[i] ?? 0)) + minOf(k, limit) <= limit.capacityA + EPSILON_A,
    );
    const fitsAlone = limits.every((limit) => minOf(k, limit) <= limit.capacityA + EPSILON_A);
    if (fits || (fitsAlone && !turnKept)) {
      const into = fits ? admittedA : setAsideA;
      limits.forEach((limit, i) => (into[i] = (into[i] ?? 0) + minOf(k, limit)));
    }
    return fits;
  });
}

/**
 * Max-min fair shares: everyone rises together; a connector stops at its maxCurrentA, and everyone on a limit that
 * fills stops there, leaving the rest to rise further. Since everyone admitted fits at minCurrentA, nobody stops below
 * it.
 */
function waterFill(limits: readonly Limit[], admitted: readonly ConnectorFacts[]): Map<string, number> {
  const sharesA = new Map<string, number>();
  const residualA = limits.map((l) => l.capacityA);
  let rising = [...admitted];
  let levelA = 0;
  while (rising.length > 0) {
    const risingWeights = limits.map((l) => rising.reduce((sum, k) => sum + (l.weights.get(k.id) ?? 0), 0));
    const nextA = Math.min(
      ...rising.map((k) => k.maxCurrentA),
      ...limits.flatMap((_, i) =>
        (risingWeights[i] ?? 0) > 0 ? [levelA + (residualA[i] ?? 0) / (risingWeights[i] ?? 1)] : [],
      ),
    );
    residualA.forEach((r, i) => (residualA[i] = r - (nextA - levelA) * (risingWeights[i] ?? 0)));
    levelA = nextA;
    const full = limits.filter((_, i) => (risingWeights[i] ?? 0) > 0 && (residualA[i] ?? 0) <= EPSILON_A);
    const stopped = rising.filter((k) => k.maxCurrentA <= levelA + EPSILON_A || full.some((l) => l.weights.has(k.id)));
    for (const k of stopped) sharesA.set(k.id, levelA);
    rising = rising.filter((k) => !stopped.includes(k));
  }
  return sharesA;
}

/** Limits go out in tenths of an ampere, never above the share. */
function roundedDown(sharesA: ReadonlyMap<string, number>): Map<string, number> {
  return new Map([...sharesA].map(([id, a]) => [id, Math.floor(a * 10 + EPSILON_A) / 10]));
}

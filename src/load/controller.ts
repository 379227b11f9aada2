import { shareFairly, sharesOf } from './allocation.js';
import { connectorsBelow, failsafeOf, loadModel, oversteps } from './circuit-load.js';
import { nextPlace, servingOrder } from './rotation.js';
import type {
  ConnectorDecision,
  ConnectorMemory,
  ControllerState,
  ControllerStep,
  LoadSite,
  Observation,
} from './types.js';

export const INITIAL_CONTROLLER_STATE: ControllerState = { connectors: {}, drawUnknown: [] };

/**
 * Changes smaller than this are not sent (a station re-planning for 0.3 A gains nothing), unless a limit needs the
 * lowering.
 */
const DEAD_BAND_TENTHS = 10;

/**
 * One step of the load controller (docs/configuration/circuits.md#circuits-load-management), pure: from what the site is, what this step observes and what
 * the step before remembered, the allowance of every charging connector and what to send. Shares follow the
 * allocation at once downward and after raiseAfterS of shares at least 1 A higher upward, to the lowest of them
 * (the headroom that held all along); a connector that starts charging runs on its TxDefaultProfile, at the
 * fail-safe, until then. The first reading with a car's draw starts the raises on its metered circuits afresh: until
 * then its draw counted as other load there, and the shares seen were too low to hold on to (issue 42). Below a lost
 * meter, the fail-safe at once.
 */
export function controlLoad(site: LoadSite, observed: Observation, previous: ControllerState): ControllerStep {
  const { atMs } = observed;
  const model = loadModel(site, observed);
  const { ordered, inTurn, turnMs } = servingOrder(model.sharing, previous.connectors, model.limits, atMs);
  const shares = sharesOf(site, model, shareFairly(model.limits, ordered, site.settings, inTurn));
  const afresh = drawJustKnown(site, observed, previous);

  const memory: Record<string, ConnectorMemory> = {};
  const previousAllowedA = new Map<string, number>();
  const allowedA = new Map<string, number>();
  for (const { connectorKey, state, shareA } of shares) {
    if (state === 'uncontrolled') continue;
    const connector = site.connectors.find((k) => k.id === connectorKey);
    const before = previous.connectors[connectorKey];
    const fromA = before?.allowedA ?? (connector ? failsafeOf(site, connector) : 0);
    previousAllowedA.set(connectorKey, fromA);
    if (state === 'failsafe') {
      allowedA.set(connectorKey, shareA);
      memory[connectorKey] = { allowedA: shareA, place: before?.place ?? { served: false, sinceMs: atMs } };
      continue;
    }
    const place = nextPlace(before?.place, state === 'sharing', turnMs.get(connectorKey) ?? 0, atMs);
    if (tenths(shareA) < tenths(fromA) + DEAD_BAND_TENTHS) {
      // Lower (the dead band is settled below, against the limits) or hold: a raise under 1 A is not one.
      allowedA.set(connectorKey, Math.min(fromA, shareA));
      memory[connectorKey] = { allowedA: Math.min(fromA, shareA), place };
      continue;
    }
    const raise =
      before?.raise && !afresh.has(connectorKey)
        ? { sinceMs: before.raise.sinceMs, toA: Math.min(before.raise.toA, shareA) }
        : { sinceMs: atMs, toA: shareA };
    const raised = atMs - raise.sinceMs >= site.settings.raiseAfterS * 1000;
    allowedA.set(connectorKey, raised ? raise.toA : fromA);
    memory[connectorKey] = raised ? { allowedA: raise.toA, place } : { allowedA: fromA, place, raise };
  }

  // A lowering under 1 A is not sent when the limits hold without it.
  for (const { connectorKey, state } of shares) {
    const fromA = previousAllowedA.get(connectorKey) ?? 0;
    const toA = allowedA.get(connectorKey) ?? 0;
    const entry = memory[connectorKey];
    if (state !== 'sharing' && state !== 'waiting') continue;
    if (!entry || tenths(fromA) <= tenths(toA) || tenths(fromA) - tenths(toA) >= DEAD_BAND_TENTHS) continue;
    allowedA.set(connectorKey, fromA);
    if (oversteps(model.limits, allowedA)) allowedA.set(connectorKey, toA);
    else memory[connectorKey] = { ...entry, allowedA: fromA };
  }

  const connectors = shares.map(({ connectorKey, state, shareA }): ConnectorDecision => {
    if (state === 'uncontrolled') return { connectorKey, state, shareA, allowedA: shareA };
    const allowed = allowedA.get(connectorKey) ?? 0;
    return {
      connectorKey,
      state,
      shareA,
      allowedA: allowed,
      ...(allowed === previousAllowedA.get(connectorKey) ? {} : { sendA: allowed }),
    };
  });
  const drawUnknown = observed.sessions.filter((s) => s.drawnA === undefined).map((s) => s.connectorKey);
  return { connectors, circuits: model.circuits, state: { connectors: memory, drawUnknown } };
}

/** The connectors on a metered circuit with a car whose draw is told for the first time at this step. */
function drawJustKnown(site: LoadSite, observed: Observation, previous: ControllerState): Set<string> {
  if (previous.drawUnknown.length === 0) return new Set();
  const known = new Set(observed.sessions.filter((s) => s.drawnA !== undefined).map((s) => s.connectorKey));
  const told = previous.drawUnknown.filter((id) => known.has(id));
  if (told.length === 0) return new Set();
  return new Set(
    site.circuits
      .filter((c) => c.metered)
      .map((c) => connectorsBelow(site, c.id).map((k) => k.id))
      .filter((ids) => ids.some((id) => told.includes(id)))
      .flat(),
  );
}

/** Allowances compared in the tenths of an ampere they are sent in, free of floating-point residue. */
function tenths(a: number): number {
  return Math.round(a * 10);
}

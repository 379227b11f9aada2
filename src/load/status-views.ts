import type { HealthSource } from '../health/index.js';
import type { CsmsSchedules } from './charging-limits.js';
import { connectorsBelow, loadsPhase, phaseCurrents } from './circuit-load.js';
import { constant, within, type Steps, type Window } from './schedules.js';
import { connectorKeyOf, connectorsOfStation, type ProjectedSite } from './site-projection.js';
import type { TemporaryLimit } from './temporary-limits.js';
import { transactionLimitOf } from './transaction-plan.js';
import type { CircuitLoad, ConnectorDecision, ConnectorState, LoadSite, Phase, PhaseCurrents } from './types.js';

/** A circuit as `load status`, the API, the status page and the metrics show it. */
export interface CircuitStatus extends CircuitLoad {
  siteId: string;
  parent?: string;
  /** The limit per phase that holds now: the configured one, or a lower temporary one. */
  maxCurrentA: number;
  configuredMaxCurrentA: number;
  /** A temporary limit in force (docs/configuration/circuits.md#circuits-load-management, temporary limits). */
  temporaryLimit?: { maxCurrentA: number; until: string; setBy: string };
  maxPowerW?: number;
  /** The `role: circuit` meter that measures it. */
  meterId?: string;
  /**
   * What the controllable charging connectors on it and the circuits below may draw together, per phase: without a
   * meter, otherA plus this is what its limit holds.
   */
  allowedA: PhaseCurrents;
}

/** A managed connector as shown: what it may draw and why; `idle` without a transaction. */
export interface ConnectorStatus {
  siteId: string;
  circuitId: string;
  chargePointId: string;
  connectorId: number;
  /** The OCPP station it belongs to; absent for a Modbus-only charger. */
  stationId?: string;
  state: ConnectorState | 'idle';
  /** Per phase; absent when idle. */
  allowedA?: number;
  /** What its car last reported drawing per phase. */
  drawnA?: number;
  transactionId?: number;
}

/** What load management does right now (docs/configuration/circuits.md#circuits-load-management). */
export interface LoadStatus {
  circuits: CircuitStatus[];
  connectors: ConnectorStatus[];
}

/** A managed connector of a station and the limit it gets over a window (docs/design/uplink.md#uplink-what-the-csms-sees). */
export interface ConnectorComposite {
  connectorId: number;
  phases: 1 | 3;
  /** The lower of the CSMS's schedule and load management's limit; absent while its station refuses profiles. */
  composite?: Steps<number>;
}

/** A transaction on a connector at the last step, by connector key, and what its car last reported drawing. */
export interface SessionSeen {
  transactionId: number;
  drawnA?: number;
}

/** What the last step saw and decided: every view is of it. */
export interface LastStep {
  projected: ProjectedSite;
  /** The site it controlled: the projected one under the temporary limits and the CSMS's then. */
  site: LoadSite;
  circuits: readonly CircuitLoad[];
  decisions: readonly ConnectorDecision[];
  /** By connector key. */
  sessions: ReadonlyMap<string, SessionSeen>;
  /** The temporary limits in force, by circuit id. */
  applied: ReadonlyMap<string, TemporaryLimit>;
}

/** Load management's health: a lost meter puts its circuit on the fail-safe, safe but no longer shared. */
export function loadHealth(circuits: () => readonly CircuitLoad[]): HealthSource {
  return {
    name: 'load',
    report: () => {
      const lost = circuits()
        .filter((c) => c.meter === 'lost')
        .map((c) => c.circuitId);
      return lost.length > 0 ? { status: 'warning', circuitsWithoutMeter: lost } : { status: 'ok' };
    },
  };
}

/** What each circuit and managed connector stands at, as of the last step. */
export function statusOf(last: LastStep): LoadStatus {
  const { projected, site, sessions, applied } = last;
  const configured = new Map(projected.site.circuits.map((c) => [c.id, c.maxCurrentA]));
  const loads = new Map(last.circuits.map((c) => [c.circuitId, c]));
  const decisions = new Map(last.decisions.map((d) => [d.connectorKey, d]));
  // Uncontrolled connectors are not in it: a meter sees them, and without one they are other load already.
  const limitedA = new Map(
    last.decisions
      .filter((d) => d.state !== 'uncontrolled' && sessions.has(d.connectorKey))
      .map((d) => [d.connectorKey, d.allowedA]),
  );
  const allowedOn = (circuitId: string, phase: Phase): number =>
    connectorsBelow(site, circuitId)
      .filter((k) => loadsPhase(k, phase))
      .reduce((sum, k) => sum + (limitedA.get(k.id) ?? 0), 0);
  const circuits = site.circuits.flatMap((facts): CircuitStatus[] => {
    const load = loads.get(facts.id);
    const place = projected.circuitPlaces.get(facts.id);
    const temporary = applied.get(facts.id);
    if (!load || !place) return [];
    return [
      {
        siteId: place.siteId,
        ...load,
        ...(facts.parent !== undefined && { parent: facts.parent }),
        maxCurrentA: facts.maxCurrentA,
        configuredMaxCurrentA: configured.get(facts.id) ?? facts.maxCurrentA,
        ...(temporary && {
          temporaryLimit: {
            maxCurrentA: temporary.maxCurrentA,
            until: temporary.until.toISOString(),
            setBy: temporary.setBy,
          },
        }),
        ...(facts.maxPowerW !== undefined && { maxPowerW: facts.maxPowerW }),
        ...(place.meterId !== undefined && { meterId: place.meterId }),
        allowedA: phaseCurrents((p) => allowedOn(facts.id, p)),
      },
    ];
  });
  // As configured: a station's own circuit under a CSMS maximum is not shown as theirs.
  const connectors = projected.site.connectors.flatMap((facts): ConnectorStatus[] => {
    const address = projected.addresses.get(facts.id);
    if (!address) return [];
    const decision = decisions.get(facts.id);
    const session = sessions.get(facts.id);
    const stationId = projected.stations.get(facts.id)?.stationId;
    return [
      {
        siteId: address.siteId,
        circuitId: facts.circuitId,
        chargePointId: address.chargePointId,
        connectorId: address.connectorId,
        ...(stationId !== undefined && { stationId }),
        state: decision && session ? decision.state : 'idle',
        ...(decision && session && { allowedA: decision.allowedA }),
        ...(session?.drawnA !== undefined && { drawnA: session.drawnA }),
        ...(session && { transactionId: session.transactionId }),
      },
    ];
  });
  return { circuits, connectors };
}

/** What composites() reads beside the last step. */
export interface CompositeSources {
  /** The station's fail-safe over the window; undefined for a station not managed. */
  failsafe: Steps<number> | undefined;
  open: ReadonlyArray<{ id: number; chargePointId: string; connectorId: number; startedAt: string }>;
  uncontrolled: (connectorKey: string) => boolean;
  /** Whether the station refused a profile that changes (it gets flat ones). */
  flat: boolean;
  validityMs: number;
  csmsSchedules?: CsmsSchedules;
}

/**
 * What each managed connector of the station gets over the window (docs/design/uplink.md#uplink-what-the-csms-sees, GetCompositeSchedule):
 * while it charges, the lower of the CSMS's schedule and its share as of the last step, held for the window; else
 * the station's fail-safe, which a transaction starts on (failsafe.ts: already the lower of the circuit's and the
 * CSMS's). No composite for a connector of a station that refuses profiles (uncontrolled); empty for a station it
 * does not manage.
 */
export function compositesOf(
  last: LastStep,
  stationId: string,
  window: Window,
  sources: CompositeSources,
): ConnectorComposite[] {
  const { failsafe, flat } = sources;
  if (!failsafe) return [];
  const open = new Map(sources.open.map((t) => [connectorKeyOf(t.chargePointId, t.connectorId), t]));
  const decisions = new Map(last.decisions.map((d) => [d.connectorKey, d]));
  return connectorsOfStation(last.projected, stationId).map(([key, { connectorId, phases }]) => {
    if (sources.uncontrolled(key)) return { connectorId, phases };
    const t = open.get(key);
    const decision = t && last.sessions.get(key)?.transactionId === t.id ? decisions.get(key) : undefined;
    if (!t || !decision) return { connectorId, phases, composite: failsafe };
    const place = { connectorId, phases, transaction: { id: t.id, startedAtMs: Date.parse(t.startedAt) } };
    // A flat limit is the lowest over what its TxProfile covers (planOf), held over the window asked.
    const over = flat ? { fromMs: window.fromMs, toMs: window.fromMs + sources.validityMs } : window;
    const csms = sources.csmsSchedules?.scheduleOf(stationId, place, over) ?? constant(over, undefined);
    return { connectorId, phases, composite: within(transactionLimitOf(csms, decision.allowedA, flat), window) };
  });
}

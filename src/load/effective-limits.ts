import type { Logger } from '../log/index.js';
import type { CsmsSchedules } from './charging-limits.js';
import { limitAt, stationPhases, type Steps, type Window } from './schedules.js';
import { connectorsOfStation, type ProjectedSite } from './site-projection.js';
import { effectiveMaxCurrentA, type TemporaryLimit, type TemporaryLimitSource } from './temporary-limits.js';
import type { CircuitFacts, LoadSite } from './types.js';

/** A transaction on a managed connector, as the CSMS's schedules need it. */
export interface ChargingTransaction {
  id: number;
  /** ISO 8601, as its station told it: a relative charging schedule counts from it. */
  startedAt: string;
}

/**
 * The limits that hold now, beside the configured ones (docs/configuration/circuits.md#circuits-load-management, temporary limits, and
 * "Uplink to a CSMS"): a circuit carries min(configured, temporary), and the CSMS's profiles cap the connectors and
 * the stations they name. Keeps the temporary limits it applied last, to log a change once and to show them.
 */
export class EffectiveLimits {
  private appliedLimits = new Map<string, TemporaryLimit>();

  constructor(
    private readonly sources: {
      temporaryLimits?: TemporaryLimitSource;
      csmsSchedules?: CsmsSchedules;
      logger: Logger;
    },
  ) {}

  /** The temporary limits in force at the last apply(), by circuit id. */
  get applied(): ReadonlyMap<string, TemporaryLimit> {
    return this.appliedLimits;
  }

  /** The CSMS's schedule of each open transaction on a managed connector over the window, by connector key. */
  csmsSchedules(
    projected: ProjectedSite,
    open: ReadonlyMap<string, ChargingTransaction>,
    window: Window,
  ): Map<string, Steps> {
    const schedules = new Map<string, Steps>();
    const source = this.sources.csmsSchedules;
    if (!source) return schedules;
    for (const [connectorKey, t] of open) {
      const station = projected.stations.get(connectorKey);
      if (!station) continue;
      const transaction = { id: t.id, startedAtMs: Date.parse(t.startedAt) };
      const place = { connectorId: station.connectorId, phases: station.phases, transaction };
      schedules.set(connectorKey, source.scheduleOf(station.stationId, place, window));
    }
    return schedules;
  }

  /** The projected site under the temporary limits at `now` and the CSMS's schedules over the window. */
  apply(projected: ProjectedSite, csms: ReadonlyMap<string, Steps>, window: Window, now: Date): LoadSite {
    return this.withCsmsLimits(projected, this.withTemporaryLimits(projected.site, now), csms, window);
  }

  /**
   * The site under what the CSMS allows now (docs/design/uplink.md#uplink-what-the-csms-sees): each controlled charging connector's
   * maxCurrentA at most its CSMS limit, so what a connector the CSMS holds lower leaves goes to the others; and a
   * station the CSMS gives a maximum (for all its connectors together) as a circuit of its own below the one its
   * connectors are on. A connector that takes no profile is counted at its maxCurrentA whatever the CSMS says; a
   * station whose connectors are on different circuits has its maximum on each connector only (its composite).
   */
  private withCsmsLimits(
    projected: ProjectedSite,
    site: LoadSite,
    csms: ReadonlyMap<string, Steps>,
    window: Window,
  ): LoadSite {
    const source = this.sources.csmsSchedules;
    if (!source || csms.size === 0) return site;
    const stationCircuits: CircuitFacts[] = [];
    const circuitOf = new Map<string, string>();
    const charging = new Set([...csms.keys()].map((key) => projected.stations.get(key)?.stationId));
    for (const stationId of charging) {
      if (stationId === undefined) continue;
      const keys = new Set(connectorsOfStation(projected, stationId).map(([key]) => key));
      const connectors = site.connectors.filter((k) => keys.has(k.id));
      const [circuitId, ...others] = new Set(connectors.map((k) => k.circuitId));
      if (circuitId === undefined || others.length > 0) continue;
      if (connectors.some((k) => !k.controllable)) continue;
      const place = { connectorId: 0, phases: stationPhases(connectors) };
      const maximumA = limitAt(source.scheduleOf(stationId, place, window), window.fromMs);
      if (maximumA === undefined) continue;
      // Config ids have no '/': this one is nobody's.
      const id = `station/${stationId}`;
      stationCircuits.push({ id, parent: circuitId, maxCurrentA: maximumA, metered: false });
      for (const k of connectors) circuitOf.set(k.id, id);
    }
    return {
      ...site,
      circuits: [...site.circuits, ...stationCircuits],
      connectors: site.connectors.map((k) => {
        const schedule = csms.get(k.id);
        const capA = schedule && limitAt(schedule, window.fromMs);
        const capped = k.controllable && capA !== undefined ? { ...k, maxCurrentA: Math.min(k.maxCurrentA, capA) } : k;
        const circuitId = circuitOf.get(k.id);
        return circuitId === undefined ? capped : { ...capped, circuitId };
      }),
    };
  }

  /**
   * The site with each circuit's effective limit: min(configured, temporary). A temporary limit ends when its `until`
   * passes on the wall clock (it names a wall-clock instant); the controller then raises as after any other change,
   * after raiseAfterS.
   */
  private withTemporaryLimits(site: LoadSite, now: Date): LoadSite {
    const active = this.sources.temporaryLimits?.active(now) ?? new Map<string, TemporaryLimit>();
    const applied = new Map(
      site.circuits.flatMap((c) => {
        const limit = active.get(c.id);
        return limit ? [[c.id, limit] as const] : [];
      }),
    );
    this.logTemporaryLimits(site, applied, active, now);
    this.appliedLimits = applied;
    if (applied.size === 0) return site;
    return {
      ...site,
      circuits: site.circuits.map((c) => {
        const limit = applied.get(c.id);
        return limit ? { ...c, maxCurrentA: effectiveMaxCurrentA(c.maxCurrentA, limit) } : c;
      }),
    };
  }

  /** A temporary limit that starts or stops applying, logged once (an installer asks why the cars charge slowly). */
  private logTemporaryLimits(
    site: LoadSite,
    applied: ReadonlyMap<string, TemporaryLimit>,
    active: ReadonlyMap<string, TemporaryLimit>,
    now: Date,
  ): void {
    const { logger } = this.sources;
    for (const [circuitId, limit] of applied) {
      const before = this.appliedLimits.get(circuitId);
      if (
        before?.setAt.getTime() === limit.setAt.getTime() &&
        before.maxCurrentA === limit.maxCurrentA &&
        before.until.getTime() === limit.until.getTime()
      )
        continue;
      const configuredA = site.circuits.find((c) => c.id === circuitId)?.maxCurrentA ?? limit.maxCurrentA;
      logger.info(
        {
          circuitId,
          maxCurrentA: limit.maxCurrentA,
          until: limit.until.toISOString(),
          setBy: limit.setBy,
          configuredMaxCurrentA: configuredA,
          effectiveMaxCurrentA: effectiveMaxCurrentA(configuredA, limit),
        },
        'temporary circuit limit applies',
      );
    }
    for (const [circuitId, limit] of this.appliedLimits) {
      if (applied.has(circuitId)) continue;
      const reason =
        limit.until.getTime() <= now.getTime()
          ? 'expired'
          : active.has(circuitId)
            ? 'circuit not in the config'
            : 'cleared';
      logger.info({ circuitId, until: limit.until.toISOString(), reason }, 'temporary circuit limit ended');
    }
  }
}

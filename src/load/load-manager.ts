import { CHARGE_POINT_DEFAULTS, type Config } from '../config/index.js';
import type { HealthSource } from '../health/index.js';
import type { Logger } from '../log/index.js';
import type { ChargingLimits, CsmsSchedules, LimitOutcome, TransactionLimit } from './charging-limits.js';
import { connectorsBelow, loadsPhase, phaseCurrents } from './circuit-load.js';
import { controlLoad, INITIAL_CONTROLLER_STATE } from './controller.js';
import { StationFailsafes } from './failsafe.js';
import { capped, constant, limitAt, periodsOf, stationPhases, within, type Steps, type Window } from './schedules.js';
import { effectiveMaxCurrentA, type TemporaryLimit, type TemporaryLimitSource } from './temporary-limits.js';
import {
  PHASES,
  type CircuitFacts,
  type CircuitLoad,
  type CircuitReading,
  type ConnectorDecision,
  type ConnectorFacts,
  type ConnectorState,
  type ControllerState,
  type LoadSite,
  type Phase,
  type PhaseCurrents,
} from './types.js';

/** What a circuit meter last told: its phase currents, or that it went offline. */
export type CircuitMeterReport =
  { meterId: string; online: true; currentA: PhaseCurrents } | { meterId: string; online: false };

/** The circuit meters (modbus/ implements it). */
export interface CircuitMeters {
  circuitReadings(): readonly CircuitMeterReport[];
  /** Returns the unsubscribe. */
  onCircuitReading(listener: () => void): () => void;
}

/** A charging session as the domain keeps it (site/ implements the source). */
export interface OpenTransaction {
  id: number;
  stationId: string;
  chargePointId: string;
  connectorId: number;
  stationTransactionId: string | null;
  /** ISO 8601, as its station told it: a relative charging schedule counts from it. */
  startedAt: string;
}

/** What a car draws per phase as its station last reported, and when it came (performance.now()'s clock). */
export interface ReportedDraw {
  currentA: number;
  atMs: number;
}

export interface OpenTransactions {
  open(): readonly OpenTransaction[];
  /** The transaction's car's draw as its station last reported it; undefined when it has not. */
  reportedDraw(transactionId: number): ReportedDraw | undefined;
  /**
   * Told, by transaction id, once a start or stop is committed and answered: a 1.6 station knows a transaction's id
   * only from that answer. Returns the unsubscribe.
   */
  onOpenedOrClosed(listener: (transactionId: number) => void): () => void;
}

export interface LoadManagerOptions {
  config: Config;
  limits: ChargingLimits;
  meters: CircuitMeters;
  transactions: OpenTransactions;
  /** Temporary circuit limits (a grid operator's dimming order): a circuit carries min(configured, temporary). */
  temporaryLimits?: TemporaryLimitSource;
  /** The operator's CSMS's charging profiles (with the uplink): each connector gets the lower of theirs and its own. */
  csmsSchedules?: CsmsSchedules;
  logger: Logger;
  /** How often a step runs without news: raises after raiseAfterS, rotations and renewals happen on it. */
  stepIntervalMs?: number;
  /** How long after a raise its station is asked to report (default REPORT_AFTER_RAISE_MS). */
  reportAfterRaiseMs?: number;
  /** How long a raise its station has not reported is taken from the meter (default RAISE_ESTIMATE_MS). */
  raiseEstimateMs?: number;
}

/** A circuit as `load status`, the API, the status page and the metrics show it. */
export interface CircuitStatus extends CircuitLoad {
  siteId: string;
  parent?: string;
  /** The limit per phase that holds now: the configured one, or a lower temporary one. */
  maxCurrentA: number;
  configuredMaxCurrentA: number;
  /** A temporary limit in force (README "Circuits (load management)", temporary limits). */
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

/** What load management does right now (README "Circuits (load management)"). */
export interface LoadStatus {
  circuits: CircuitStatus[];
  connectors: ConnectorStatus[];
}

/** A managed connector of a station and the limit it gets over a window (README "Uplink to a CSMS"). */
export interface ConnectorComposite {
  connectorId: number;
  phases: 1 | 3;
  /** The lower of the CSMS's schedule and load management's limit; absent while its station refuses profiles. */
  composite?: Steps<number>;
}

/** A managed OCPP connector: where its limits go. */
interface StationConnector {
  stationId: string;
  connectorId: number;
  phases: 1 | 3;
  failsafeA: number;
}

/** Where a controller's connector is, as shown. */
interface ConnectorPlace {
  siteId: string;
  chargePointId: string;
  connectorId: number;
}

/** The site as the controller sees it, and where its connectors and meters are. */
interface ManagedSite {
  site: LoadSite;
  stations: Map<string, StationConnector>;
  circuitOfMeter: Map<string, string>;
  /** Per circuit id: its site and meter. */
  circuitPlaces: Map<string, { siteId: string; meterId?: string }>;
  connectorPlaces: Map<string, ConnectorPlace>;
}

/** The last limit a transaction's station accepted, and when: renewed before its validTo lapses. */
interface Sent {
  transactionId: number;
  currentA: number;
  /** Its schedule (planOf): a CSMS's profile that changes it is sent at once. */
  schedule: string;
  atMs: number;
  /** The validity it was sent with: a reload that lengthens profileValidityS must not let it lapse. */
  validityMs: number;
}

/**
 * A raise sent to a car whose station has not reported since: the meter shows the car taking it before the report
 * does, so until the report (or RAISE_ESTIMATE_MS) the increase the meter shows since is counted as the car's, up to
 * the raise (README "Circuits (load management)").
 */
interface PendingRaise {
  transactionId: number;
  toA: number;
  sinceMs: number;
  /** The circuit readings when it was sent, by circuit id: the increase is counted from them. */
  readingsA: ReadonlyMap<string, PhaseCurrents>;
}

const DEFAULT_STEP_INTERVAL_MS = 1_000;
/**
 * A raised car's station is asked for a report this long after the raise is accepted: a car follows a new charging
 * current within seconds (IEC 61851-1 gives it 5 s to follow a lower one), so the report shows it at its new draw.
 */
export const REPORT_AFTER_RAISE_MS = 5_000;
/**
 * How long a raise without a report is counted from the meter; then the last report again, however old (the safe
 * side: other load looks higher). It leaves the report asked for at REPORT_AFTER_RAISE_MS a round trip and more, and
 * bounds how long a step in the other load that came with a raise the car did not take goes unseen: while the car
 * draws less than its raise, what it leaves unused covers the step, so the circuit holds; the step shows as soon as
 * the car takes its raise (the estimate is capped by it), its station reports, or this passes.
 */
const RAISE_ESTIMATE_MS = 30_000;

/** A connector's key in the controller: a charge point's connector (an OCPP station's, or a Modbus meter's). */
const keyOf = (chargePointId: string, connectorId: number): string => `${chargePointId}/${connectorId}`;

/**
 * What a transaction's profile carries: from when, the limit then, where it changes before validTo, and all of it as
 * one key.
 */
interface Plan {
  from: Date;
  currentA: number;
  changes: NonNullable<TransactionLimit['changes']>['steps'];
  schedule: string;
}

/**
 * The load controller's shell (README "Circuits (load management)"): feeds the pure core (controlLoad) what the
 * circuit meters and the open transactions show, on every reading and every step interval, and sends its limits
 * through the ChargingLimits port. A connector whose station refuses a profile is uncontrolled until the station
 * boots again (logged once per connection).
 */
export class LoadManager {
  private managed: ManagedSite;
  private state: ControllerState = INITIAL_CONTROLLER_STATE;
  private circuits: CircuitLoad[] = [];
  private decisions: ConnectorDecision[] = [];
  /** The site the last step controlled: the configured one with the temporary limits in force then. */
  private effectiveSite: LoadSite | undefined;
  private sessions: ReadonlyMap<string, { transactionId: number; drawnA?: number }> = new Map();
  private config: Config;
  private readonly uncontrolled = new Set<string>();
  private readonly sent = new Map<string, Sent>();
  /** Connectors with a limit on its way (which, for which transaction), and whether a newer one waits for it. */
  private readonly sending = new Map<string, { transactionId: number; schedule: string; newer: boolean }>();
  /** Raises on their way or accepted whose station has not reported since, by connector. */
  private readonly raises = new Map<string, PendingRaise>();
  /** Stations that refused to report on request (TriggerMessage), not asked again until they boot. */
  private readonly unreporting = new Set<string>();
  /** Requests for a report waiting for the car to take its raise; cleared at stop(). */
  private readonly reportTimers = new Set<NodeJS.Timeout>();
  private readonly unsubscribe: Array<() => void>;
  private readonly timer: NodeJS.Timeout;
  private stopped = false;
  /**
   * What each open transaction's car drew, by transaction id, when the last circuit reading came: the other load is
   * that reading minus what the cars drew then. A step between two readings (the timer, a start, an answer) that
   * paired the reading with a lowering made since would see the other load grow by the lowering.
   */
  private drawnAtReading = new Map<number, number>();
  /** Profiles whose sending failed (not a station's answer), logged once until one is sent. */
  private readonly failedSends = new Set<string>();
  /** The last step failed: logged once until one succeeds. */
  private failing = false;
  /** The temporary limits the last step applied, by circuit: a change is logged once. */
  private applied = new Map<string, TemporaryLimit>();
  /**
   * Open transactions whose start the domain has told: their stations have their ids. A step that runs between a
   * start's write and its answer (on a meter reading, another station's answer) sees the transaction already, and a
   * profile naming it would reach the station before the id does and be refused.
   */
  private announced: Set<number> | undefined;
  /** Each connected station's fail-safe, kept what it should be. */
  private readonly failsafes: StationFailsafes;
  /** Connectors whose TxProfile was rejected once, and for which transaction: a second rejection counts. */
  private readonly refusedOnce = new Map<string, number>();
  /** Stations that refused a profile that changes: they get the lowest of each throughout until they boot again. */
  private readonly schedulesRefused = new Set<string>();

  constructor(private readonly options: LoadManagerOptions) {
    this.config = options.config;
    this.managed = managedSite(this.config, this.uncontrolled);
    this.failsafes = new StationFailsafes({
      limits: options.limits,
      ...(options.csmsSchedules && { csms: options.csmsSchedules }),
      schedulesRefused: this.schedulesRefused,
      connectorsOf: (stationId) => this.connectorsOf(stationId).map(([, c]) => c),
      refused: (stationId, outcome) =>
        this.markUncontrolled(
          this.connectorsOf(stationId).map(([key]) => key),
          stationId,
          outcome,
        ),
      failed: (stationId, err) =>
        this.notSent(`${stationId} TxDefaultProfile`, { err, stationId, profile: 'TxDefaultProfile' }),
      accepted: (stationId) => this.failedSends.delete(`${stationId} TxDefaultProfile`),
    });
    this.unsubscribe = [
      options.meters.onCircuitReading(() => this.step({ reading: true })),
      options.transactions.onOpenedOrClosed((transactionId) => {
        this.announced?.add(transactionId);
        this.step();
      }),
      // A new or lower limit is applied at once, not at the next step.
      ...(options.temporaryLimits ? [options.temporaryLimits.onChange(() => this.step())] : []),
      ...(options.csmsSchedules
        ? [
            options.csmsSchedules.onChange((stationId) => {
              this.failsafes.changed(stationId);
              this.step();
            }),
          ]
        : []),
    ];
    this.timer = setInterval(() => this.step(), options.stepIntervalMs ?? DEFAULT_STEP_INTERVAL_MS);
    this.step();
  }

  reload(config: Config): void {
    this.config = config;
    this.managed = managedSite(config, this.uncontrolled);
    this.failsafes.changed();
    this.step();
  }

  /**
   * A managed station booted: it may have lost its profiles, so it gets the fail-safe as its TxDefaultProfile (OCPP
   * 1.6 §3.13.1, 2.0.1 K01) and its transactions their limits again; a refusal counts from this connection on.
   */
  booted(stationId: string): void {
    const connectors = this.connectorsOf(stationId);
    if (connectors.length === 0) return;
    this.unreporting.delete(stationId);
    for (const [key] of connectors) {
      this.uncontrolled.delete(key);
      this.sent.delete(key);
    }
    this.managed = managedSite(this.config, this.uncontrolled);
    this.failsafes.booted(stationId, Date.now());
  }

  /** A station connected or left: one that connects without booting is sent its fail-safe too (failsafe.ts). */
  connectionChanged(stationId: string, connected: boolean): void {
    if (connected) this.failsafes.connected(stationId, Date.now());
    else this.failsafes.disconnected(stationId);
  }

  /** The managed connectors of a station. */
  private connectorsOf(stationId: string): Array<[string, StationConnector]> {
    return [...this.managed.stations].filter(([, c]) => c.stationId === stationId);
  }

  health(): HealthSource {
    return {
      name: 'load',
      report: () => {
        const lost = this.circuits.filter((c) => c.meter === 'lost').map((c) => c.circuitId);
        // A lost meter puts its circuit on the fail-safe: safe, but no longer shared (README "Circuits (load management)").
        return lost.length > 0 ? { status: 'warning', circuitsWithoutMeter: lost } : { status: 'ok' };
      },
    };
  }

  /** What each circuit and managed connector stands at, as of the last step. */
  status(): LoadStatus {
    const { circuitPlaces, connectorPlaces, stations } = this.managed;
    const site = this.effectiveSite ?? this.managed.site;
    const configured = new Map(this.managed.site.circuits.map((c) => [c.id, c.maxCurrentA]));
    const loads = new Map(this.circuits.map((c) => [c.circuitId, c]));
    const decisions = new Map(this.decisions.map((d) => [d.connectorId, d]));
    // Uncontrolled connectors are not in it: a meter sees them, and without one they are other load already.
    const limitedA = new Map(
      this.decisions
        .filter((d) => d.state !== 'uncontrolled' && this.sessions.has(d.connectorId))
        .map((d) => [d.connectorId, d.allowedA]),
    );
    const allowedOn = (circuitId: string, phase: Phase): number =>
      connectorsBelow(site, circuitId)
        .filter((k) => loadsPhase(k, phase))
        .reduce((sum, k) => sum + (limitedA.get(k.id) ?? 0), 0);
    const circuits = site.circuits.flatMap((facts): CircuitStatus[] => {
      const load = loads.get(facts.id);
      const place = circuitPlaces.get(facts.id);
      const temporary = this.applied.get(facts.id);
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
    const connectors = this.managed.site.connectors.flatMap((facts): ConnectorStatus[] => {
      const place = connectorPlaces.get(facts.id);
      if (!place) return [];
      const decision = decisions.get(facts.id);
      const session = this.sessions.get(facts.id);
      const stationId = stations.get(facts.id)?.stationId;
      return [
        {
          siteId: place.siteId,
          circuitId: facts.circuitId,
          chargePointId: place.chargePointId,
          connectorId: place.connectorId,
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

  /**
   * What each managed connector of the station gets over the window (README "Uplink to a CSMS", GetCompositeSchedule):
   * while it charges, the lower of the CSMS's schedule and its share as of the last step, held for the window; else
   * the station's fail-safe, which a transaction starts on (failsafe.ts: already the lower of the circuit's and the
   * CSMS's). No composite for a connector of a station that refuses profiles (uncontrolled); empty for a station it
   * does not manage.
   */
  composites(stationId: string, window: Window): ConnectorComposite[] {
    const connectors = this.connectorsOf(stationId);
    const failsafe = this.failsafes.over(stationId, window);
    if (!failsafe) return [];
    const open = new Map(this.options.transactions.open().map((t) => [keyOf(t.chargePointId, t.connectorId), t]));
    const decisions = new Map(this.decisions.map((d) => [d.connectorId, d]));
    const validityMs = this.config.loadManagement.profileValidityS * 1000;
    return connectors.map(([key, { connectorId, phases }]) => {
      if (this.uncontrolled.has(key)) return { connectorId, phases };
      const t = open.get(key);
      const decision = t && this.sessions.get(key)?.transactionId === t.id ? decisions.get(key) : undefined;
      if (!t || !decision) return { connectorId, phases, composite: failsafe };
      const place = { connectorId, phases, transaction: { id: t.id, startedAtMs: Date.parse(t.startedAt) } };
      // A flat limit is the lowest over what its TxProfile covers (planOf), held over the window asked.
      const flat = this.schedulesRefused.has(stationId);
      const over = flat ? { fromMs: window.fromMs, toMs: window.fromMs + validityMs } : window;
      const csms = this.options.csmsSchedules?.scheduleOf(stationId, place, over) ?? constant(over, undefined);
      return { connectorId, phases, composite: within(transactionLimitOf(csms, decision.allowedA, flat), window) };
    });
  }

  stop(): void {
    this.stopped = true;
    this.failsafes.stop();
    clearInterval(this.timer);
    for (const timer of this.reportTimers) clearTimeout(timer);
    for (const unsubscribe of this.unsubscribe) unsubscribe();
  }

  /**
   * One step, never thrown out of: it runs from timers, meter listeners and answers of stations, where a throw would
   * end the daemon. A failed step (the database cannot be read, say) is logged once and the next one tries again;
   * the stations keep their last limits meanwhile, and fall back to the fail-safe as they lapse.
   */
  private step(options: { reading?: boolean } = {}): void {
    // An answer that arrives after stop() finds the database it would read closed.
    if (this.stopped) return;
    try {
      this.runStep(options.reading ?? false);
      if (this.failing) this.options.logger.info('load steps run again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.options.logger.error({ err }, 'load step failed; the next one tries again');
      this.failing = true;
    }
  }

  private runStep(reading: boolean): void {
    // Damping, rotation and renewal count on a monotonic clock: a wall clock set back would hold a pending raise for
    // as long as it went back. Only validTo, which the station reads, is wall-clock time.
    const atMs = performance.now();
    const connectorIds = new Set(this.managed.site.connectors.map((c) => c.id));
    const open = new Map(
      this.options.transactions
        .open()
        .map((t) => [keyOf(t.chargePointId, t.connectorId), t] as const)
        .filter(([key]) => connectorIds.has(key)),
    );
    const nowMs = Date.now();
    this.failsafes.renew(nowMs);
    const window = { fromMs: nowMs, toMs: nowMs + this.config.loadManagement.profileValidityS * 1000 };
    const csms = this.csmsSchedules(open, window);
    const site = this.withCsmsLimits(this.withTemporaryLimits(this.managed.site), csms, window);
    this.effectiveSite = site;
    const readings = this.readings();
    const reported = new Map(
      [...open].map(([connectorId, t]) => [connectorId, this.options.transactions.reportedDraw(t.id)] as const),
    );
    this.settleRaises(open, reported, atMs);
    if (reading) this.drawnAtReading = this.drawnNow(site, open, reported, readings);
    const sessions = [...open].map(([connectorId, t]) => {
      const drawnA = this.drawnAtReading.get(t.id);
      return drawnA === undefined ? { connectorId } : { connectorId, drawnA };
    });
    const step = controlLoad(site, { atMs, readings, sessions }, this.state);
    this.state = step.state;
    this.circuits = step.circuits;
    this.decisions = step.connectors;
    this.sessions = new Map(
      [...open].map(([connectorId, t]) => {
        const drawnA = reported.get(connectorId)?.currentA;
        return [connectorId, { transactionId: t.id, ...(drawnA !== undefined && { drawnA }) }] as const;
      }),
    );
    for (const key of this.sent.keys()) if (!open.has(key)) this.sent.delete(key);
    const openIds = new Set([...open.values()].map((t) => t.id));
    // At the first step, those open were answered long before: at a start, or a reload that adds circuits.
    this.announced ??= openIds;
    for (const id of this.announced) if (!openIds.has(id)) this.announced.delete(id);

    for (const decision of step.connectors) {
      const transaction = open.get(decision.connectorId);
      const station = this.managed.stations.get(decision.connectorId);
      if (!transaction || !station || decision.state === 'uncontrolled' || !this.announced.has(transaction.id))
        continue;
      const sent = this.sent.get(decision.connectorId);
      const plan = planOf(
        csms.get(decision.connectorId) ?? constant(window, undefined),
        decision.allowedA,
        this.schedulesRefused.has(station.stationId),
      );
      // Unsent: a transaction that just started, or one running when chargegate (re)started on a limit it cannot know.
      const due =
        decision.sendA !== undefined ||
        sent?.transactionId !== transaction.id ||
        sent.schedule !== plan.schedule ||
        atMs - sent.atMs >= Math.min(sent.validityMs, this.config.loadManagement.profileValidityS * 1000) / 2;
      if (due) this.send(decision.connectorId, station, transaction, plan, atMs);
    }
  }

  /** The CSMS's schedule of each open transaction on a managed connector over the window, by connector. */
  private csmsSchedules(open: ReadonlyMap<string, OpenTransaction>, window: Window): Map<string, Steps> {
    const schedules = new Map<string, Steps>();
    const source = this.options.csmsSchedules;
    if (!source) return schedules;
    for (const [key, t] of open) {
      const station = this.managed.stations.get(key);
      if (!station) continue;
      const transaction = { id: t.id, startedAtMs: Date.parse(t.startedAt) };
      const place = { connectorId: station.connectorId, phases: station.phases, transaction };
      schedules.set(key, source.scheduleOf(station.stationId, place, window));
    }
    return schedules;
  }

  /**
   * The site under what the CSMS allows now (README "Uplink to a CSMS"): each controlled charging connector's
   * maxCurrentA at most its CSMS limit, so what a connector the CSMS holds lower leaves goes to the others; and a
   * station the CSMS gives a maximum (for all its connectors together) as a circuit of its own below the one its
   * connectors are on. A connector that takes no profile is counted at its maxCurrentA whatever the CSMS says; a
   * station whose connectors are on different circuits has its maximum on each connector only (its composite).
   */
  private withCsmsLimits(site: LoadSite, csms: ReadonlyMap<string, Steps>, window: Window): LoadSite {
    const source = this.options.csmsSchedules;
    if (!source || csms.size === 0) return site;
    const stationCircuits: CircuitFacts[] = [];
    const circuitOf = new Map<string, string>();
    const charging = new Set([...csms.keys()].map((key) => this.managed.stations.get(key)?.stationId));
    for (const stationId of charging) {
      if (stationId === undefined) continue;
      const keys = new Set(this.connectorsOf(stationId).map(([k]) => k));
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
  private withTemporaryLimits(site: LoadSite): LoadSite {
    const now = new Date();
    const active = this.options.temporaryLimits?.active(now) ?? new Map<string, TemporaryLimit>();
    const applied = new Map(
      site.circuits.flatMap((c) => {
        const limit = active.get(c.id);
        return limit ? [[c.id, limit] as const] : [];
      }),
    );
    this.logTemporaryLimits(site, applied, active, now);
    this.applied = applied;
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
    const { logger } = this.options;
    for (const [circuitId, limit] of applied) {
      const before = this.applied.get(circuitId);
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
    for (const [circuitId, limit] of this.applied) {
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

  /** The circuit meters' readings, by circuit; a meter offline gives none. */
  private readings(): CircuitReading[] {
    const { circuitOfMeter } = this.managed;
    return this.options.meters.circuitReadings().flatMap((r) => {
      const circuitId = circuitOfMeter.get(r.meterId);
      return circuitId !== undefined && r.online ? [{ circuitId, currentA: r.currentA }] : [];
    });
  }

  /** Ends the pending raises whose car has left, whose station has reported since, or that are too old to trust. */
  private settleRaises(
    open: ReadonlyMap<string, OpenTransaction>,
    reported: ReadonlyMap<string, ReportedDraw | undefined>,
    atMs: number,
  ): void {
    const windowMs = this.options.raiseEstimateMs ?? RAISE_ESTIMATE_MS;
    for (const [key, raise] of this.raises) {
      const reportAtMs = reported.get(key)?.atMs ?? -Infinity;
      if (open.get(key)?.id !== raise.transactionId || reportAtMs > raise.sinceMs || atMs - raise.sinceMs >= windowMs)
        this.raises.delete(key);
    }
  }

  /**
   * What the cars draw as a reading comes, by transaction id; unknown until their station reports. A car raised since
   * its last report draws what the report said plus the increase the meter shows since the raise, shared among the
   * cars raised with it and at most its raise: the meter sees a car take its raise long before its station's next
   * periodic report says so, and taking that for other load lowered it again at once (a saw-tooth).
   */
  private drawnNow(
    site: LoadSite,
    open: ReadonlyMap<string, OpenTransaction>,
    reported: ReadonlyMap<string, ReportedDraw | undefined>,
    readings: readonly CircuitReading[],
  ): Map<number, number> {
    const drawn = new Map<number, number>();
    for (const [connectorId, t] of open) {
      const reportedA = reported.get(connectorId)?.currentA;
      const raise = this.raises.get(connectorId);
      const increaseA = raise && this.increaseA(site, connectorId, raise, readings);
      const drawnA =
        raise && increaseA !== undefined
          ? Math.max(reportedA ?? 0, Math.min(raise.toA, (reportedA ?? 0) + increaseA))
          : reportedA;
      // A report older than the last lowering says more than the car may draw now: what it may draw is the truth
      // then, and counting less of it as the car's keeps the other load on the safe side.
      const allowedA = this.state.connectors[connectorId]?.allowedA;
      if (drawnA !== undefined) drawn.set(t.id, allowedA === undefined ? drawnA : Math.min(drawnA, allowedA));
    }
    return drawn;
  }

  /**
   * The increase the meters above a raised connector show since its raise, per phase it loads, shared among the
   * connectors raised and loading that phase there; the least of them, none below 0. Undefined without a metered
   * circuit above that reads now; 0 when one did not read at the raise (nothing to count from).
   */
  private increaseA(
    site: LoadSite,
    connectorId: string,
    raise: PendingRaise,
    readings: readonly CircuitReading[],
  ): number | undefined {
    const connector = site.connectors.find((k) => k.id === connectorId);
    if (!connector) return undefined;
    const now = new Map(readings.map((r) => [r.circuitId, r.currentA]));
    const increases = site.circuits.flatMap((circuit) => {
      const afterA = now.get(circuit.id);
      const below = connectorsBelow(site, circuit.id);
      if (!circuit.metered || !afterA || !below.includes(connector)) return [];
      const beforeA = raise.readingsA.get(circuit.id);
      return PHASES.filter((p) => loadsPhase(connector, p)).map((p) => {
        const raised = below.filter((k) => this.raises.has(k.id) && loadsPhase(k, p)).length;
        return beforeA ? (afterA[p] - beforeA[p]) / raised : 0;
      });
    });
    return increases.length === 0 ? undefined : Math.max(0, Math.min(...increases));
  }

  /**
   * Asks a raised car's station to report once the car had time to take its raise, unless it reported meanwhile. A
   * station that refuses is logged once and not asked again until it boots; its car's raise is counted from the meter
   * until its next periodic report, or RAISE_ESTIMATE_MS.
   */
  private askForReport(key: string, station: StationConnector): void {
    const timer = setTimeout(() => {
      this.reportTimers.delete(timer);
      const { stationId, connectorId } = station;
      if (!this.raises.has(key) || this.unreporting.has(stationId)) return;
      void this.options.limits.requestDrawReport(stationId, connectorId).then(
        (outcome) => {
          if ((outcome !== 'rejected' && outcome !== 'notSupported') || this.unreporting.has(stationId)) return;
          this.unreporting.add(stationId);
          this.options.logger.warn(
            { stationId, outcome },
            'station does not report on request: a raise is counted from the circuit meter until its next report',
          );
        },
        (err: unknown) => this.options.logger.error({ err, stationId }, 'report request not sent'),
      );
    }, this.options.reportAfterRaiseMs ?? REPORT_AFTER_RAISE_MS);
    this.reportTimers.add(timer);
  }

  private send(key: string, station: StationConnector, transaction: OpenTransaction, plan: Plan, atMs: number): void {
    const { currentA, schedule } = plan;
    const inFlight = this.sending.get(key);
    if (inFlight) {
      // Only a different limit waits for it: a step deciding the same (it is not accepted yet, so it looks unsent)
      // would have its answer step again, which marks any other limit on its way, and so on, one round trip apart.
      if (inFlight.transactionId !== transaction.id || inFlight.schedule !== schedule) inFlight.newer = true;
      return;
    }
    this.sending.set(key, { transactionId: transaction.id, schedule, newer: false });
    const before = this.sent.get(key);
    if (before?.transactionId === transaction.id && currentA > before.currentA) {
      // From before it leaves, so that no reading after the car took it counts as the baseline. A raise on one not
      // reported yet keeps the first's baseline and time: the increase since counts both.
      const pending = this.raises.get(key);
      this.raises.set(
        key,
        pending?.transactionId === transaction.id
          ? { ...pending, toA: currentA }
          : {
              transactionId: transaction.id,
              toA: currentA,
              sinceMs: performance.now(),
              readingsA: new Map(this.readings().map((r) => [r.circuitId, r.currentA])),
            },
      );
    }
    const validityMs = this.config.loadManagement.profileValidityS * 1000;
    const { from } = plan;
    const limit: TransactionLimit = {
      connectorId: station.connectorId,
      transactionId: transaction.id,
      stationTransactionId: transaction.stationTransactionId,
      currentA,
      validTo: new Date(from.getTime() + validityMs),
      phases: station.phases,
      ...(plan.changes.length > 0 && { changes: { from, steps: plan.changes } }),
    };
    void this.options.limits.setTransactionLimit(station.stationId, limit).then(
      (outcome) => {
        this.failedSends.delete(key);
        const { newer } = this.sending.get(key) ?? { newer: false };
        this.sending.delete(key);
        if (outcome === 'accepted') {
          this.refusedOnce.delete(key);
          this.sent.set(key, { transactionId: transaction.id, currentA, schedule, atMs, validityMs });
          if (this.raises.get(key)?.toA === currentA) this.askForReport(key, station);
        } else {
          // Offline or unanswered: sent again at the next step. A raise not taken is no car's.
          this.sent.delete(key);
          this.raises.delete(key);
        }
        if (outcome === 'rejected' || outcome === 'notSupported')
          return this.refused(key, station.stationId, transaction.id, plan, outcome);
        // A limit decided while this one was on its way: sent now, so a lowering waits for no timer.
        if (newer) {
          this.sent.delete(key);
          this.step();
        }
      },
      (err: unknown) => {
        // Not a station's answer (those are outcomes): a bug of ours, say a profile the schema refuses. The next
        // step sends it again.
        this.sending.delete(key);
        this.sent.delete(key);
        this.raises.delete(key);
        this.notSent(key, { err, stationId: station.stationId, profile: 'TxProfile' });
      },
    );
  }

  /**
   * A TxProfile the station refused. Rejected once for a transaction, it is sent again at the next step: a station
   * that ended the transaction while the profile was on its way refuses it by name, and its stop follows (the ended
   * transaction is then sent nothing more). Rejected again: one that changes goes flat (README "Uplink to a CSMS"),
   * else the connector is uncontrolled, as at once for NotSupported.
   */
  private refused(
    key: string,
    stationId: string,
    transactionId: number,
    plan: Plan,
    outcome: 'rejected' | 'notSupported',
  ): void {
    if (outcome === 'rejected' && this.refusedOnce.get(key) !== transactionId) {
      this.refusedOnce.set(key, transactionId);
      return;
    }
    this.refusedOnce.delete(key);
    if (outcome === 'rejected' && plan.changes.length > 0) {
      this.schedulesRefused.add(stationId);
      this.failsafes.changed(stationId);
      return this.step();
    }
    this.markUncontrolled([key], stationId, outcome);
  }

  /** Logged once per profile until one is sent again: a step a second would otherwise log each try. */
  private notSent(what: string, fields: object): void {
    if (this.failedSends.has(what)) return;
    this.failedSends.add(what);
    this.options.logger.error(fields, 'charging limit not sent: will try again');
  }

  private markUncontrolled(keys: readonly string[], stationId: string, outcome: LimitOutcome): void {
    const fresh = keys.filter((key) => !this.uncontrolled.has(key));
    if (fresh.length === 0) return;
    for (const key of fresh) this.uncontrolled.add(key);
    this.options.logger.warn(
      { stationId, connectors: fresh, outcome },
      'station refuses charging profiles: counted as uncontrolled at its maxCurrentA until it boots again',
    );
    this.managed = managedSite(this.config, this.uncontrolled);
    this.step();
  }
}

/**
 * The profile a transaction gets: at every instant the lower of the CSMS's schedule and allowedA, in the periods it is
 * sent in (flat: for a station that refused one that changes, the lowest of it throughout); the key names the limits
 * and the instants they change at, so a schedule that moves on with the clock compares alike.
 */
function planOf(csms: Steps, allowedA: number, flat: boolean): Plan {
  const schedule = transactionLimitOf(csms, allowedA, flat);
  const [first, ...changes] = periodsOf(schedule);
  return {
    from: new Date(schedule.window.fromMs),
    currentA: first!.limit,
    changes: changes.map((p) => ({ afterS: p.startS, currentA: p.limit })),
    schedule: JSON.stringify(schedule.steps.map((s, i) => [i === 0 ? 0 : s.atMs, s.limitA])),
  };
}

/** A transaction's limit over the window: the lower of the CSMS's and allowedA; flat, the lowest of it throughout. */
function transactionLimitOf(csms: Steps, allowedA: number, flat: boolean): Steps<number> {
  const exact = capped(csms, allowedA);
  return flat ? constant(exact.window, Math.min(...exact.steps.map((s) => s.limitA))) : exact;
}

/** Whether any site has circuits: only then is load management started. */
export function hasCircuits(config: Config): boolean {
  return config.sites.some((s) => s.circuits.length > 0);
}

/** The config's circuits and the connectors of the charge points on them, as the controller's site. */
function managedSite(config: Config, uncontrolled: ReadonlySet<string>): ManagedSite {
  const circuits: LoadSite['circuits'][number][] = [];
  const connectors: ConnectorFacts[] = [];
  const stations = new Map<string, StationConnector>();
  const circuitOfMeter = new Map<string, string>();
  const circuitPlaces = new Map<string, { siteId: string; meterId?: string }>();
  const connectorPlaces = new Map<string, ConnectorPlace>();
  for (const s of config.sites) {
    for (const c of s.circuits) {
      circuitPlaces.set(c.id, { siteId: s.id, ...(c.meter !== undefined && { meterId: c.meter }) });
      circuits.push({
        id: c.id,
        ...(c.parent !== undefined && { parent: c.parent }),
        maxCurrentA: c.maxCurrentA,
        ...(c.maxPowerW !== undefined && { maxPowerW: c.maxPowerW }),
        failsafeCurrentA: c.failsafeCurrentA,
        metered: c.meter !== undefined,
      });
      if (c.meter !== undefined) circuitOfMeter.set(c.meter, c.id);
      for (const chargePointId of c.chargePoints) {
        const facts = s.chargePoints.find((cp) => cp.id === chargePointId) ?? { ...CHARGE_POINT_DEFAULTS };
        const phasing =
          facts.phases === 1 && facts.phase ? { phases: 1 as const, phase: facts.phase } : { phases: 3 as const };
        const connector = (id: string, controllable: boolean, connectorId: number): ConnectorFacts => {
          connectorPlaces.set(id, { siteId: s.id, chargePointId, connectorId });
          return {
            id,
            circuitId: c.id,
            maxCurrentA: facts.maxCurrentA,
            controllable: controllable && !uncontrolled.has(id),
            ...phasing,
          };
        };
        for (const station of s.stations)
          for (const cp of station.chargePoints.filter((p) => p.id === chargePointId))
            for (const connectorId of cp.connectors) {
              const key = keyOf(chargePointId, connectorId);
              connectors.push(connector(key, true, connectorId));
              stations.set(key, {
                stationId: station.id,
                connectorId,
                phases: phasing.phases,
                failsafeA: c.failsafeCurrentA,
              });
            }
        // A Modbus-only charger: its meter detects sessions, nothing limits it.
        for (const meter of s.meters)
          if (meter.role === 'session' && meter.chargePointId === chargePointId)
            connectors.push(connector(keyOf(chargePointId, meter.connectorId), false, meter.connectorId));
      }
    }
  }
  const { minCurrentA, raiseAfterS } = config.loadManagement;
  return {
    site: { circuits, connectors, settings: { minCurrentA, raiseAfterS } },
    stations,
    circuitOfMeter,
    circuitPlaces,
    connectorPlaces,
  };
}

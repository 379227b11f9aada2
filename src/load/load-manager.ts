import type { Config } from '../config/index.js';
import type { HealthSource } from '../health/index.js';
import type { Logger } from '../log/index.js';
import type { ChargingLimits, CsmsSchedules } from './charging-limits.js';
import { SYSTEM_CLOCK, type Cancel, type LoadClock } from './clock.js';
import { controlLoad, INITIAL_CONTROLLER_STATE } from './controller.js';
import { DrawEstimate, type DrawingTransaction } from './draw-estimate.js';
import { EffectiveLimits } from './effective-limits.js';
import { StationFailsafes } from './failsafe.js';
import { LimitDispatch } from './limit-dispatch.js';
import { constant, type Window } from './schedules.js';
import { connectorKeyOf, connectorsOfStation, projectSite, type ProjectedSite } from './site-projection.js';
import {
  compositesOf,
  loadHealth,
  statusOf,
  type ConnectorComposite,
  type LastStep,
  type LoadStatus,
} from './status-views.js';
import type { TemporaryLimitSource } from './temporary-limits.js';
import { planOf } from './transaction-plan.js';
import type { CircuitMeters, OpenTransactions } from './ports.js';
import type { CircuitReading, ControllerState } from './types.js';

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
  /** The system clock unless a test moves its own. */
  clock?: LoadClock;
  /** How often a step runs without news: raises after raiseAfterS, rotations and renewals happen on it. */
  stepIntervalMs?: number;
  /** How long after a raise its station is asked to report (default REPORT_AFTER_RAISE_MS). */
  reportAfterRaiseMs?: number;
  /** How long a raise its station has not reported is taken from the meter (default RAISE_ESTIMATE_MS). */
  raiseEstimateMs?: number;
}

const DEFAULT_STEP_INTERVAL_MS = 1_000;

/**
 * The load controller's shell (docs/configuration/circuits.md#circuits-load-management): on every circuit reading, every start and stop,
 * every change of a temporary or CSMS limit and every step interval, it feeds the pure core (controlLoad) the site
 * under the limits that hold now (effective-limits.ts) and what the cars draw (draw-estimate.ts), and hands the
 * limits it decides to dispatch (limit-dispatch.ts); status-views.ts shows the last step. A step never throws out.
 */
export class LoadManager {
  private config: Config;
  private readonly clock: LoadClock;
  private projected: ProjectedSite;
  private state: ControllerState = INITIAL_CONTROLLER_STATE;
  private last: LastStep;
  private readonly effective: EffectiveLimits;
  private readonly draws: DrawEstimate;
  private readonly dispatch: LimitDispatch;
  /** Each connected station's fail-safe, kept what it should be. */
  private readonly failsafes: StationFailsafes;
  private readonly unsubscribe: Array<() => void>;
  private readonly cancelTimer: Cancel;
  private stopped = false;
  /** The last step failed: logged once until one succeeds. */
  private failing = false;

  constructor(private readonly options: LoadManagerOptions) {
    const { limits, logger, csmsSchedules, temporaryLimits } = options;
    this.config = options.config;
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.projected = projectSite(this.config, new Set());
    this.last = this.emptyStep();
    this.effective = new EffectiveLimits({
      logger,
      ...(temporaryLimits && { temporaryLimits }),
      ...(csmsSchedules && { csmsSchedules }),
    });
    this.draws = new DrawEstimate({
      limits,
      logger,
      clock: this.clock,
      ...(options.reportAfterRaiseMs !== undefined && { reportAfterRaiseMs: options.reportAfterRaiseMs }),
      ...(options.raiseEstimateMs !== undefined && { raiseEstimateMs: options.raiseEstimateMs }),
    });
    this.dispatch = new LimitDispatch({
      limits,
      logger,
      hooks: {
        raising: (key, transactionId, toA) => this.draws.raising(key, transactionId, toA, this.readings()),
        answered: (key, station, currentA, accepted) => this.draws.answered(key, station, currentA, accepted),
        lost: (key) => this.draws.notSent(key),
        stepAgain: () => this.step(),
        uncontrolledChanged: () => {
          this.project();
          this.step();
        },
        flattened: (stationId) => this.failsafes.changed(stationId),
      },
    });
    this.failsafes = new StationFailsafes({
      limits,
      ...(csmsSchedules && { csms: csmsSchedules }),
      schedulesRefused: this.dispatch.flatStations,
      connectorsOf: (stationId) => connectorsOfStation(this.projected, stationId).map(([, c]) => c),
      refused: (stationId, outcome) =>
        this.dispatch.markUncontrolled(
          connectorsOfStation(this.projected, stationId).map(([key]) => key),
          stationId,
          outcome,
        ),
      failed: (stationId, err) =>
        this.dispatch.notSent(`${stationId} TxDefaultProfile`, { err, stationId, profile: 'TxDefaultProfile' }),
      accepted: (stationId) => this.dispatch.reached(`${stationId} TxDefaultProfile`),
    });
    this.unsubscribe = [
      options.meters.onCircuitReading(() => this.step({ reading: true })),
      options.transactions.onOpenedOrClosed((transactionId) => {
        this.dispatch.announce(transactionId);
        this.step();
      }),
      // A new or lower limit is applied at once, not at the next step.
      ...(temporaryLimits ? [temporaryLimits.onChange(() => this.step())] : []),
      ...(csmsSchedules
        ? [
            csmsSchedules.onChange((stationId) => {
              this.failsafes.changed(stationId);
              this.step();
            }),
          ]
        : []),
    ];
    this.cancelTimer = this.clock.every(options.stepIntervalMs ?? DEFAULT_STEP_INTERVAL_MS, () => this.step());
    this.step();
  }

  reload(config: Config): void {
    this.config = config;
    this.project();
    this.failsafes.changed();
    this.step();
  }

  /**
   * A managed station booted: it may have lost its profiles, so it gets the fail-safe as its TxDefaultProfile (OCPP
   * 1.6 §3.13.1, 2.0.1 K01) and its transactions their limits again; a refusal counts from this connection on.
   */
  booted(stationId: string): void {
    const connectorKeys = connectorsOfStation(this.projected, stationId).map(([key]) => key);
    if (connectorKeys.length === 0) return;
    this.draws.booted(stationId);
    this.dispatch.booted(connectorKeys);
    this.project();
    this.failsafes.booted(stationId, this.clock.wallMs());
  }

  /** A station connected or left: one that connects without booting is sent its fail-safe too (failsafe.ts). */
  connectionChanged(stationId: string, connected: boolean): void {
    if (connected) this.failsafes.connected(stationId, this.clock.wallMs());
    else this.failsafes.disconnected(stationId);
  }

  health(): HealthSource {
    return loadHealth(() => this.last.circuits);
  }

  /** What each circuit and managed connector stands at, as of the last step. */
  status(): LoadStatus {
    return statusOf({ ...this.last, projected: this.projected });
  }

  /** What each managed connector of the station gets over the window (status-views.ts, compositesOf). */
  composites(stationId: string, window: Window): ConnectorComposite[] {
    const { csmsSchedules } = this.options;
    return compositesOf({ ...this.last, projected: this.projected }, stationId, window, {
      failsafe: this.failsafes.over(stationId, window),
      open: this.options.transactions.open(),
      uncontrolled: (key) => this.dispatch.isUncontrolled(key),
      flat: this.dispatch.flatStations.has(stationId),
      validityMs: this.config.loadManagement.profileValidityS * 1000,
      ...(csmsSchedules && { csmsSchedules }),
    });
  }

  stop(): void {
    this.stopped = true;
    this.failsafes.stop();
    this.cancelTimer();
    this.draws.stop();
    for (const unsubscribe of this.unsubscribe) unsubscribe();
  }

  /** The config's site with the connectors whose stations refuse profiles uncontrolled. */
  private project(): void {
    this.projected = projectSite(this.config, this.dispatch.uncontrolled());
  }

  private emptyStep(): LastStep {
    const { projected } = this;
    return { projected, site: projected.site, circuits: [], decisions: [], sessions: new Map(), applied: new Map() };
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

  /**
   * The order of a step: what is open and what the limits are now, what the cars draw, the core's decision, then
   * the limits it sends.
   */
  private runStep(reading: boolean): void {
    const atMs = this.clock.monotonicMs();
    const nowMs = this.clock.wallMs();
    const { projected } = this;
    const keys = new Set(projected.site.connectors.map((c) => c.id));
    const open = new Map(
      this.options.transactions
        .open()
        .map((t) => [connectorKeyOf(t.chargePointId, t.connectorId), t] as const)
        .filter(([key]) => keys.has(key)),
    );
    this.failsafes.renew(nowMs);
    const validityMs = this.config.loadManagement.profileValidityS * 1000;
    const window = { fromMs: nowMs, toMs: nowMs + validityMs };
    const csms = this.effective.csmsSchedules(projected, open, window);
    const site = this.effective.apply(projected, csms, window, new Date(nowMs));
    const readings = this.readings();
    const drawing = new Map<string, DrawingTransaction>(
      [...open].map(([key, t]) => [key, { id: t.id, reported: this.options.transactions.reportedDraw(t.id) }]),
    );
    this.draws.settle(drawing, atMs);
    if (reading) this.draws.read(site, drawing, readings, (key) => this.state.connectors[key]?.allowedA);
    const sessions = [...open].map(([connectorKey, t]) => {
      const drawnA = this.draws.drawnA(t.id);
      return drawnA === undefined ? { connectorKey } : { connectorKey, drawnA };
    });
    const step = controlLoad(site, { atMs, readings, sessions }, this.state);
    this.state = step.state;
    this.last = {
      projected,
      site,
      circuits: step.circuits,
      decisions: step.connectors,
      sessions: new Map(
        [...drawing].map(([key, t]) => [
          key,
          { transactionId: t.id, ...(t.reported !== undefined && { drawnA: t.reported.currentA }) },
        ]),
      ),
      applied: this.effective.applied,
    };

    this.dispatch.openNow(open);
    const sending = { atMs, validityMs };
    for (const decision of step.connectors) {
      const transaction = open.get(decision.connectorKey);
      const station = projected.stations.get(decision.connectorKey);
      if (!transaction || !station || decision.state === 'uncontrolled') continue;
      const plan = planOf(
        csms.get(decision.connectorKey) ?? constant(window, undefined),
        decision.allowedA,
        this.dispatch.flatStations.has(station.stationId),
      );
      this.dispatch.offer(decision.connectorKey, station, transaction, plan, decision.sendA !== undefined, sending);
    }
  }

  /** The circuit meters' readings, by circuit; a meter offline gives none. */
  private readings(): CircuitReading[] {
    const { circuitOfMeter } = this.projected;
    return this.options.meters.circuitReadings().flatMap((r) => {
      const circuitId = circuitOfMeter.get(r.meterId);
      return circuitId !== undefined && r.online ? [{ circuitId, currentA: r.currentA }] : [];
    });
  }
}

import type { Logger } from '../log/index.js';
import type { ChargingLimits } from './charging-limits.js';
import { connectorsBelow, loadsPhase } from './circuit-load.js';
import type { Cancel, LoadClock } from './clock.js';
import type { StationConnector } from './site-projection.js';
import {
  PHASES,
  type CircuitReading,
  type ConnectorFacts,
  type LoadSite,
  type Phase,
  type PhaseCurrents,
} from './types.js';

/**
 * A raise sent to a car whose station has not reported since: the meter shows the car taking it before the report
 * does, so until the report (or the estimate window) the increase the meter shows since is counted as the car's, up
 * to the raise (docs/configuration/circuits.md#circuits-load-management).
 */
interface PendingRaise {
  transactionId: number;
  toA: number;
  sinceMs: number;
  /** The circuit readings when it was sent, by circuit id: the increase is counted from them. */
  readingsA: ReadonlyMap<string, PhaseCurrents>;
}

/** A metered circuit that reads now, as the raises below it see it (DrawEstimate.raisedCircuits). */
interface RaisedCircuit {
  circuitId: string;
  afterA: PhaseCurrents;
  /** The connector keys below it. */
  below: ReadonlySet<string>;
  raised: ReadonlyMap<Phase, { addedA: number; count: number }>;
}

/** What a car draws per phase as its station last reported, and when it came (the monotonic clock). */
export interface ReportedDraw {
  currentA: number;
  atMs: number;
}

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

export interface DrawEstimateOptions {
  limits: Pick<ChargingLimits, 'requestDrawReport'>;
  logger: Logger;
  clock: LoadClock;
  reportAfterRaiseMs?: number;
  raiseEstimateMs?: number;
}

/** An open transaction as the estimate sees it: by connector key, its id and its station's last report. */
export interface DrawingTransaction {
  id: number;
  reported: ReportedDraw | undefined;
}

/**
 * What the cars draw, as the controller subtracts it from a circuit reading: their stations' reports, and for a car
 * raised since its last report, the increase the meter shows since the raise. Asks a raised car's station for a
 * report once the car had time to take it.
 */
export class DrawEstimate {
  /** Raises on their way or accepted whose station has not reported since, by connector key. */
  private readonly raises = new Map<string, PendingRaise>();
  /** Stations that refused to report on request (TriggerMessage), not asked again until they boot. */
  private readonly unreporting = new Set<string>();
  /** Requests for a report waiting for the car to take its raise; cancelled at stop(). */
  private readonly reportTimers = new Set<Cancel>();
  /**
   * What each open transaction's car drew, by transaction id, when the last circuit reading came: the other load is
   * that reading minus what the cars drew then. A step between two readings (the timer, a start, an answer) that
   * paired the reading with a lowering made since would see the other load grow by the lowering.
   */
  private drawnAtReading = new Map<number, number>();

  constructor(private readonly options: DrawEstimateOptions) {}

  /** What the transaction's car drew at the last reading; undefined until its station reports. */
  drawnA(transactionId: number): number | undefined {
    return this.drawnAtReading.get(transactionId);
  }

  /** Ends the pending raises whose car has left, whose station has reported since, or that are too old to trust. */
  settle(open: ReadonlyMap<string, DrawingTransaction>, atMs: number): void {
    const windowMs = this.options.raiseEstimateMs ?? RAISE_ESTIMATE_MS;
    for (const [connectorKey, raise] of this.raises) {
      const t = open.get(connectorKey);
      const reportAtMs = t?.reported?.atMs ?? -Infinity;
      if (t?.id !== raise.transactionId || reportAtMs > raise.sinceMs || atMs - raise.sinceMs >= windowMs)
        this.raises.delete(connectorKey);
    }
  }

  /**
   * A circuit reading came: what the cars draw now, by transaction id; unknown until their station reports. A car
   * raised since its last report draws what the report said plus the increase the meter shows since the raise,
   * shared among the cars raised with it and at most its raise: the meter sees a car take its raise long before its
   * station's next periodic report says so, and taking that for other load lowered it again at once (a saw-tooth).
   * `allowedA`: what each connector may draw now, by connector key.
   */
  read(
    site: LoadSite,
    open: ReadonlyMap<string, DrawingTransaction>,
    readings: readonly CircuitReading[],
    allowedA: (connectorKey: string) => number | undefined,
  ): void {
    const circuits = this.raisedCircuits(site, open, readings);
    const facts = new Map(this.raises.size === 0 ? [] : site.connectors.map((k) => [k.id, k]));
    const drawn = new Map<number, number>();
    for (const [connectorKey, t] of open) {
      const reportedA = t.reported?.currentA;
      const raise = this.raises.get(connectorKey);
      const connector = facts.get(connectorKey);
      const increaseA =
        raise && connector && this.increaseA(connector, raise, circuits, this.addedA(connectorKey, open));
      const drawnA =
        raise && increaseA !== undefined
          ? Math.max(reportedA ?? 0, Math.min(raise.toA, (reportedA ?? 0) + increaseA))
          : reportedA;
      // A report older than the last lowering says more than the car may draw now: what it may draw is the truth
      // then, and counting less of it as the car's keeps the other load on the safe side.
      const mayA = allowedA(connectorKey);
      if (drawnA !== undefined) drawn.set(t.id, mayA === undefined ? drawnA : Math.min(drawnA, mayA));
    }
    this.drawnAtReading = drawn;
  }

  /**
   * A raise leaves for the connector's car, from before it leaves so that no reading after the car took it counts as
   * the baseline. A raise on one not reported yet keeps the first's baseline and time: the increase since counts both.
   */
  raising(connectorKey: string, transactionId: number, toA: number, readings: readonly CircuitReading[]): void {
    const pending = this.raises.get(connectorKey);
    this.raises.set(
      connectorKey,
      pending?.transactionId === transactionId
        ? { ...pending, toA }
        : {
            transactionId,
            toA,
            sinceMs: this.options.clock.monotonicMs(),
            readingsA: new Map(readings.map((r) => [r.circuitId, r.currentA])),
          },
    );
  }

  /** A limit's answer: an accepted raise gets its report asked for; a limit not taken is no car's raise. */
  answered(connectorKey: string, station: StationConnector, currentA: number, accepted: boolean): void {
    if (!accepted) this.raises.delete(connectorKey);
    else if (this.raises.get(connectorKey)?.toA === currentA) this.askForReport(connectorKey, station);
  }

  /** A limit that did not reach its station (not a station's answer): no car's raise. */
  notSent(connectorKey: string): void {
    this.raises.delete(connectorKey);
  }

  /** A booted station is asked for reports again. */
  booted(stationId: string): void {
    this.unreporting.delete(stationId);
  }

  stop(): void {
    for (const cancel of this.reportTimers) cancel();
    this.reportTimers.clear();
  }

  /**
   * The metered circuits that read now, as the raises below them see it: per phase, what the raises of the connectors
   * raised and loading it there add to their cars' last reports, together, and how many they are.
   */
  private raisedCircuits(
    site: LoadSite,
    open: ReadonlyMap<string, DrawingTransaction>,
    readings: readonly CircuitReading[],
  ): RaisedCircuit[] {
    if (this.raises.size === 0) return [];
    const now = new Map(readings.map((r) => [r.circuitId, r.currentA]));
    return site.circuits.flatMap((circuit) => {
      const afterA = now.get(circuit.id);
      if (!circuit.metered || !afterA) return [];
      const below = connectorsBelow(site, circuit.id);
      const raised = new Map(
        PHASES.map((p) => {
          const keys = below.filter((k) => this.raises.has(k.id) && loadsPhase(k, p)).map((k) => k.id);
          return [p, { addedA: keys.reduce((sum, key) => sum + this.addedA(key, open), 0), count: keys.length }];
        }),
      );
      return [{ circuitId: circuit.id, afterA, below: new Set(below.map((k) => k.id)), raised }];
    });
  }

  /** What a connector's pending raise adds to its car's last report. */
  private addedA(connectorKey: string, open: ReadonlyMap<string, DrawingTransaction>): number {
    return Math.max(0, (this.raises.get(connectorKey)?.toA ?? 0) - (open.get(connectorKey)?.reported?.currentA ?? 0));
  }

  /**
   * The increase the meters above a raised connector show since its raise, per phase it loads, shared among the
   * connectors raised and loading that phase there in proportion to what each raise adds to its car's last report
   * (cars raised together by different amounts take different shares of it); the least of them, none below 0.
   * Undefined without a metered circuit above that reads now; 0 when one did not read at the raise (nothing to count
   * from).
   */
  private increaseA(
    connector: ConnectorFacts,
    raise: PendingRaise,
    circuits: readonly RaisedCircuit[],
    addedA: number,
  ): number | undefined {
    const increases = circuits
      .filter((c) => c.below.has(connector.id))
      .flatMap((c) => {
        const beforeA = raise.readingsA.get(c.circuitId);
        return PHASES.filter((p) => loadsPhase(connector, p)).map((p) => {
          const together = c.raised.get(p) ?? { addedA: 0, count: 1 };
          const share = together.addedA > 0 ? addedA / together.addedA : 1 / together.count;
          return beforeA ? (c.afterA[p] - beforeA[p]) * share : 0;
        });
      });
    return increases.length === 0 ? undefined : Math.max(0, Math.min(...increases));
  }

  /**
   * Asks a raised car's station to report once the car had time to take its raise, unless it reported meanwhile. A
   * station that refuses is logged once and not asked again until it boots; its car's raise is counted from the meter
   * until its next periodic report, or the estimate window.
   */
  private askForReport(connectorKey: string, station: StationConnector): void {
    const { limits, logger, clock } = this.options;
    const cancel = clock.after(this.options.reportAfterRaiseMs ?? REPORT_AFTER_RAISE_MS, () => {
      this.reportTimers.delete(cancel);
      const { stationId, connectorId } = station;
      if (!this.raises.has(connectorKey) || this.unreporting.has(stationId)) return;
      void limits.requestDrawReport(stationId, connectorId).then(
        (outcome) => {
          if ((outcome !== 'rejected' && outcome !== 'notSupported') || this.unreporting.has(stationId)) return;
          this.unreporting.add(stationId);
          logger.warn(
            { stationId, outcome },
            'station does not report on request: a raise is counted from the circuit meter until its next report',
          );
        },
        (err: unknown) => logger.error({ err, stationId }, 'report request not sent'),
      );
    });
    this.reportTimers.add(cancel);
  }
}

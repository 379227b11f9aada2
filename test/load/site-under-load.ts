import type { MeterValues } from '../support/meter-simulator.js';
import type { SimulatedStation } from '../support/station.js';
import { StationV201 } from '../support/station-v201.js';

/** Per phase, L1 to L3. */
export type Phases = [number, number, number];

/** Where a car plugs in: a 1.6 station's connector or a 2.0.1 station's EVSE. Every car here is three-phase. */
export interface CarPort {
  name: string;
  station: SimulatedStation | StationV201;
  connectorId: number;
}

/** Something the test did that may raise what the site draws: the controller has 2 s to answer it. */
export interface Step {
  atMs: number;
  what: string;
}

/** What the site drew at one instant, and the limit each port's station obeyed then. */
export interface Sample {
  atMs: number;
  /** The most loaded phase. */
  peakA: number;
  limits: ReadonlyMap<string, number | undefined>;
  charging: ReadonlySet<string>;
}

/**
 * A charging car's limit going up (a raise: something chargegate sent, or a profile lapsing) or down between two
 * samples.
 */
export interface LimitChange {
  atMs: number;
  name: string;
  fromA: number;
  toA: number;
}

const VOLTS = 230;

/**
 * A site's physics for the load scenarios (docs/configuration/circuits.md#circuits-load-management): cars on simulated stations draw what
 * their station's profiles allow (min of the car's demand and the profile stack's limit, from the instant the
 * station took the profile: the stations react at once), other load draws what the test sets, and a circuit meter
 * that follows currentA() sees their sum right now. Each charging station reports its car's draw as Current.Import
 * every reportMs, as a station's periodic MeterValues do, and when asked (TriggerMessage MeterValues); unless
 * reportOnChange is false, also as soon as it changes (noticed at the next sample), as a 2.0.1 station does with a
 * TransactionEvent triggered by ChargingRateChanged. The site is sampled every sampleMs
 * (wall-clock ms, the clock validTo and the meter simulator's requests use) to judge the promise afterwards.
 */
export class SiteUnderLoad {
  readonly steps: Step[] = [];
  readonly samples: Sample[] = [];
  private otherA: Phases;
  /** The running transaction of each port with a car, by the station's own id. */
  private readonly transactions = new Map<string, number | string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly ports: ReadonlyMap<string, CarPort>;
  /** What each charging station last reported its car draws. */
  private readonly reported = new Map<string, number>();

  constructor(
    private readonly options: {
      limitA: number;
      otherA: Phases;
      ports: CarPort[];
      sampleMs: number;
      reportMs: number;
      reportOnChange?: boolean;
    },
  ) {
    this.otherA = options.otherA;
    this.ports = new Map(options.ports.map((p) => [p.name, p]));
  }

  /** Starts sampling and the stations' reports, until stop(). */
  start(): void {
    this.sample();
    this.timers.push(
      setInterval(() => {
        this.sample();
        if (this.options.reportOnChange ?? true) this.report((name) => this.drawnA(name) !== this.reported.get(name));
      }, this.options.sampleMs),
      setInterval(() => this.report(() => true), this.options.reportMs),
    );
  }

  /** A last sample, and no more. */
  stop(): void {
    if (this.timers.length === 0) return;
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    this.sample();
  }

  /** What the circuit meter measures now: the other load plus every car's draw, on each phase. */
  currentA(at = new Date()): Phases {
    const carsA = [...this.transactions.keys()].reduce((sum, name) => sum + this.drawnA(name, at), 0);
    return this.otherA.map((a) => a + carsA) as Phases;
  }

  /** The registers a `role: circuit` meter following the site shows. */
  meterValues(): MeterValues {
    const currentA = this.currentA();
    return { energyKWh: 1000, currentA, powerW: currentA.reduce((sum, a) => sum + a * VOLTS, 0) };
  }

  /**
   * Sets the other load (the building, a heat pump); a rise on any phase is a step. Returns when, as sampled just
   * before: what the site did before that instant is sampled before it.
   */
  setOther(otherA: Phases, what: string): number {
    const atMs = this.sample();
    if (otherA.some((a, i) => a > (this.otherA[i] ?? 0))) this.steps.push({ atMs, what });
    this.otherA = otherA;
    // The site as the step leaves it, before the gateway can act: the step shows in the samples even when a loaded
    // machine starves the sampling timer until the cars are lowered.
    this.sample();
    return atMs;
  }

  /** A car plugs in and its station starts a transaction: a step, as the car draws the fail-safe at once. */
  async arrive(name: string, idTag = `TAG-${name}`): Promise<void> {
    const { station, connectorId } = this.port(name);
    this.steps.push({ atMs: this.sample(), what: `${name} arrives` });
    if (station instanceof StationV201) {
      const transactionId = station.newTransactionId();
      await station.transactionEvent('Started', transactionId, {
        evseId: connectorId,
        idToken: idTag,
        chargingState: 'Charging',
      });
      this.transactions.set(name, transactionId);
    } else {
      this.transactions.set(name, await station.startTransaction({ connectorId, idTag }));
    }
  }

  /** The car leaves: its station ends the transaction. */
  async leave(name: string): Promise<void> {
    this.sample();
    const { station } = this.port(name);
    const transactionId = this.transactions.get(name);
    if (transactionId === undefined) throw new Error(`no car at ${name}`);
    if (station instanceof StationV201)
      await station.transactionEvent('Ended', String(transactionId), { stoppedReason: 'EVDisconnected' });
    else await station.stopTransaction({ transactionId: Number(transactionId), reason: 'EVDisconnected' });
    this.transactions.delete(name);
    this.reported.delete(name);
  }

  /** The limit the port's station obeys at `at` (its profile stack); undefined: none. */
  limitA(name: string, at = new Date()): number | undefined {
    const { station, connectorId } = this.port(name);
    return station.limitA(connectorId, at);
  }

  /** Until when the TxProfile the port's station holds is valid; undefined: it holds none, or one without validTo. */
  transactionProfileValidTo(name: string): Date | undefined {
    const { station, connectorId } = this.port(name);
    return station.profiles.profilesOf(connectorId).find((p) => p.purpose === 'TxProfile')?.validTo;
  }

  drawnA(name: string, at = new Date()): number {
    const { station, connectorId } = this.port(name);
    return station.drawnA(connectorId, at);
  }

  /** How long, up to the last sample, the named ports' sampled limits have met `holds` (0 when they do not now). */
  heldMs(names: readonly string[], holds: (limitsA: Array<number | undefined>) => boolean): number {
    const meets = (s: Sample) => holds(names.map((name) => s.limits.get(name)));
    const last = this.samples.at(-1);
    if (!last || !meets(last)) return 0;
    const since = this.samples.findLast((s) => !meets(s)) ?? this.samples[0]!;
    return last.atMs - since.atMs;
  }

  /** Samples where the site drew more than its limit on some phase. */
  overLimit(): Sample[] {
    return this.samples.filter((s) => s.peakA > this.options.limitA + 1e-9);
  }

  /** A charging car's limit rising between two samples. */
  raises(): LimitChange[] {
    return this.limitChanges().filter((c) => c.toA > c.fromA);
  }

  /** A charging car's limit falling between two samples. */
  lowerings(): LimitChange[] {
    return this.limitChanges().filter((c) => c.toA < c.fromA);
  }

  /**
   * Over-limit samples the promise does not excuse: those more than boundMs after the last step, and those after a
   * raise that came since that step (over the limit because chargegate raised something).
   */
  unexcused(boundMs: number): Array<Sample & { why: string }> {
    const raises = this.raises();
    return this.overLimit().flatMap((sample) => {
      const step = this.steps.filter((s) => s.atMs <= sample.atMs).at(-1);
      if (!step) return [{ ...sample, why: 'over the limit with nothing changed since the start' }];
      if (sample.atMs - step.atMs > boundMs)
        return [{ ...sample, why: `${sample.atMs - step.atMs} ms after "${step.what}"` }];
      const raise = raises.find((r) => r.atMs > step.atMs && r.atMs <= sample.atMs);
      return raise ? [{ ...sample, why: `after ${raise.name} was raised to ${raise.toA} A` }] : [];
    });
  }

  private limitChanges(): LimitChange[] {
    const changes: LimitChange[] = [];
    this.samples.forEach((sample, i) => {
      const before = this.samples[i - 1];
      if (!before) return;
      for (const name of sample.charging) {
        const fromA = before.limits.get(name);
        const toA = sample.limits.get(name);
        if (before.charging.has(name) && fromA !== undefined && toA !== undefined && toA !== fromA)
          changes.push({ atMs: sample.atMs, name, fromA, toA });
      }
    });
    return changes;
  }

  private port(name: string): CarPort {
    const port = this.ports.get(name);
    if (!port) throw new Error(`no port ${name}`);
    return port;
  }

  private sample(): number {
    const at = new Date();
    this.samples.push({
      atMs: at.getTime(),
      peakA: Math.max(...this.currentA(at)),
      limits: new Map([...this.ports.keys()].map((name) => [name, this.limitA(name, at)])),
      charging: new Set(this.transactions.keys()),
    });
    return at.getTime();
  }

  /** The charging stations `due` says report their car's draw; one the gateway does not hear (it is down) fails. */
  private report(due: (name: string) => boolean): void {
    for (const name of [...this.transactions.keys()].filter(due)) {
      const { station, connectorId } = this.port(name);
      this.reported.set(name, this.drawnA(name));
      void station.reportDrawn(connectorId).catch(() => undefined);
    }
  }
}

import type { ChargingLimits, CsmsSchedules, LimitOutcome, TransactionLimit } from './charging-limits.js';
import { constant, lowerOf, periodsOf, scaled, stationPhases, within, type Steps, type Window } from './schedules.js';

/**
 * The fail-safe a station holds as its TxDefaultProfile (docs/configuration/circuits.md#circuits-load-management): what a car runs on
 * before load management's limit reaches it, and whenever chargegate cannot steer. Under an operator's CSMS
 * (docs/design/uplink.md#uplink-what-the-csms-sees) it is, at every instant, the lower of the circuit's fail-safe and what the CSMS allows any
 * connector of the station without a transaction profile of its own: its TxDefaultProfiles, and its station maximum
 * split evenly between the connectors (all of them may charge on the fail-safe at once).
 */

/** How far ahead the fail-safe follows the CSMS's schedule exactly; it is renewed halfway. */
export const FAILSAFE_HORIZON_MS = 86_400_000;
/**
 * At most this many periods (stations hold few: 1.6's ChargingScheduleMaxPeriods is often 24): past them, and past
 * the horizon, the lowest limit that follows holds, as the last period of a profile without a duration does.
 */
export const FAILSAFE_MAX_PERIODS = 24;

/** A station's managed connectors, as the fail-safe covers them. */
export interface FailsafeConnector {
  connectorId: number;
  phases: 1 | 3;
  failsafeA: number;
}

/** The fail-safe as the station holds it once sent. */
export interface Failsafe {
  /** From when it was decided; the last step holds past the window's end. */
  held: Steps<number>;
  /** Until when it follows the CSMS exactly; afterwards its lowest limit holds. */
  exactUntilMs: number;
}

/**
 * The fail-safe decided at nowMs. `flat`: for a station that refused one that changes, the lowest of it throughout.
 */
export function failsafeOf(
  stationId: string,
  connectors: readonly FailsafeConnector[],
  csms: CsmsSchedules | undefined,
  nowMs: number,
  flat = false,
): Failsafe {
  // Whole seconds, as periods count: one decided a moment later lines up with this one.
  const fromMs = Math.floor(nowMs / 1000) * 1000;
  const window = { fromMs, toMs: fromMs + FAILSAFE_HORIZON_MS };
  let exact: Steps<number> = constant(window, Math.min(...connectors.map((c) => c.failsafeA)));
  if (csms) {
    for (const { connectorId, phases } of connectors)
      exact = lowerOf(exact, csms.scheduleOf(stationId, { connectorId, phases, anyStart: true }, window));
    const maximum = csms.scheduleOf(stationId, { connectorId: 0, phases: stationPhases(connectors) }, window);
    exact = lowerOf(exact, scaled(maximum, 1 / connectors.length));
  }
  const periods = periodsOf(exact);
  // Past its exact part, the lowest it saw; the renewal halfway looks a day further.
  const tail = Math.min(...periods.map((p) => p.limit));
  if (flat) return { held: constant(window, tail), exactUntilMs: window.toMs };
  const kept = periods.slice(0, FAILSAFE_MAX_PERIODS - 1);
  const rest = periods.slice(kept.length);
  const exactUntilMs = rest.length > 0 ? fromMs + rest[0]!.startS * 1000 : window.toMs;
  const tailS = (exactUntilMs - fromMs) / 1000;
  const steps = kept.at(-1)!.limit === tail ? kept : [...kept, { startS: tailS, limit: tail }];
  const toMs = Math.max(window.toMs, fromMs + (tailS + 1) * 1000);
  return {
    held: { window: { fromMs, toMs }, steps: steps.map((p) => ({ atMs: fromMs + p.startS * 1000, limitA: p.limit })) },
    exactUntilMs,
  };
}

/** The fail-safe as a limit from when it was decided: its first period, then where it changes. */
export function failsafeLimit(failsafe: Failsafe): { currentA: number; changes?: TransactionLimit['changes'] } {
  const [first, ...changes] = failsafe.held.steps;
  const from = failsafe.held.window.fromMs;
  return {
    currentA: first!.limitA,
    ...(changes.length > 0 && {
      changes: {
        from: new Date(from),
        steps: changes.map((s) => ({ afterS: (s.atMs - from) / 1000, currentA: s.limitA })),
      },
    }),
  };
}

/** Whether half the exact part of a held fail-safe that changes has passed: its tail draws near. */
function halfwayPassed(held: Failsafe, nowMs: number): boolean {
  const { fromMs } = held.held.window;
  return held.held.steps.length > 1 && nowMs >= fromMs + (held.exactUntilMs - fromMs) / 2;
}

/**
 * Whether the station should get the fail-safe again at nowMs (`now`: the one decided then): one that changes, once
 * half its exact part has passed; else when the two differ anywhere both are exact. One that does not change is exact
 * for as long as it is held: a lower limit the CSMS sets far ahead is seen as it comes within the horizon, a day
 * before it applies.
 */
export function failsafeDue(held: Failsafe, now: Failsafe, nowMs: number): boolean {
  if (halfwayPassed(held, nowMs)) return true;
  const changes = held.held.steps.length > 1;
  const overlap = { fromMs: nowMs, toMs: Math.min(changes ? held.exactUntilMs : Infinity, now.exactUntilMs) };
  return JSON.stringify(within(held.held, overlap).steps) !== JSON.stringify(within(now.held, overlap).steps);
}

/**
 * A station that connects without booting (chargegate restarted, or the network came back) is sent its fail-safe this
 * long after: one that boots gets it at its boot, once it is accepted.
 */
export const CONNECTED_GRACE_MS = 5_000;
/** Unless the CSMS's profiles or the config changed, what a held fail-safe should be is worked out again this often. */
const RECHECK_MS = 60_000;

/** A connected station's fail-safe. */
interface StationState {
  /** As the station holds it, once it accepted it; unknown: to be sent. */
  held?: Failsafe;
  sending: boolean;
  /** Not sent before (a station that just connected may boot first). */
  notBeforeMs: number;
  /** When what it should be was last worked out, and as of which change. */
  checkedAtMs: number;
  checkedChange: number;
}

export interface StationFailsafesOptions {
  limits: ChargingLimits;
  csms?: CsmsSchedules;
  /**
   * Stations that refused a profile that changes (too many periods for them, or no Absolute ones): they get the
   * lowest of it throughout, until they boot again. Shared with the transactions' profiles.
   */
  schedulesRefused: Set<string>;
  /** The station's managed connectors now (none: it is not managed). */
  connectorsOf(stationId: string): FailsafeConnector[];
  /** It refuses the fail-safe itself: its connectors are uncontrolled until it boots again. */
  refused(stationId: string, outcome: LimitOutcome): void;
  /** Sending failed for no answer of the station's (a bug of ours): tried again at the next renewal. */
  failed(stationId: string, err: unknown): void;
  /** The station took it. */
  accepted(stationId: string): void;
}

/**
 * Keeps each connected managed station's fail-safe what it should be: sent when the station boots (or connects
 * without booting), again when the CSMS's profiles or the config change it, and before its exact part runs out.
 */
export class StationFailsafes {
  private readonly stations = new Map<string, StationState>();
  /** Stations that refused the fail-safe: counted uncontrolled, sent nothing more until they boot (not reconnect). */
  private readonly refusing = new Set<string>();
  /** Counts changes to what every fail-safe should be (the config). */
  private change = 0;
  private stopped = false;

  constructor(private readonly options: StationFailsafesOptions) {}

  /** A station connected: unless it boots meanwhile, its fail-safe is sent after CONNECTED_GRACE_MS. */
  connected(stationId: string, nowMs: number): void {
    if (!this.stations.has(stationId)) this.stations.set(stationId, this.fresh(nowMs + CONNECTED_GRACE_MS));
  }

  disconnected(stationId: string): void {
    this.stations.delete(stationId);
  }

  /** A station booted: it may have lost its profiles, and one that refused may take them now. */
  booted(stationId: string, nowMs: number): void {
    this.options.schedulesRefused.delete(stationId);
    this.refusing.delete(stationId);
    const state = this.fresh(nowMs);
    this.stations.set(stationId, state);
    this.renewOne(stationId, state, nowMs);
  }

  /**
   * What a station's fail-safe should be may have changed (its CSMS profiles), or every station's (the config): worked
   * out again at the next renewal.
   */
  changed(stationId?: string): void {
    if (stationId === undefined) this.change += 1;
    else {
      const state = this.stations.get(stationId);
      if (state) state.checkedChange = -1;
    }
  }

  /** At every step: each station whose fail-safe is due gets it. */
  renew(nowMs: number): void {
    for (const [stationId, state] of this.stations) this.renewOne(stationId, state, nowMs);
  }

  /** What the station holds over the window, or will once it takes it. */
  over(stationId: string, window: Window): Steps<number> | undefined {
    const failsafe = this.stations.get(stationId)?.held ?? this.decide(stationId, window.fromMs);
    return failsafe && within(failsafe.held, window);
  }

  stop(): void {
    this.stopped = true;
  }

  private fresh(notBeforeMs: number): StationState {
    return { sending: false, notBeforeMs, checkedAtMs: -Infinity, checkedChange: this.change };
  }

  private renewOne(stationId: string, state: StationState, nowMs: number): void {
    // A wall clock set back by more than the grace must not hold the station back for as long.
    const waiting = nowMs < state.notBeforeMs && state.notBeforeMs - nowMs <= CONNECTED_GRACE_MS;
    if (state.sending || this.refusing.has(stationId) || waiting) return;
    const { held } = state;
    const recheck =
      !held ||
      state.checkedChange !== this.change ||
      nowMs < state.checkedAtMs ||
      nowMs - state.checkedAtMs >= RECHECK_MS ||
      halfwayPassed(held, nowMs);
    if (!recheck) return;
    state.checkedAtMs = nowMs;
    state.checkedChange = this.change;
    const should = this.decide(stationId, nowMs);
    // Not managed (now): sent once it is.
    if (!should) delete state.held;
    else if (!held || failsafeDue(held, should, nowMs)) this.send(stationId, state, should, nowMs);
  }

  private decide(stationId: string, nowMs: number): Failsafe | undefined {
    const connectors = this.options.connectorsOf(stationId);
    if (connectors.length === 0) return undefined;
    return failsafeOf(stationId, connectors, this.options.csms, nowMs, this.options.schedulesRefused.has(stationId));
  }

  private send(stationId: string, state: StationState, failsafe: Failsafe, nowMs: number): void {
    if (this.stopped) return;
    state.sending = true;
    const { currentA, changes } = failsafeLimit(failsafe);
    this.options.limits.setFailsafe(stationId, currentA, changes).then(
      (outcome) => {
        if (this.stations.get(stationId) !== state) return;
        state.sending = false;
        if (outcome === 'accepted') {
          state.held = failsafe;
          this.options.accepted(stationId);
        } else if (outcome === 'timeout') delete state.held;
        else if (outcome === 'offline') {
          // Gone (disconnected() follows), or its old socket closed under a new connection: that one's turn.
          delete state.held;
          state.notBeforeMs = nowMs + CONNECTED_GRACE_MS;
        } else if (outcome === 'rejected' && changes) {
          this.options.schedulesRefused.add(stationId);
          delete state.held;
          this.renewOne(stationId, state, nowMs);
        } else {
          this.refusing.add(stationId);
          this.options.refused(stationId, outcome);
        }
      },
      (err: unknown) => {
        if (this.stations.get(stationId) !== state) return;
        state.sending = false;
        delete state.held;
        this.options.failed(stationId, err);
      },
    );
  }
}

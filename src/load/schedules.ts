import { VOLTS_PER_PHASE } from './circuit-load.js';

/**
 * Limits that change over time, and the charging profiles that make them (docs/design/uplink.md#uplink-what-the-csms-sees, charging
 * profiles): a CSMS's profiles stacked into the limit they put on a connector, that limit combined with load
 * management's, and the result as the periods a profile or a composite schedule carries. Pure, in load's own words:
 * the OCPP 1.6 and 2.0.1 adapters (src/uplink) translate their messages into LimitProfile.
 */

/** Wall-clock time, ms since the epoch: [fromMs, toMs). */
export interface Window {
  fromMs: number;
  toMs: number;
}

/** A limit in A per phase from atMs until the next step (the last one: until the window's end); undefined: none. */
export interface Step<L = number | undefined> {
  atMs: number;
  limitA: L;
}

/** A limit over a window: the first step at its start, then in time order, no two neighbours alike. */
export interface Steps<L = number | undefined> {
  window: Window;
  steps: ReadonlyArray<Step<L>>;
}

/**
 * What a profile is for, stacked as OCPP stacks them: the station's maximum (1.6 ChargePointMaxProfile, 2.0.1
 * ChargingStationMaxProfile) caps every connector, a transaction's own profile (TxProfile) prevails over the default
 * (TxDefaultProfile).
 */
export type ProfilePurpose = 'stationMaximum' | 'transactionDefault' | 'transaction';

export interface SchedulePeriod {
  /** Seconds from the schedule's start. */
  startS: number;
  /** In the schedule's unit: A per phase, or W for the whole connector. */
  limit: number;
}

/** A charging profile, whichever OCPP version sent it. Times are wall-clock ms. */
export interface LimitProfile {
  id: number;
  stackLevel: number;
  purpose: ProfilePurpose;
  /** absolute: from startMs; recurring: from startMs, again every day or week; relative: from the transaction's start. */
  kind: 'absolute' | 'recurring' | 'relative';
  recurrency?: 'daily' | 'weekly';
  validFromMs?: number;
  validToMs?: number;
  schedule: {
    startMs?: number;
    durationS?: number;
    unit: 'A' | 'W';
    /** In startS order, the first at 0. */
    periods: readonly SchedulePeriod[];
  };
}

/** A profile as kept for a connector of a station (0: the whole station). */
export interface PlacedProfile {
  connectorId: number;
  profile: LimitProfile;
  /** An absolute or recurring schedule without a start starts when it was received (as a station takes it). */
  receivedAtMs: number;
  /** chargegate's id of the transaction a transaction profile belongs to. */
  transactionId?: number;
}

/** The connector a composite is for. */
export interface ConnectorPlace {
  connectorId: number;
  /** A W limit is this many phases at 230 V each (docs/configuration/circuits.md#circuits-load-management). */
  phases: 1 | 3;
  /** The transaction running on it: its own profiles apply, relative schedules count from its start. */
  transaction?: { id: number; startedAtMs: number };
  /**
   * For whichever transaction starts on it, at any time (a fail-safe): a relative schedule counts from a start not
   * known yet, so its lowest period holds throughout.
   */
  anyStart?: boolean;
}

/** The phases a W limit on a whole station (connector 0) counts: three if any of its connectors has three. */
export function stationPhases(connectors: ReadonlyArray<{ phases: 1 | 3 }>): 1 | 3 {
  return connectors.some((c) => c.phases === 3) ? 3 : 1;
}

const RECURRENCE_MS = { daily: 86_400_000, weekly: 604_800_000 };

/** A limit that holds over the whole window. */
export function constant<L extends number | undefined>(window: Window, limitA: L): Steps<L> {
  return { window, steps: [{ atMs: window.fromMs, limitA }] };
}

/** The limit at an instant of the window. */
export function limitAt<L>(steps: Steps<L>, atMs: number): L {
  let current = steps.steps[0]!.limitA;
  for (const step of steps.steps) {
    if (step.atMs > atMs) break;
    current = step.limitA;
  }
  return current;
}

/**
 * At every instant the lower of the two; no limit counts as none (the other one's holds), so the result has a limit
 * wherever the first has.
 */
export function lowerOf<L extends number | undefined>(a: Steps<L>, b: Steps): Steps<L> {
  return combine(a, b, (x, y) => (y === undefined ? x : x === undefined ? y : Math.min(x, y)) as L);
}

/** At every instant the lower of the limit and `limitA` (no limit: `limitA`). */
export function capped(steps: Steps, limitA: number): Steps<number> {
  return lowerOf(constant(steps.window, limitA), steps);
}

/**
 * The limit read over another window: the one at its start, then each change inside it; past the end of its own
 * window the last step holds (as a profile's last period does).
 */
export function within<L>(steps: Steps<L>, window: Window): Steps<L> {
  const inside = steps.steps.filter((s) => s.atMs > window.fromMs && s.atMs < window.toMs);
  return { window, steps: [{ atMs: window.fromMs, limitA: limitAt(steps, window.fromMs) }, ...inside] };
}

/** At every instant the sum of two limits (connectors of one station): none where either has none. */
export function sumOf<L extends number | undefined>(a: Steps<L>, b: Steps<L>): Steps<L> {
  return combine(a, b, (x, y) => (x === undefined || y === undefined ? undefined : x + y) as L);
}

/** Every limit multiplied (A per phase to W, say); none stays none. */
export function scaled<L extends number | undefined>(steps: Steps<L>, factor: number): Steps<L> {
  return {
    window: steps.window,
    steps: steps.steps.map((s) => ({
      atMs: s.atMs,
      limitA: (s.limitA === undefined ? s.limitA : s.limitA * factor) as L,
    })),
  };
}

/**
 * The periods of a profile or a composite schedule, in whole seconds from the window's start (OCPP counts them so),
 * limits rounded down to the 0.1 they are sent in: each second carries the lowest limit any part of it had, so a
 * lowering is never late and a raise never early.
 */
export function periodsOf(steps: Steps<number>): SchedulePeriod[] {
  const { fromMs, toMs } = steps.window;
  // A step inside a second starts its own period after it: that second takes the lower of the two.
  const starts = [
    ...new Set(steps.steps.flatMap((s) => [Math.floor((s.atMs - fromMs) / 1000), Math.ceil((s.atMs - fromMs) / 1000)])),
  ]
    .filter((startS) => fromMs + startS * 1000 < toMs)
    .sort((a, b) => a - b);
  const all = steps.steps;
  const periods: SchedulePeriod[] = [];
  // One sweep: both in time order, a step overlaps the few periods around its own start and end.
  let first = 0;
  starts.forEach((startS, i) => {
    const endMs = i + 1 < starts.length ? fromMs + starts[i + 1]! * 1000 : toMs;
    const beginMs = fromMs + startS * 1000;
    while (first + 1 < all.length && all[first + 1]!.atMs <= beginMs) first += 1;
    let lowest = all[first]!.limitA;
    for (let j = first + 1; j < all.length && all[j]!.atMs < endMs; j += 1) lowest = Math.min(lowest, all[j]!.limitA);
    const limit = roundedDown(lowest);
    if (periods.at(-1)?.limit !== limit) periods.push({ startS, limit });
  });
  return periods;
}

/**
 * What a connector's profiles allow it over the window, stacked as OCPP stacks them (see ProfilePurpose). One sweep in
 * time order: each profile's own limit is read again only at its own breakpoints, so the cost grows with the periods
 * in the window times the profiles stacked, not with their square (a connector may have 48 CSMS profiles of 1,000
 * periods).
 */
export function compositeOf(profiles: readonly PlacedProfile[], place: ConnectorPlace, window: Window): Steps {
  // Highest rank first (rankOf; stable: at the same rank, the order given), as prevailing() reads them.
  const relevant = profiles.filter((p) => applies(p, place)).sort((a, b) => rankOf(b) - rankOf(a));
  const limits = relevant.map((p) => profileLimitAt(p, place, window.fromMs));
  // Each profile's breakpoints inside the window in time order, and where the sweep stands in them; numbers only, so
  // a week of a daily schedule of 1,000 periods on 48 profiles sorts in milliseconds.
  const breaks = relevant.map((p) =>
    Float64Array.from(breakpoints(p, place, window).filter((t) => t > window.fromMs && t < window.toMs)).sort(),
  );
  const passed = breaks.map(() => 0);
  const instants = new Float64Array(breaks.reduce((n, a) => n + a.length, 0));
  breaks.reduce((offset, a) => (instants.set(a, offset), offset + a.length), 0);
  instants.sort();
  const anyStart = place.anyStart === true && place.transaction === undefined;
  const ofPurpose = (purpose: ProfilePurpose): number[] =>
    relevant.flatMap((p, i) => (p.profile.purpose === purpose ? [i] : []));
  const [transactions, defaults, maximums] = [
    ofPurpose('transaction'),
    ofPurpose('transactionDefault'),
    ofPurpose('stationMaximum'),
  ];
  const at = (): number | undefined => {
    const own = prevailing(relevant, limits, transactions, anyStart);
    const limit = own ?? prevailing(relevant, limits, defaults, anyStart);
    const cap = prevailing(relevant, limits, maximums, anyStart);
    return limit === undefined ? cap : cap === undefined ? limit : Math.min(limit, cap);
  };
  const steps: Array<Step<number | undefined>> = [{ atMs: window.fromMs, limitA: at() }];
  // Plain loops: this body runs at every breakpoint of every profile.
  for (let k = 0; k < instants.length; k += 1) {
    const atMs = instants[k]!;
    if (instants[k - 1] === atMs) continue;
    for (let i = 0; i < breaks.length; i += 1) {
      const a = breaks[i]!;
      if (a[passed[i]!] !== atMs) continue;
      while (a[passed[i]!] === atMs) passed[i]! += 1;
      limits[i] = profileLimitAt(relevant[i]!, place, atMs);
    }
    const limitA = at();
    if (steps.at(-1)!.limitA !== limitA) steps.push({ atMs, limitA });
  }
  return { window, steps };
}

/** The limit one profile puts on the connector at t, in A per phase; undefined when it is not valid or not running. */
export function profileLimitAt(placed: PlacedProfile, place: ConnectorPlace, t: number): number | undefined {
  const { profile } = placed;
  if (profile.validFromMs !== undefined && t < profile.validFromMs) return undefined;
  if (profile.validToMs !== undefined && t >= profile.validToMs) return undefined;
  const { schedule } = profile;
  if (profile.kind === 'relative' && place.transaction === undefined && place.anyStart)
    return Math.min(...schedule.periods.map((p) => inUnitOf(schedule.unit, p.limit, place)));
  let offsetMs = t - startOf(placed, place, t);
  if (offsetMs < 0) return undefined;
  if (profile.kind === 'recurring') offsetMs %= RECURRENCE_MS[profile.recurrency ?? 'daily'];
  if (schedule.durationS !== undefined && offsetMs >= schedule.durationS * 1000) return undefined;
  const period = periodAt(schedule.periods, offsetMs);
  if (!period) return undefined;
  return inUnitOf(schedule.unit, period.limit, place);
}

/** A period's limit in A per phase. */
function inUnitOf(unit: 'A' | 'W', limit: number, place: ConnectorPlace): number {
  return unit === 'A' ? limit : limit / (VOLTS_PER_PHASE * place.phases);
}

/** The period running offsetMs into the schedule (periods in startS order), by halving: read at every breakpoint. */
function periodAt(periods: readonly SchedulePeriod[], offsetMs: number): SchedulePeriod | undefined {
  let [low, high] = [0, periods.length];
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (periods[mid]!.startS * 1000 <= offsetMs) low = mid + 1;
    else high = mid;
  }
  return periods[low - 1];
}

/** Tenths of an ampere (or of a watt), down: a limit sent is never above the one meant. */
function roundedDown(limit: number): number {
  return Math.floor(limit * 10 + 1e-6) / 10;
}

/**
 * The two read together at the window's start and at each step of either inside it, neighbours alike merged: one
 * pass over both (a CSMS's daily schedule over a week is thousands of steps).
 */
function combine<A, B, C>(a: Steps<A>, b: Steps<B>, f: (x: A, y: B) => C): Steps<C> {
  const { window } = a;
  const steps: Array<Step<C>> = [];
  let i = 0;
  let k = 0;
  for (let atMs = window.fromMs; atMs < window.toMs;) {
    while (i + 1 < a.steps.length && a.steps[i + 1]!.atMs <= atMs) i += 1;
    while (k + 1 < b.steps.length && b.steps[k + 1]!.atMs <= atMs) k += 1;
    const limitA = f(a.steps[i]!.limitA, b.steps[k]!.limitA);
    if (steps.length === 0 || steps.at(-1)!.limitA !== limitA) steps.push({ atMs, limitA });
    atMs = Math.min(a.steps[i + 1]?.atMs ?? Infinity, b.steps[k + 1]?.atMs ?? Infinity);
  }
  return { window, steps };
}

/**
 * Whether a profile can limit this connector: a transaction's only on its connector while that transaction runs, a
 * default on its connector or the whole station's, the maximum from the whole station. Connector 0, the station as a
 * whole, has only its maximum: the others limit each connector.
 */
function applies(p: PlacedProfile, place: ConnectorPlace): boolean {
  switch (p.profile.purpose) {
    case 'transaction':
      return (
        p.connectorId === place.connectorId && place.connectorId !== 0 && p.transactionId === place.transaction?.id
      );
    case 'transactionDefault':
      return place.connectorId !== 0 && (p.connectorId === place.connectorId || p.connectorId === 0);
    case 'stationMaximum':
      return p.connectorId === 0;
  }
}

/**
 * The limit of the purpose's profile that prevails now (`limits`: each profile's now; `indexes`: those of the
 * purpose, highest rank first): the highest stack level whose schedule runs, the connector's own before the station's
 * at the same level (OCPP 1.6 §3.13.2, 2.0.1 K "Stacking"). For any start (anyStart), a relative schedule with a
 * duration may have ended for a transaction that started earlier: the one below it counts too, the lowest prevailing
 * (on the safe side: also one below that a longer duration above it would still hide).
 */
function prevailing(
  profiles: readonly PlacedProfile[],
  limits: ReadonlyArray<number | undefined>,
  indexes: readonly number[],
  anyStart: boolean,
): number | undefined {
  // Plain loops, no allocation: this runs at every breakpoint of a composite. First the one that prevails for sure...
  let best = -1;
  for (let k = 0; k < indexes.length && best < 0; k += 1) {
    const i = indexes[k]!;
    if (limits[i] !== undefined && !(anyStart && mayHaveEnded(profiles[i]!))) best = i;
  }
  const bestA = best < 0 ? undefined : limits[best];
  if (!anyStart) return bestA;
  // ...then the lowest of it and those that may have ended not below it (at the same rank, either may prevail).
  let lowest = bestA;
  for (const i of indexes) {
    const p = profiles[i]!;
    const limitA = limits[i];
    if (limitA === undefined || !mayHaveEnded(p)) continue;
    if (best < 0 || rankOf(p) >= rankOf(profiles[best]!)) lowest = Math.min(lowest ?? Infinity, limitA);
  }
  return lowest;
}

/** Stacked above any of a lower rank: a higher stack level, or the connector's own over the station's at one level. */
function rankOf(p: PlacedProfile): number {
  return p.profile.stackLevel * 2 + (p.connectorId === 0 ? 0 : 1);
}

/** A relative schedule with a duration: over for a transaction that started long enough ago. */
function mayHaveEnded(p: PlacedProfile): boolean {
  return p.profile.kind === 'relative' && p.profile.schedule.durationS !== undefined;
}

/**
 * When the schedule counts from: a relative one from the transaction's start (for one yet to start, from now: t), the
 * others from their start or, without one, from when the profile was received.
 */
function startOf(placed: PlacedProfile, place: ConnectorPlace, t: number): number {
  if (placed.profile.kind === 'relative') return place.transaction?.startedAtMs ?? t;
  return placed.profile.schedule.startMs ?? placed.receivedAtMs;
}

/** The instants in the window where the profile's limit may change. */
function breakpoints(placed: PlacedProfile, place: ConnectorPlace, window: Window): number[] {
  const { profile } = placed;
  const { schedule } = profile;
  const bounds = [profile.validFromMs, profile.validToMs].filter((t): t is number => t !== undefined);
  // A relative schedule of a transaction yet to start starts at every instant: its first period holds throughout.
  if (profile.kind === 'relative' && place.transaction === undefined) return bounds;
  const offsetsMs = [
    ...schedule.periods.map((p) => p.startS * 1000),
    ...(schedule.durationS === undefined ? [] : [schedule.durationS * 1000]),
  ];
  const startMs = startOf(placed, place, window.fromMs);
  if (profile.kind !== 'recurring') return [...bounds, ...offsetsMs.map((o) => startMs + o)];
  const everyMs = RECURRENCE_MS[profile.recurrency ?? 'daily'];
  const first = Math.max(0, Math.floor((window.fromMs - startMs) / everyMs));
  const last = Math.floor((window.toMs - startMs) / everyMs);
  const recurrence = [0, ...offsetsMs].filter((o) => o < everyMs);
  const recurrences: number[] = [];
  for (let k = first; k <= last; k += 1) for (const o of recurrence) recurrences.push(startMs + k * everyMs + o);
  return [...bounds, ...recurrences];
}

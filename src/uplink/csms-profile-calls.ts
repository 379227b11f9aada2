import { CHARGE_POINT_DEFAULTS, type Config } from '../config/index.js';
import {
  capped,
  constant,
  lowerOf,
  periodsOf,
  scaled,
  sumOf,
  VOLTS_PER_PHASE,
  type ConnectorComposite,
  type LimitProfile,
  type SchedulePeriod,
  type Steps,
  type Window,
} from '../load/index.js';
import type { Logger } from '../log/index.js';
import type { ActionMap } from '../ocpp/index.js';
import type { ClearCriteria, CsmsProfiles, Refusal, SameLevelRule } from './csms-profiles.js';

/** What the CSMS's charging-profile calls of one station need. */
export interface ProfileCallContext {
  stationId: string;
  profiles: CsmsProfiles;
  /** Whether a charge point of the station is on a circuit now (a reload may change it). */
  onCircuit(): boolean;
  /** The station's connectors in the config (stationConnectors). */
  connectors(): readonly StationConnector[];
  /** Load management's composite of each connector it manages on the station (none while it manages none). */
  composites(window: Window): readonly ConnectorComposite[];
  /** A call on to the station as any CSMS call goes (a remote start is the domain's), resolving with its answer. */
  relay(action: string, params: unknown): Promise<unknown>;
  /** chargegate's id of the transaction a 2.0.1 station knows by its own id; undefined when it knows none. */
  transactionIdOf(stationTransactionId: string): number | undefined;
  log: Logger;
  now(): Date;
}

/**
 * GetCompositeSchedule covers at most this long: load management's limit is the one it stands at now, and a month of
 * daily schedules is already more than a CSMS plans with.
 */
const MAX_COMPOSITE_S = 7 * 86_400;

/**
 * The most periods taken in a CSMS's schedule: a minute's resolution over a day is 1,440, and every one is composed
 * on the event loop at each change (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles).
 */
const MAX_PERIODS = 1000;

/** A connector of a station as the config has it: what its composite needs. */
export interface StationConnector {
  connectorId: number;
  phases: 1 | 3;
  maxCurrentA: number;
}

/** The station's connectors (2.0.1: EVSEs) in the config, with their charge point's facts. */
export function stationConnectors(config: Config, stationId: string): StationConnector[] {
  return config.sites.flatMap((site) =>
    (site.stations.find((s) => s.id === stationId)?.chargePoints ?? []).flatMap((cp) => {
      const { phases, maxCurrentA } = site.chargePoints.find((f) => f.id === cp.id) ?? CHARGE_POINT_DEFAULTS;
      return cp.connectors.map((connectorId) => ({ connectorId, phases, maxCurrentA }));
    }),
  );
}

/*
 * The CSMS's charging-profile calls, answered by chargegate (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles): a profile
 * OCPP forbids is refused for every station; for a station on a circuit the profiles are kept and load management
 * sends the station the lower of them and its own limits, so none reaches the station as the CSMS sent it; a station
 * on no circuit gets them as they are, and chargegate keeps a copy to answer GetCompositeSchedule and
 * ClearChargingProfile for it (see Handling). One way for both OCPP versions (keep, clear, composite, remote start),
 * here; each version's calls (v16/profile-calls.ts, v201/profile-calls.ts) only read its messages and write its answers.
 */

/**
 * A version's charging-profile calls by action, typed by its action map as CsmsActions are. Each answers the call, or
 * gives undefined: the call is relayed as any CSMS call. `toStation` relays the params it is given as any CSMS call.
 */
export type ProfileActions<Actions extends ActionMap<Actions>> = {
  [A in keyof Actions]?: (
    ctx: ProfileCallContext,
    params: Actions[A][0],
    toStation: (params: Actions[A][0]) => Promise<Actions[A][1]>,
  ) => Promise<Actions[A][1]> | undefined;
};

/** A version's charging-profile calls: the answer to one, or undefined when it is relayed as any CSMS call. */
export type ProfileCallHandler = (
  ctx: ProfileCallContext,
  action: string,
  params: Record<string, unknown>,
) => Promise<unknown> | undefined;

/**
 * The one place a charging-profile call's action and params take their types, as in csmsCallsOf: ocpp-rpc's strict
 * mode validated the call against the schema of the link's version, which the action map was generated from.
 */
export function profileCallsOf<Actions extends ActionMap<Actions>>(
  actions: ProfileActions<Actions>,
): ProfileCallHandler {
  const handle = <A extends keyof Actions & string>(ctx: ProfileCallContext, action: A, params: Actions[A][0]) =>
    actions[action]?.(ctx, params, (sent) => ctx.relay(action, sent));
  type Action = keyof Actions & string;
  return (ctx, action, params) => handle(ctx, action as Action, params as Actions[Action][0]);
}

export interface KeepRules {
  transactionId?: number;
  sameLevel: SameLevelRule;
  /** Refused already by the version's own rules. */
  refusal?: Refusal;
}

const UNMANAGED = 'the connector is on no circuit: load management could not compose the profile';
const UNKNOWN = 'the station has no such connector in the config';

/** SetChargingProfile: the profile kept, or why not; either way logged. */
export async function keep(
  ctx: ProfileCallContext,
  connectorId: number,
  purpose: string,
  profile: LimitProfile,
  rules: KeepRules,
): Promise<Refusal | undefined> {
  const refusal =
    rules.refusal ??
    oversized(profile) ??
    unmanaged(ctx, connectorId) ??
    (await ctx.profiles.set(ctx.stationId, connectorId, profile, rules));
  const fields = { connectorId, profileId: profile.id, purpose };
  if (refusal) return refused(ctx, fields, refusal);
  ctx.log.info(fields, "CSMS charging profile kept: composed with load management's limits");
  return undefined;
}

/**
 * SetChargingProfile on a station on no circuit: refused as keep() refuses (the bound too), else sent on to the station
 * as the CSMS sent it and, once the station accepted it, kept as well, for GetCompositeSchedule. The station's answer,
 * or the refusal.
 */
export async function sentOnAndKept<A extends { status: string }>(
  ctx: ProfileCallContext,
  connectorId: number,
  purpose: string,
  profile: LimitProfile,
  rules: KeepRules,
  send: () => Promise<A>,
): Promise<A | { status: 'Rejected'; refusal: Refusal }> {
  const fields = { connectorId, profileId: profile.id, purpose };
  const refusal =
    rules.refusal ??
    oversized(profile) ??
    unmanaged(ctx, connectorId) ??
    ctx.profiles.full(ctx.stationId, connectorId, profile, rules.sameLevel);
  if (refusal) return { status: 'Rejected', refusal: refused(ctx, fields, refusal) };
  const answer = await send();
  if (answer.status !== 'Accepted') return answer;
  const notKept = await ctx.profiles.set(ctx.stationId, connectorId, profile, rules);
  if (notKept)
    ctx.log.warn({ ...fields, reason: notKept.why }, 'CSMS charging profile taken by the station but not kept');
  else ctx.log.info(fields, 'CSMS charging profile sent on to the station and kept for its composite');
  return answer;
}

/**
 * ClearChargingProfile on a station on no circuit: the station clears its own, chargegate its copies (none matches
 * undefined criteria). Accepted when chargegate held one, else the station's answer.
 */
export async function clearedOnBoth<A>(
  ctx: ProfileCallContext,
  criteria: ClearCriteria | undefined,
  send: () => Promise<A>,
): Promise<A | { status: 'Accepted' }> {
  const answer = await send();
  return criteria && (await clear(ctx, criteria)) ? { status: 'Accepted' } : answer;
}

/** ClearChargingProfile: only the CSMS's profiles; load management's fail-safe stays. */
export async function clear(ctx: ProfileCallContext, criteria: ClearCriteria): Promise<boolean> {
  const cleared = await ctx.profiles.clear(ctx.stationId, criteria);
  if (cleared) ctx.log.info({ ...criteria }, "CSMS charging profiles cleared; load management's fail-safe stays");
  return cleared;
}

/**
 * GetCompositeSchedule: what the station gets from now on, as chargegate sends it: a connector's composite, or for
 * connector 0 the sum of its connectors' at most the CSMS's station maximum. 'station' for a connector whose station
 * refuses profiles (chargegate limits nothing there: the station is asked), 'rejected' for one load management does
 * not manage.
 */
export function compositeOf(
  ctx: ProfileCallContext,
  connectorId: number,
  duration: number,
  unit: 'A' | 'W',
):
  | { scheduleStart: string; duration: number; chargingRateUnit: 'A' | 'W'; periods: SchedulePeriod[] }
  | 'station'
  | 'rejected' {
  const fromMs = Math.floor(ctx.now().getTime() / 1000) * 1000;
  const durationS = Math.max(1, Math.min(duration, MAX_COMPOSITE_S));
  const window = { fromMs, toMs: fromMs + durationS * 1000 };
  const parts = partsOf(ctx, connectorId, window);
  if (parts.length === 0) return 'rejected';
  if (parts.some((c) => !c.composite)) return 'station';
  const inUnit = <L extends number | undefined>(steps: Steps<L>, phases: number): Steps<L> =>
    unit === 'A' ? steps : scaled(steps, VOLTS_PER_PHASE * phases);
  const total = parts.reduce((sum, c) => sumOf(sum, inUnit(c.composite!, c.phases)), constant<number>(window, 0));
  // The station's maximum limits it as a whole (each connector's composite has it already): of a W limit, a station
  // with a three-phase connector may draw it on three phases.
  const phases = parts.some((c) => c.phases === 3) ? 3 : 1;
  const schedule =
    connectorId === 0
      ? lowerOf(total, inUnit(ctx.profiles.scheduleOf(ctx.stationId, { connectorId: 0, phases }, window), phases))
      : total;
  return {
    scheduleStart: new Date(fromMs).toISOString(),
    duration: durationS,
    chargingRateUnit: unit,
    periods: periodsOf(schedule),
  };
}

/**
 * A remote start carrying a profile: the start relayed without it (`send`), the profile kept for the transaction it
 * begins and composed like any other (docs/design/uplink.md#uplink-what-the-csms-sees). The station's answer, Accepted only if the station
 * accepted (else the profile is withdrawn), or the refusal when the profile cannot be composed (the station never
 * hears of the start).
 */
export async function remoteStart<A extends { status: string }>(
  ctx: ProfileCallContext,
  start: {
    connectorId?: number;
    idTag: string;
    remoteStartId?: number;
    profile: LimitProfile;
    refusal?: Refusal;
    send(): Promise<A>;
  },
): Promise<A | { status: 'Rejected'; refusal: Refusal }> {
  const { connectorId, profile, send } = start;
  const refusal =
    start.refusal ??
    oversized(profile) ??
    (connectorId === undefined ? undefined : unmanaged(ctx, connectorId)) ??
    ctx.profiles.full(ctx.stationId, connectorId ?? 0, profile, 'refused');
  if (refusal) return { status: 'Rejected', refusal: refused(ctx, { profileId: profile.id }, refusal) };
  const withdraw = await ctx.profiles.expectRemoteStart(ctx.stationId, start, profile);
  let answer: A;
  try {
    answer = await send();
  } catch (err) {
    await withdraw();
    throw err;
  }
  if (answer.status !== 'Accepted') await withdraw();
  return answer;
}

/**
 * The composites of a connector, or of all the station's for connector 0: load management's on a circuit; on no
 * circuit, the CSMS's own profiles stacked by OCPP's rules under the charge point's maxCurrentA.
 */
function partsOf(ctx: ProfileCallContext, connectorId: number, window: Window): readonly ConnectorComposite[] {
  const of = <C extends { connectorId: number }>(all: readonly C[]): readonly C[] =>
    connectorId === 0 ? all : all.filter((c) => c.connectorId === connectorId);
  if (ctx.onCircuit()) return of(ctx.composites(window));
  return of(ctx.connectors()).map(({ connectorId: id, phases, maxCurrentA }) => {
    const csms = ctx.profiles.scheduleOf(ctx.stationId, ctx.profiles.placeOf(ctx.stationId, id, phases), window);
    return { connectorId: id, phases, composite: capped(csms, maxCurrentA) };
  });
}

/** A profile not taken, logged; `why` alone: a value OCPP forbids. */
export function refused(
  ctx: ProfileCallContext,
  fields: { connectorId?: number; profileId: number; purpose?: string },
  refusal: Refusal | string,
): Refusal {
  const why = typeof refusal === 'string' ? { reasonCode: 'InvalidValue' as const, why: refusal } : refusal;
  ctx.log.warn({ ...fields, reason: why.why }, 'CSMS charging profile refused');
  return why;
}

/**
 * How the CSMS's profiles at a connector are taken: on a circuit, kept and composed with load management's limits
 * ('composed'), or relayed as they are to a station that refuses load management's profiles ('station'); on no
 * circuit, sent on to the station as they are and kept as well, so that chargegate answers GetCompositeSchedule and
 * ClearChargingProfile ('sentOn'), but only relayed for a connector the config does not list ('station': kept, they
 * would be bounded per connector of any number).
 */
type Handling = 'composed' | 'station' | 'sentOn';

export function handlingOf(ctx: ProfileCallContext, connectorId: number): Handling {
  if (!ctx.onCircuit())
    return connectorId === 0 || ctx.connectors().some((c) => c.connectorId === connectorId) ? 'sentOn' : 'station';
  return stationLimits(ctx, connectorId) ? 'station' : 'composed';
}

/**
 * Whether the station limits the connector itself (or for 0, each of its connectors): it refuses load management's
 * profiles, so chargegate composes nothing there and a CSMS profile kept would limit nothing
 * (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles).
 */
function stationLimits(ctx: ProfileCallContext, connectorId: number): boolean {
  const now = ctx.now().getTime();
  const parts = partsOf(ctx, connectorId, { fromMs: now, toMs: now + 1 });
  return parts.length > 0 && parts.every((c) => !c.composite);
}

/**
 * Why a connector (not the station's 0) takes no CSMS profile here: load management does not manage it, or on a
 * station on no circuit, the config has no such connector.
 */
function unmanaged(ctx: ProfileCallContext, connectorId: number): Refusal | undefined {
  if (connectorId === 0) return undefined;
  const now = ctx.now().getTime();
  const managed = partsOf(ctx, connectorId, { fromMs: now, toMs: now + 1 }).length > 0;
  return managed ? undefined : uncomposed(ctx);
}

/** Why chargegate has no composite of a connector. */
export function uncomposed(ctx: ProfileCallContext): Refusal {
  return { reasonCode: 'UnsupportedRequest', why: ctx.onCircuit() ? UNMANAGED : UNKNOWN };
}

/** Why a profile is not taken for its size. */
function oversized(profile: LimitProfile): Refusal | undefined {
  if (profile.schedule.periods.length <= MAX_PERIODS) return undefined;
  return {
    reasonCode: 'InvalidValue',
    why: `a schedule of more than ${MAX_PERIODS} periods: chargegate takes at most ${MAX_PERIODS} from a CSMS`,
  };
}

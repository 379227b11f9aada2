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
import type {
  ClearChargingProfileRequest,
  GetCompositeScheduleRequest,
  GetCompositeScheduleResponse,
  Ocpp201Actions,
  RemoteStartTransactionRequest,
  SetChargingProfileRequest,
} from '../ocpp/index.js';
import type { ClearCriteria, CsmsProfiles, Refusal, SameLevelRule } from './csms-profiles.js';
import { forbiddenIn16, profileFrom16, purposeFrom16 } from './v16/profile-conversion.js';
import { forbiddenIn201, profileFrom201, purposeFrom201 } from './v201/profile-conversion.js';

type Request201<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][0];
type Response201<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][1];
type CompositeSchedule201 = NonNullable<Response201<'GetCompositeSchedule'>['schedule']>;

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
 * on the event loop at each change (README "Uplink to a CSMS", charging profiles).
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
 * The CSMS's charging-profile calls, answered by chargegate (README "Uplink to a CSMS", charging profiles): a profile
 * OCPP forbids is refused for every station; for a station on a circuit the profiles are kept and load management
 * sends the station the lower of them and its own limits, so none reaches the station as the CSMS sent it; a station
 * on no circuit gets them as they are, and chargegate keeps a copy to answer GetCompositeSchedule and
 * ClearChargingProfile for it (see Handling). One way for both OCPP versions (keep, clear, composite, remote start);
 * each version's function below only reads its messages and writes its answers.
 */

/**
 * OCPP 1.6: undefined for any other call, for a RemoteStartTransaction without a profile, and for a SetChargingProfile,
 * a ClearChargingProfile or a remote start that OCPP allows on a connector whose station refuses profiles (those are
 * relayed as they are, the station's answer the CSMS's). Transaction ids are chargegate's by now.
 */
export function chargingProfileCall16(
  ctx: ProfileCallContext,
  method: string,
  params: Record<string, unknown>,
): Promise<unknown> | undefined {
  switch (method) {
    case 'SetChargingProfile': {
      const { connectorId, csChargingProfiles: p } = params as unknown as SetChargingProfileRequest;
      const forbidden = forbiddenIn16(p, connectorId);
      if (forbidden) {
        refused(ctx, { connectorId, profileId: p.chargingProfileId, purpose: p.chargingProfilePurpose }, forbidden);
        return Promise.resolve({ status: 'Rejected' });
      }
      const handling = handlingOf(ctx, connectorId);
      if (handling === 'station') return undefined;
      const rules: KeepRules = {
        sameLevel: 'replaces',
        ...(p.transactionId !== undefined && { transactionId: p.transactionId }),
      };
      const purpose = p.chargingProfilePurpose;
      if (handling === 'sentOn')
        return sentOnAndKept(ctx, connectorId, purpose, profileFrom16(p), rules, () => ctx.relay(method, params)).then(
          (answer) => ('refusal' in answer ? { status: 'Rejected' } : answer),
        );
      return keep(ctx, connectorId, purpose, profileFrom16(p), rules).then((refusal) => ({
        status: refusal ? 'Rejected' : 'Accepted',
      }));
    }
    case 'ClearChargingProfile': {
      const { id, connectorId, chargingProfilePurpose, stackLevel } = params as ClearChargingProfileRequest;
      const handling = handlingOf(ctx, connectorId ?? 0);
      if (handling === 'station') return undefined;
      const criteria = {
        ...(id !== undefined && { id }),
        ...(connectorId !== undefined && { connectorId }),
        ...(chargingProfilePurpose !== undefined && { purpose: purposeFrom16(chargingProfilePurpose) }),
        ...(stackLevel !== undefined && { stackLevel }),
      };
      if (handling === 'sentOn') return clearedOnBoth(ctx, criteria, () => ctx.relay(method, params));
      return clear(ctx, criteria).then((cleared) => ({ status: cleared ? 'Accepted' : 'Unknown' }));
    }
    case 'GetCompositeSchedule': {
      const request = params as unknown as GetCompositeScheduleRequest;
      const { connectorId } = request;
      const composite = compositeOf(ctx, connectorId, request.duration, request.chargingRateUnit ?? 'A');
      if (composite === 'station') return ctx.relay(method, params);
      if (composite === 'rejected') return Promise.resolve({ status: 'Rejected' });
      const { scheduleStart, duration, chargingRateUnit, periods } = composite;
      const answer: GetCompositeScheduleResponse = {
        status: 'Accepted',
        connectorId,
        scheduleStart,
        chargingSchedule: {
          duration,
          startSchedule: scheduleStart,
          chargingRateUnit,
          chargingSchedulePeriod: periods.map((p) => ({ startPeriod: p.startS, limit: p.limit })),
        },
      };
      return Promise.resolve(answer);
    }
    case 'RemoteStartTransaction': {
      const { chargingProfile, ...start } = params as unknown as RemoteStartTransactionRequest;
      if (!chargingProfile) return undefined;
      const forbidden = forbiddenIn16(chargingProfile);
      if (forbidden) {
        refused(ctx, { profileId: chargingProfile.chargingProfileId }, forbidden);
        return Promise.resolve({ status: 'Rejected' });
      }
      const handling = handlingOf(ctx, start.connectorId ?? 0);
      if (handling === 'station') return undefined;
      return remoteStart(ctx, {
        ...(start.connectorId !== undefined && { connectorId: start.connectorId }),
        idTag: start.idTag,
        profile: profileFrom16(chargingProfile),
        ...(chargingProfile.chargingProfilePurpose !== 'TxProfile' && {
          refusal: { reasonCode: 'InvalidValue', why: "a remote start's profile is a TxProfile (OCPP 1.6 §5.11)" },
        }),
        // A station on no circuit applies the profile itself.
        send: () => ctx.relay(method, handling === 'sentOn' ? params : start) as Promise<{ status: string }>,
      }).then((answer) => ({ status: answer.status }));
    }
    default:
      return undefined;
  }
}

/**
 * OCPP 2.0.1: the EVSE is chargegate's connector (README "OCPP 2.0.1 stations"), a TxProfile names its transaction by
 * the station's own id. Undefined for any other call, for a RequestStartTransaction without a profile, and for a
 * SetChargingProfile, a ClearChargingProfile or a start that OCPP allows on an EVSE whose station refuses profiles
 * (relayed as they are, as 1.6's).
 */
export function chargingProfileCall201(
  ctx: ProfileCallContext,
  method: string,
  params: Record<string, unknown>,
): Promise<unknown> | undefined {
  switch (method) {
    case 'SetChargingProfile': {
      const { evseId, chargingProfile: p } = params as unknown as Request201<'SetChargingProfile'>;
      const forbidden = forbiddenIn201(p, evseId);
      if (forbidden) {
        const refusal = refused(
          ctx,
          { connectorId: evseId, profileId: p.id, purpose: p.chargingProfilePurpose },
          forbidden,
        );
        return Promise.resolve({ status: 'Rejected', statusInfo: statusInfoOf(refusal) });
      }
      const handling = handlingOf(ctx, evseId);
      if (handling === 'station') return undefined;
      const stationTransactionId = p.chargingProfilePurpose === 'TxProfile' ? p.transactionId : undefined;
      const transactionId = stationTransactionId === undefined ? undefined : ctx.transactionIdOf(stationTransactionId);
      const refusal: Refusal | undefined =
        p.chargingProfilePurpose === 'ChargingStationExternalConstraints'
          ? {
              reasonCode: 'InvalidValue',
              why: "external constraints are an energy manager's, not the CSMS's (K01.FR.22)",
            }
          : p.chargingProfilePurpose === 'ChargingStationMaxProfile' && p.chargingProfileKind === 'Relative'
            ? { reasonCode: 'InvalidValue', why: 'a station maximum is not Relative (K01.FR.38)' }
            : p.chargingProfilePurpose === 'TxProfile' && stationTransactionId === undefined
              ? { reasonCode: 'MissingParam', why: 'a TxProfile names its transaction (K01.FR.03)' }
              : stationTransactionId !== undefined && transactionId === undefined
                ? { reasonCode: 'TxNotFound', why: 'no transaction of the station has this transactionId' }
                : undefined;
      const rules: KeepRules = {
        sameLevel: 'refused',
        ...(transactionId !== undefined && { transactionId }),
        ...(refusal && { refusal }),
      };
      const purpose = p.chargingProfilePurpose;
      if (handling === 'sentOn')
        return sentOnAndKept(ctx, evseId, purpose, profileFrom201(p), rules, () => ctx.relay(method, params)).then(
          (answer) => ('refusal' in answer ? { status: 'Rejected', statusInfo: statusInfoOf(answer.refusal) } : answer),
        );
      return keep(ctx, evseId, purpose, profileFrom201(p), rules).then((why): Response201<'SetChargingProfile'> =>
        why ? { status: 'Rejected', statusInfo: statusInfoOf(why) } : { status: 'Accepted' },
      );
    }
    case 'ClearChargingProfile': {
      const { chargingProfileId: id, chargingProfileCriteria: c } = params as Request201<'ClearChargingProfile'>;
      const handling = handlingOf(ctx, c?.evseId ?? 0);
      if (handling === 'station') return undefined;
      const purpose = c?.chargingProfilePurpose;
      // The CSMS sets no external constraints (refused above): none of them is the CSMS's to clear.
      const criteria =
        id === undefined && purpose === 'ChargingStationExternalConstraints'
          ? undefined
          : {
              ...(id !== undefined && { id }),
              ...(c?.evseId !== undefined && { connectorId: c.evseId }),
              ...(purpose !== undefined && { purpose: purposeFrom201(purpose) }),
              ...(c?.stackLevel !== undefined && { stackLevel: c.stackLevel }),
            };
      if (handling === 'sentOn') return clearedOnBoth(ctx, criteria, () => ctx.relay(method, params));
      if (!criteria) return Promise.resolve({ status: 'Unknown' });
      return clear(ctx, criteria).then((cleared): Response201<'ClearChargingProfile'> => ({
        status: cleared ? 'Accepted' : 'Unknown',
      }));
    }
    case 'GetCompositeSchedule': {
      const { evseId, duration, chargingRateUnit } = params as unknown as Request201<'GetCompositeSchedule'>;
      const composite = compositeOf(ctx, evseId, duration, chargingRateUnit ?? 'A');
      if (composite === 'station') return ctx.relay(method, params);
      const answer: Response201<'GetCompositeSchedule'> =
        composite === 'rejected'
          ? { status: 'Rejected', statusInfo: statusInfoOf(uncomposed(ctx)) }
          : {
              status: 'Accepted',
              schedule: {
                evseId,
                duration: composite.duration,
                scheduleStart: composite.scheduleStart,
                chargingRateUnit: composite.chargingRateUnit,
                // Never empty: a window has a first period.
                chargingSchedulePeriod: composite.periods.map((p) => ({
                  startPeriod: p.startS,
                  limit: p.limit,
                })) as CompositeSchedule201['chargingSchedulePeriod'],
              },
            };
      return Promise.resolve(answer);
    }
    case 'RequestStartTransaction': {
      const { chargingProfile, ...start } = params as unknown as Request201<'RequestStartTransaction'>;
      if (!chargingProfile) return undefined;
      const forbidden = forbiddenIn201(chargingProfile);
      if (forbidden) {
        const refusal = refused(ctx, { profileId: chargingProfile.id }, forbidden);
        return Promise.resolve({ status: 'Rejected', statusInfo: statusInfoOf(refusal) });
      }
      const handling = handlingOf(ctx, start.evseId ?? 0);
      if (handling === 'station') return undefined;
      const { evseId, idToken, remoteStartId } = start;
      return remoteStart(ctx, {
        ...(evseId !== undefined && { connectorId: evseId }),
        idTag: idToken.idToken,
        remoteStartId,
        profile: profileFrom201(chargingProfile),
        ...(chargingProfile.chargingProfilePurpose !== 'TxProfile' && {
          refusal: { reasonCode: 'InvalidValue', why: "a remote start's profile is a TxProfile (OCPP 2.0.1 F01)" },
        }),
        send: async () => {
          // A station on no circuit applies the profile itself.
          const sent = handling === 'sentOn' ? params : start;
          const answer = (await ctx.relay(method, sent)) as Response201<'RequestStartTransaction'>;
          // Begun before the request (the cable first): the station names the transaction the profile is for.
          if (answer.status === 'Accepted' && answer.transactionId !== undefined)
            ctx.profiles.noteRemoteStarted(ctx.stationId, answer.transactionId, remoteStartId);
          return answer;
        },
      }).then((answer): Response201<'RequestStartTransaction'> => {
        if (!('refusal' in answer)) return answer;
        return { status: 'Rejected', statusInfo: statusInfoOf(answer.refusal) };
      });
    }
    default:
      return undefined;
  }
}

interface KeepRules {
  transactionId?: number;
  sameLevel: SameLevelRule;
  /** Refused already by the version's own rules. */
  refusal?: Refusal;
}

const UNMANAGED = 'the connector is on no circuit: load management could not compose the profile';
const UNKNOWN = 'the station has no such connector in the config';

/** SetChargingProfile: the profile kept, or why not; either way logged. */
async function keep(
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
async function sentOnAndKept(
  ctx: ProfileCallContext,
  connectorId: number,
  purpose: string,
  profile: LimitProfile,
  rules: KeepRules,
  send: () => Promise<unknown>,
): Promise<{ status: string } | { status: 'Rejected'; refusal: Refusal }> {
  const fields = { connectorId, profileId: profile.id, purpose };
  const refusal =
    rules.refusal ??
    oversized(profile) ??
    unmanaged(ctx, connectorId) ??
    ctx.profiles.full(ctx.stationId, connectorId, profile, rules.sameLevel);
  if (refusal) return { status: 'Rejected', refusal: refused(ctx, fields, refusal) };
  const answer = (await send()) as { status: string };
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
async function clearedOnBoth(
  ctx: ProfileCallContext,
  criteria: ClearCriteria | undefined,
  send: () => Promise<unknown>,
): Promise<unknown> {
  const answer = await send();
  return criteria && (await clear(ctx, criteria)) ? { status: 'Accepted' } : answer;
}

/** ClearChargingProfile: only the CSMS's profiles; load management's fail-safe stays. */
async function clear(ctx: ProfileCallContext, criteria: ClearCriteria): Promise<boolean> {
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
function compositeOf(
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
 * begins and composed like any other (README "Uplink to a CSMS"). The station's answer, Accepted only if the station
 * accepted (else the profile is withdrawn), or the refusal when the profile cannot be composed (the station never
 * hears of the start).
 */
async function remoteStart<A extends { status: string }>(
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
function refused(
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

function handlingOf(ctx: ProfileCallContext, connectorId: number): Handling {
  if (!ctx.onCircuit())
    return connectorId === 0 || ctx.connectors().some((c) => c.connectorId === connectorId) ? 'sentOn' : 'station';
  return stationLimits(ctx, connectorId) ? 'station' : 'composed';
}

/**
 * Whether the station limits the connector itself (or for 0, each of its connectors): it refuses load management's
 * profiles, so chargegate composes nothing there and a CSMS profile kept would limit nothing (README "Uplink to a
 * CSMS", charging profiles).
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
function uncomposed(ctx: ProfileCallContext): Refusal {
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

/** A refusal as a 2.0.1 answer's statusInfo (additionalInfo: at most 512 characters). */
function statusInfoOf(refusal: Refusal): { reasonCode: string; additionalInfo: string } {
  return { reasonCode: refusal.reasonCode, additionalInfo: refusal.why.slice(0, 512) };
}

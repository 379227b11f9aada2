import {
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
import {
  forbiddenIn16,
  forbiddenIn201,
  profileFrom16,
  profileFrom201,
  purposeFrom16,
  purposeFrom201,
} from './profile-conversion.js';

type Request201<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][0];
type Response201<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][1];
type CompositeSchedule201 = NonNullable<Response201<'GetCompositeSchedule'>['schedule']>;

/** What the CSMS's charging-profile calls of one station need. */
export interface ProfileCallContext {
  stationId: string;
  profiles: CsmsProfiles;
  /** Whether a charge point of the station is on a circuit now (a reload may change it). */
  onCircuit(): boolean;
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

/*
 * The CSMS's charging-profile calls, answered by chargegate (README "Uplink to a CSMS", charging profiles): a profile
 * OCPP forbids is refused for every station; for a station on a circuit the profiles are kept and load management
 * sends the station the lower of them and its own limits, so none reaches the station as the CSMS sent it. One way for
 * both OCPP versions (keep, clear, composite, remote start); each version's function below only reads its messages and
 * writes its answers.
 */

/**
 * OCPP 1.6: undefined for any other call, for a RemoteStartTransaction without a profile, and for a SetChargingProfile,
 * a ClearChargingProfile or a remote start that OCPP allows on a station on no circuit or on a connector whose
 * station refuses profiles (those are relayed as they are, the station's answer the CSMS's). Transaction ids are
 * chargegate's by now.
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
      if (!composed(ctx, connectorId)) return undefined;
      const rules: KeepRules = {
        sameLevel: 'replaces',
        ...(p.transactionId !== undefined && { transactionId: p.transactionId }),
      };
      return keep(ctx, connectorId, p.chargingProfilePurpose, profileFrom16(p), rules).then((refusal) => ({
        status: refusal ? 'Rejected' : 'Accepted',
      }));
    }
    case 'ClearChargingProfile': {
      const { id, connectorId, chargingProfilePurpose, stackLevel } = params as ClearChargingProfileRequest;
      if (!composed(ctx, connectorId ?? 0)) return undefined;
      return clear(ctx, {
        ...(id !== undefined && { id }),
        ...(connectorId !== undefined && { connectorId }),
        ...(chargingProfilePurpose !== undefined && { purpose: purposeFrom16(chargingProfilePurpose) }),
        ...(stackLevel !== undefined && { stackLevel }),
      }).then((cleared) => ({ status: cleared ? 'Accepted' : 'Unknown' }));
    }
    case 'GetCompositeSchedule': {
      const request = params as unknown as GetCompositeScheduleRequest;
      if (!ctx.onCircuit()) return undefined;
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
      if (!composed(ctx, start.connectorId ?? 0)) return undefined;
      return remoteStart(ctx, {
        ...(start.connectorId !== undefined && { connectorId: start.connectorId }),
        idTag: start.idTag,
        profile: profileFrom16(chargingProfile),
        ...(chargingProfile.chargingProfilePurpose !== 'TxProfile' && {
          refusal: { reasonCode: 'InvalidValue', why: "a remote start's profile is a TxProfile (OCPP 1.6 §5.11)" },
        }),
        send: () => ctx.relay(method, start) as Promise<{ status: string }>,
      }).then((answer) => ({ status: answer.status }));
    }
    default:
      return undefined;
  }
}

/**
 * OCPP 2.0.1: the EVSE is chargegate's connector (README "OCPP 2.0.1 stations"), a TxProfile names its transaction by
 * the station's own id. Undefined for any other call, for a RequestStartTransaction without a profile, and for a
 * SetChargingProfile, a ClearChargingProfile or a start that OCPP allows on a station on no circuit or on an EVSE whose
 * station refuses profiles (relayed as they are, as 1.6's).
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
      if (!composed(ctx, evseId)) return undefined;
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
      return keep(ctx, evseId, p.chargingProfilePurpose, profileFrom201(p), rules).then(
        (why): Response201<'SetChargingProfile'> =>
          why ? { status: 'Rejected', statusInfo: statusInfoOf(why) } : { status: 'Accepted' },
      );
    }
    case 'ClearChargingProfile': {
      const { chargingProfileId: id, chargingProfileCriteria: c } = params as Request201<'ClearChargingProfile'>;
      if (!composed(ctx, c?.evseId ?? 0)) return undefined;
      const purpose = c?.chargingProfilePurpose;
      // The CSMS sets no external constraints (refused above): none of them is the CSMS's to clear.
      if (id === undefined && purpose === 'ChargingStationExternalConstraints')
        return Promise.resolve({ status: 'Unknown' });
      return clear(ctx, {
        ...(id !== undefined && { id }),
        ...(c?.evseId !== undefined && { connectorId: c.evseId }),
        ...(purpose !== undefined && { purpose: purposeFrom201(purpose) }),
        ...(c?.stackLevel !== undefined && { stackLevel: c.stackLevel }),
      }).then((cleared): Response201<'ClearChargingProfile'> => ({ status: cleared ? 'Accepted' : 'Unknown' }));
    }
    case 'GetCompositeSchedule': {
      const { evseId, duration, chargingRateUnit } = params as unknown as Request201<'GetCompositeSchedule'>;
      if (!ctx.onCircuit()) return undefined;
      const composite = compositeOf(ctx, evseId, duration, chargingRateUnit ?? 'A');
      if (composite === 'station') return ctx.relay(method, params);
      const answer: Response201<'GetCompositeSchedule'> =
        composite === 'rejected'
          ? { status: 'Rejected', statusInfo: statusInfoOf({ reasonCode: 'UnsupportedRequest', why: UNMANAGED }) }
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
      if (!composed(ctx, start.evseId ?? 0)) return undefined;
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
          const answer = (await ctx.relay(method, start)) as Response201<'RequestStartTransaction'>;
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

/** Load management's composites of a connector, or of all the station's for connector 0. */
function partsOf(ctx: ProfileCallContext, connectorId: number, window: Window): readonly ConnectorComposite[] {
  const all = ctx.composites(window);
  return connectorId === 0 ? all : all.filter((c) => c.connectorId === connectorId);
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
 * Whether the CSMS's profiles at the connector are chargegate's to keep and compose with load management's: the
 * station is on a circuit and takes load management's profiles there.
 */
function composed(ctx: ProfileCallContext, connectorId: number): boolean {
  return ctx.onCircuit() && !stationLimits(ctx, connectorId);
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

/** Why a connector (not the station's 0) takes no CSMS profile here: load management does not manage it. */
function unmanaged(ctx: ProfileCallContext, connectorId: number): Refusal | undefined {
  if (connectorId === 0) return undefined;
  const now = ctx.now().getTime();
  const managed = partsOf(ctx, connectorId, { fromMs: now, toMs: now + 1 }).length > 0;
  return managed ? undefined : { reasonCode: 'UnsupportedRequest', why: UNMANAGED };
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

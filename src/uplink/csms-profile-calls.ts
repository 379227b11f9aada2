import {
  constant,
  lowerOf,
  periodsOf,
  scaled,
  sumOf,
  VOLTS_PER_PHASE,
  type ConnectorComposite,
  type Steps,
  type Window,
} from '../load/index.js';
import type { Logger } from '../log/index.js';
import type {
  ClearChargingProfileRequest,
  GetCompositeScheduleRequest,
  GetCompositeScheduleResponse,
  RemoteStartTransactionRequest,
  SetChargingProfileRequest,
} from '../ocpp/index.js';
import type { CsmsProfiles } from './csms-profiles.js';
import { profileFrom16, purposeFrom16 } from './profile-conversion.js';

/** What the CSMS's charging-profile calls of one station on a circuit need. */
export interface ProfileCallContext {
  stationId: string;
  profiles: CsmsProfiles;
  /** Load management's composite of each connector it manages on the station (none while it manages none). */
  composites(window: Window): readonly ConnectorComposite[];
  /** A call to the station, resolving with its answer. */
  relay(action: string, params: unknown): Promise<unknown>;
  log: Logger;
  now(): Date;
}

/**
 * GetCompositeSchedule covers at most this long: load management's limit is the one it stands at now, and a month of
 * daily schedules is already more than a CSMS plans with.
 */
const MAX_COMPOSITE_S = 7 * 86_400;

/**
 * The CSMS's charging-profile calls (OCPP 1.6) for a station on a circuit, answered by chargegate (README "Uplink to a
 * CSMS", charging profiles): the profiles are kept and load management sends the station the lower of them and its
 * own limits, so none reaches the station as the CSMS sent it. Undefined for any other call, and for a
 * RemoteStartTransaction without a profile: those are relayed. Transaction ids are chargegate's by now.
 */
export function chargingProfileCall16(
  ctx: ProfileCallContext,
  method: string,
  params: Record<string, unknown>,
): Promise<unknown> | undefined {
  switch (method) {
    case 'SetChargingProfile':
      return setProfile(ctx, params as unknown as SetChargingProfileRequest);
    case 'ClearChargingProfile':
      return clearProfiles(ctx, params);
    case 'GetCompositeSchedule':
      return compositeSchedule(ctx, params as unknown as GetCompositeScheduleRequest);
    case 'RemoteStartTransaction':
      return params.chargingProfile === undefined
        ? undefined
        : remoteStart(ctx, params as unknown as RemoteStartTransactionRequest);
    default:
      return undefined;
  }
}

async function setProfile(ctx: ProfileCallContext, params: SetChargingProfileRequest): Promise<unknown> {
  const { connectorId, csChargingProfiles } = params;
  const profile = profileFrom16(csChargingProfiles);
  const why =
    unmanaged(ctx, connectorId) ??
    (await ctx.profiles.set(ctx.stationId, connectorId, profile, csChargingProfiles.transactionId));
  const fields = { connectorId, profileId: profile.id, purpose: csChargingProfiles.chargingProfilePurpose };
  if (why !== undefined) {
    ctx.log.warn({ ...fields, reason: why }, 'CSMS charging profile refused');
    return { status: 'Rejected' };
  }
  ctx.log.info(fields, "CSMS charging profile kept: composed with load management's limits");
  return { status: 'Accepted' };
}

async function clearProfiles(ctx: ProfileCallContext, params: ClearChargingProfileRequest): Promise<unknown> {
  const { id, connectorId, chargingProfilePurpose, stackLevel } = params;
  const cleared = await ctx.profiles.clear(ctx.stationId, {
    ...(id !== undefined && { id }),
    ...(connectorId !== undefined && { connectorId }),
    ...(chargingProfilePurpose !== undefined && { purpose: purposeFrom16(chargingProfilePurpose) }),
    ...(stackLevel !== undefined && { stackLevel }),
  });
  if (cleared) ctx.log.info({ ...params }, "CSMS charging profiles cleared; load management's fail-safe stays");
  return { status: cleared ? 'Accepted' : 'Unknown' };
}

/**
 * What the station gets from now on, as chargegate sends it: a connector's composite, or for connector 0 the sum of
 * its connectors' at most the CSMS's station maximum. A connector whose station refuses profiles is asked itself
 * (chargegate limits nothing there); one load management does not manage is Rejected.
 */
async function compositeSchedule(ctx: ProfileCallContext, params: GetCompositeScheduleRequest): Promise<unknown> {
  const { connectorId, duration } = params;
  const unit = params.chargingRateUnit ?? 'A';
  const fromMs = Math.floor(ctx.now().getTime() / 1000) * 1000;
  const durationS = Math.max(1, Math.min(duration, MAX_COMPOSITE_S));
  const window = { fromMs, toMs: fromMs + durationS * 1000 };
  const all = ctx.composites(window);
  const parts = connectorId === 0 ? all : all.filter((c) => c.connectorId === connectorId);
  if (parts.length === 0) return { status: 'Rejected' };
  if (parts.some((c) => !c.composite)) return ctx.relay('GetCompositeSchedule', params);
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
  const start = new Date(fromMs).toISOString();
  const answer: GetCompositeScheduleResponse = {
    status: 'Accepted',
    connectorId,
    scheduleStart: start,
    chargingSchedule: {
      duration: durationS,
      startSchedule: start,
      chargingRateUnit: unit,
      chargingSchedulePeriod: periodsOf(schedule).map((p) => ({ startPeriod: p.startS, limit: p.limit })),
    },
  };
  return answer;
}

/**
 * The start relayed without the profile, which is kept for the transaction it begins and composed like any other
 * (README "Uplink to a CSMS"); Accepted only if the station accepted, else the profile is withdrawn.
 */
async function remoteStart(ctx: ProfileCallContext, params: RemoteStartTransactionRequest): Promise<unknown> {
  const { chargingProfile, ...start } = params;
  const why =
    chargingProfile!.chargingProfilePurpose !== 'TxProfile'
      ? "a remote start's profile is a TxProfile (OCPP 1.6 §5.11)"
      : params.connectorId === undefined
        ? undefined
        : unmanaged(ctx, params.connectorId);
  if (why !== undefined) {
    ctx.log.warn({ action: 'RemoteStartTransaction', reason: why }, 'CSMS charging profile refused');
    return { status: 'Rejected' };
  }
  const profile = profileFrom16(chargingProfile!);
  const withdraw = await ctx.profiles.expectRemoteStart(ctx.stationId, params.connectorId, params.idTag, profile);
  let answer: { status: string };
  try {
    answer = (await ctx.relay('RemoteStartTransaction', start)) as { status: string };
  } catch (err) {
    await withdraw();
    throw err;
  }
  if (answer.status !== 'Accepted') await withdraw();
  return answer;
}

/** Why a connector (not the station's 0) takes no CSMS profile here: load management does not manage it. */
function unmanaged(ctx: ProfileCallContext, connectorId: number): string | undefined {
  if (connectorId === 0) return undefined;
  const now = ctx.now().getTime();
  const managed = ctx.composites({ fromMs: now, toMs: now + 1 }).some((c) => c.connectorId === connectorId);
  return managed ? undefined : 'the connector is on no circuit: load management could not compose the profile';
}

/**
 * The CSMS's charging-profile calls for an OCPP 2.0.1 station on a circuit, whose profiles are not composed yet (README
 * "Uplink to a CSMS"): a CSMS profile at a higher stack level would override load management's and a
 * ClearChargingProfile would wipe its fail-safe, so SetChargingProfile, ClearChargingProfile and a
 * RequestStartTransaction carrying a profile are answered without reaching the station (ClearChargingProfile has no
 * Rejected: Unknown says nothing was cleared). Undefined for any other call.
 */
export function refusedUntilComposed(
  method: string,
  params: Record<string, unknown>,
  log: Logger,
): Promise<unknown> | undefined {
  const setsProfile =
    method === 'SetChargingProfile' ||
    method === 'ClearChargingProfile' ||
    (method === 'RequestStartTransaction' && params.chargingProfile !== undefined);
  if (!setsProfile) return undefined;
  log.warn({ action: method }, 'CSMS charging profile for a 2.0.1 station on a circuit: not composed yet, refused');
  return Promise.resolve({ status: method === 'ClearChargingProfile' ? 'Unknown' : 'Rejected' });
}

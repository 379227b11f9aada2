import type { ChargingLimits, LimitOutcome, TransactionLimit } from '../load/index.js';
import type { CallLanes } from './call-lane.js';
import { StationCallError, StationOfflineError, StationTimeoutError } from './errors.js';
import { createStationCaller, type ConnectionLookup } from './station-commands.js';
import type { Ocpp16Actions, SetChargingProfileRequest } from './v16/messages.js';
import type { ChargingSchedulePeriodType, Ocpp201Actions } from './v201/messages.js';

/**
 * chargegate's profiles keep their id, purpose and stack level from one sending to the next, so each renewal replaces
 * the profile before it (1.6 §5.16 "Set Charging Profile"; 2.0.1 K01, which refuses another id at the same stack level
 * and purpose). A TxProfile's id names its connector: in 1.6 a profile with an id already in use replaces that one on
 * whatever connector it is.
 */
const FAILSAFE_PROFILE_ID = 1;
const TRANSACTION_PROFILE_ID_BASE = 1000;
const STACK_LEVEL = 0;

/** CALLERROR codes of a station without Smart Charging (1.6 and 2.0.1 OCPP-J "RPC Framework"). */
const NOT_SUPPORTED_ERRORS = new Set(['NotSupported', 'NotImplemented']);

/** SetChargingProfile's and TriggerMessage's answers (a station without the trigger says NotImplemented). */
const OUTCOMES: Record<'Accepted' | 'Rejected' | 'NotSupported' | 'NotImplemented', LimitOutcome> = {
  Accepted: 'accepted',
  Rejected: 'rejected',
  NotSupported: 'notSupported',
  NotImplemented: 'notSupported',
};

type Period = SetChargingProfileRequest['csChargingProfiles']['chargingSchedule']['chargingSchedulePeriod'][number] &
  ChargingSchedulePeriodType;

/**
 * One period from the start, then one per change, for as long as the profile is valid. Limits are rounded down to the
 * 0.1 A the 1.6 schema allows; numberPhases only when known (a station assumes 3 without it).
 */
function scheduleOf(
  currentA: number,
  phases?: 1 | 3,
  changes?: TransactionLimit['changes'],
): { chargingRateUnit: 'A'; chargingSchedulePeriod: [Period, ...Period[]]; startSchedule?: string } {
  const period = (startPeriod: number, limitA: number): Period => ({
    startPeriod,
    limit: Math.floor(limitA * 10 + 1e-9) / 10,
    ...(phases && { numberPhases: phases }),
  });
  return {
    chargingRateUnit: 'A',
    ...(changes && { startSchedule: changes.from.toISOString() }),
    chargingSchedulePeriod: [
      period(0, currentA),
      ...(changes?.steps ?? []).map(({ afterS, currentA: limitA }) => period(afterS, limitA)),
    ],
  };
}

/**
 * The load controller's port, as charging profiles. One that holds one limit is Relative: without a startSchedule, a
 * station's wrong clock cannot shift when the limit begins (only validTo reads it). One that changes (a CSMS's
 * schedule, docs/design/uplink.md#uplink-what-the-csms-sees) is Absolute from when it was decided: its changes fall at given instants, as
 * the station's clock tells them. Every call goes first on the station's lane (call-lane.ts): a lowered limit never
 * waits behind the CSMS's calls or an operation.
 */
export function createChargingLimits(connections: ConnectionLookup, lanes: CallLanes): ChargingLimits {
  const { call, speaks201 } = createStationCaller(connections, lanes);
  const set16 = (stationId: string, req: SetChargingProfileRequest) =>
    call<Ocpp16Actions, 'SetChargingProfile'>(stationId, 'SetChargingProfile', req, 'limit');
  const set201 = (stationId: string, req: Ocpp201Actions['SetChargingProfile'][0]) =>
    call<Ocpp201Actions, 'SetChargingProfile'>(stationId, 'SetChargingProfile', req, 'limit');

  const setFailsafe = (
    stationId: string,
    currentA: number,
    changes?: TransactionLimit['changes'],
  ): Promise<{ status: keyof typeof OUTCOMES }> => {
    const profile = {
      stackLevel: STACK_LEVEL,
      chargingProfilePurpose: 'TxDefaultProfile',
      chargingProfileKind: changes ? 'Absolute' : 'Relative',
    } as const;
    const schedule = scheduleOf(currentA, undefined, changes);
    // Connector / EVSE 0: the default of every connector (1.6 §3.13.1, 2.0.1 K01 evseId).
    if (speaks201(stationId))
      return set201(stationId, {
        evseId: 0,
        chargingProfile: {
          id: FAILSAFE_PROFILE_ID,
          ...profile,
          chargingSchedule: [{ id: FAILSAFE_PROFILE_ID, ...schedule }],
        },
      });
    return set16(stationId, {
      connectorId: 0,
      csChargingProfiles: { chargingProfileId: FAILSAFE_PROFILE_ID, ...profile, chargingSchedule: schedule },
    });
  };

  const setTransactionLimit = (
    stationId: string,
    limit: TransactionLimit,
  ): Promise<{ status: keyof typeof OUTCOMES }> => {
    const id = TRANSACTION_PROFILE_ID_BASE + limit.connectorId;
    const profile = {
      stackLevel: STACK_LEVEL,
      chargingProfilePurpose: 'TxProfile',
      chargingProfileKind: limit.changes ? 'Absolute' : 'Relative',
      validTo: limit.validTo.toISOString(),
    } as const;
    const schedule = scheduleOf(limit.currentA, limit.phases, limit.changes);
    if (speaks201(stationId))
      return set201(stationId, {
        evseId: limit.connectorId,
        chargingProfile: {
          id,
          ...profile,
          // As stopCharging does: a transaction without the station's id was started with chargegate's.
          transactionId: limit.stationTransactionId ?? String(limit.transactionId),
          chargingSchedule: [{ id, ...schedule }],
        },
      });
    return set16(stationId, {
      connectorId: limit.connectorId,
      csChargingProfiles: {
        chargingProfileId: id,
        ...profile,
        transactionId: limit.transactionId,
        chargingSchedule: schedule,
      },
    });
  };

  // 1.6 §5.17 TriggerMessage on the connector, 2.0.1 F06 on the EVSE: the station answers, then sends MeterValues.
  // Load management's own call, so it goes in the limits' class: the reading it asks for decides the next limit.
  const requestDrawReport = (stationId: string, connectorId: number): Promise<{ status: keyof typeof OUTCOMES }> =>
    speaks201(stationId)
      ? call<Ocpp201Actions, 'TriggerMessage'>(
          stationId,
          'TriggerMessage',
          { requestedMessage: 'MeterValues', evse: { id: connectorId } },
          'limit',
        )
      : call<Ocpp16Actions, 'TriggerMessage'>(
          stationId,
          'TriggerMessage',
          { requestedMessage: 'MeterValues', connectorId },
          'limit',
        );

  return {
    setFailsafe: (stationId, currentA, changes) => outcomeOf(() => setFailsafe(stationId, currentA, changes)),
    setTransactionLimit: (stationId, limit) => outcomeOf(() => setTransactionLimit(stationId, limit)),
    requestDrawReport: (stationId, connectorId) => outcomeOf(() => requestDrawReport(stationId, connectorId)),
  };
}

/** A station's answer, or its silence or absence, as an outcome; anything else is chargegate's own bug and throws. */
async function outcomeOf(sending: () => Promise<{ status: keyof typeof OUTCOMES }>): Promise<LimitOutcome> {
  try {
    return OUTCOMES[(await sending()).status];
  } catch (err) {
    if (err instanceof StationOfflineError) return 'offline';
    if (err instanceof StationTimeoutError) return 'timeout';
    if (err instanceof StationCallError)
      return NOT_SUPPORTED_ERRORS.has(err.ocppErrorCode) ? 'notSupported' : 'rejected';
    throw err;
  }
}

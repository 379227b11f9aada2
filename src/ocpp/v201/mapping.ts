import { checkEnergyWh, type MeterReadingInput, type SignedReadingInput, type StopReason } from '../../site/index.js';
import type { AuthorizationDecision } from '../../authorization/index.js';
import type { CurrentSample } from '../drawn-current.js';
import type {
  ChargingStateEnumType,
  ConnectorStatusEnumType,
  IdTokenInfoType,
  MeterValueType,
  ReasonEnumType,
} from './messages.js';

/**
 * How an OCPP 2.0.1 station's words become the OCPP 1.6 words the four webhook events carry (docs/install/connecting-stations.md#ocpp-201-stations). docs/install/connecting-stations.md#ocpp-201-stations shows the same tables; test/ocpp/v201-mapping.test.ts holds them to it.
 */

/** A connector's 1.6 status from its 2.0.1 connectorStatus and what its transaction is doing. */
export interface ConnectorActivity {
  connectorStatus: ConnectorStatusEnumType;
  /** The chargingState of the EVSE's open transaction, if one is open. */
  chargingState?: ChargingStateEnumType;
  /** The EVSE's transaction ended and the cable is still in (1.6 Finishing). */
  ended?: boolean;
}

const WHILE_OCCUPIED: Record<ChargingStateEnumType, string> = {
  Charging: 'Charging',
  SuspendedEV: 'SuspendedEV',
  SuspendedEVSE: 'SuspendedEVSE',
  EVConnected: 'Preparing',
  Idle: 'Preparing',
};

/** The 1.6 status and errorCode of a 2.0.1 connector (2.0.1 has no error code; a fault is OtherError). */
export function statusOf(activity: ConnectorActivity): { status: string; errorCode: string } {
  switch (activity.connectorStatus) {
    case 'Occupied':
      if (activity.chargingState) return { status: WHILE_OCCUPIED[activity.chargingState], errorCode: 'NoError' };
      return { status: activity.ended ? 'Finishing' : 'Preparing', errorCode: 'NoError' };
    case 'Faulted':
      return { status: 'Faulted', errorCode: 'OtherError' };
    case 'Available':
    case 'Reserved':
    case 'Unavailable':
      return { status: activity.connectorStatus, errorCode: 'NoError' };
  }
}

const STOP_REASON: Partial<Record<ReasonEnumType, StopReason>> = {
  DeAuthorized: 'DeAuthorized',
  EmergencyStop: 'EmergencyStop',
  EVDisconnected: 'EVDisconnected',
  ImmediateReset: 'HardReset',
  Local: 'Local',
  PowerLoss: 'PowerLoss',
  Reboot: 'Reboot',
  Remote: 'Remote',
};

/** A 2.0.1 stoppedReason as the interface's reasons; `Other` when none fits, `Local` when the station gave none. */
export function stopReasonOf(reason: ReasonEnumType | undefined): StopReason {
  if (reason === undefined) return 'Local';
  return STOP_REASON[reason] ?? 'Other';
}

const ENERGY = 'Energy.Active.Import.Register';

/**
 * The readings of the active energy imported (Wh) a meter value list reports: the register (the default measurand)
 * at the outlet or of the whole EVSE, in Wh whatever its unit and multiplier, each with its context and time (the
 * last is a transaction's start or stop value; docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear). A value no energy register can hold
 * (1e308 with multiplier 3 is Infinity) is refused (OutOfBoundsError).
 */
export function energyReadings(meterValues: readonly MeterValueType[] | undefined): MeterReadingInput[] {
  return (meterValues ?? []).flatMap((mv) =>
    mv.sampledValue.flatMap((sample) => {
      if ((sample.measurand ?? ENERGY) !== ENERGY || sample.phase !== undefined) return [];
      const unit = sample.unitOfMeasure?.unit ?? 'Wh';
      const scale = 10 ** (sample.unitOfMeasure?.multiplier ?? 0) * (unit === 'kWh' ? 1000 : 1);
      return [
        {
          context: sample.context ?? 'Sample.Periodic',
          timestamp: new Date(mv.timestamp),
          energyWh: checkEnergyWh(ENERGY, Math.round(sample.value * scale)),
        },
      ];
    }),
  );
}

/** The Current.Import samples of each meter value, in A whatever the multiplier. */
export function currentSamples(meterValues: readonly MeterValueType[] | undefined): CurrentSample[][] {
  return (meterValues ?? []).map((mv) =>
    mv.sampledValue
      .filter((s) => s.measurand === 'Current.Import' && (s.unitOfMeasure?.unit ?? 'A') === 'A')
      .map((s) => ({
        ...(s.phase !== undefined && { phase: s.phase }),
        valueA: s.value * 10 ** (s.unitOfMeasure?.multiplier ?? 0),
      })),
  );
}

/** A 1.6-style decision as 2.0.1 idTokenInfo: the same statuses exist in both. */
export function idTokenInfoOf(decision: Pick<AuthorizationDecision, 'status' | 'expiryDate'>): IdTokenInfoType {
  return {
    status: decision.status,
    ...(decision.expiryDate !== undefined && { cacheExpiryDateTime: decision.expiryDate }),
  };
}

/**
 * The signed readings of a meter value list (docs/partners/signed-meter-values.md#signed-meter-values): each sample's signedMeterValue, its
 * fields exactly as sent (an empty publicKey is none: a station may send the key once per transaction).
 */
export function signedReadings(
  evseId: number,
  meterValues: readonly MeterValueType[] | undefined,
): SignedReadingInput[] {
  return (meterValues ?? []).flatMap((mv) =>
    mv.sampledValue.flatMap((s) =>
      s.signedMeterValue
        ? [
            {
              signedMeterData: s.signedMeterValue.signedMeterData,
              signingMethod: s.signedMeterValue.signingMethod,
              encodingMethod: s.signedMeterValue.encodingMethod,
              publicKey: s.signedMeterValue.publicKey === '' ? null : s.signedMeterValue.publicKey,
              context: s.context ?? 'Sample.Periodic',
              timestamp: new Date(mv.timestamp),
              connectorId: evseId,
            },
          ]
        : [],
    ),
  );
}

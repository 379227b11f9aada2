import type { LimitProfile, ProfilePurpose } from '../load/index.js';
import type { Ocpp201Actions, SetChargingProfileRequest } from '../ocpp/index.js';

/**
 * The CSMS's charging profiles in load management's words (README "Uplink to a CSMS", charging profiles): each OCPP
 * version's message read into a LimitProfile, field for field. The transaction a profile names stays with the caller,
 * which maps the CSMS's id to chargegate's.
 */

type Profile16 = SetChargingProfileRequest['csChargingProfiles'];
type Profile201 = Ocpp201Actions['SetChargingProfile'][0]['chargingProfile'];

const PURPOSES_16: Record<Profile16['chargingProfilePurpose'], ProfilePurpose> = {
  ChargePointMaxProfile: 'stationMaximum',
  TxDefaultProfile: 'transactionDefault',
  TxProfile: 'transaction',
};

/**
 * 2.0.1's external constraints (an energy manager's, K01) cap the whole station as its maximum does; a CSMS may not
 * set them, but a 2.0.1 station reports them among its profiles.
 */
const PURPOSES_201: Record<Profile201['chargingProfilePurpose'], ProfilePurpose> = {
  ChargingStationMaxProfile: 'stationMaximum',
  ChargingStationExternalConstraints: 'stationMaximum',
  TxDefaultProfile: 'transactionDefault',
  TxProfile: 'transaction',
};

/** A 1.6 SetChargingProfile's (or RemoteStartTransaction's) profile. */
export function profileFrom16(p: Profile16): LimitProfile {
  return profileOf(p.chargingProfileId, PURPOSES_16[p.chargingProfilePurpose], p, p.chargingSchedule);
}

/**
 * A 2.0.1 SetChargingProfile's profile: its first schedule, the one a station uses for a car that does not choose
 * among them (ISO 15118 cars may; the others are offers, K15).
 */
export function profileFrom201(p: Profile201): LimitProfile {
  return profileOf(p.id, PURPOSES_201[p.chargingProfilePurpose], p, p.chargingSchedule[0]);
}

/** A 1.6 purpose (ClearChargingProfile's criteria name one). */
export function purposeFrom16(purpose: Profile16['chargingProfilePurpose']): ProfilePurpose {
  return PURPOSES_16[purpose];
}

/** A 2.0.1 purpose (ClearChargingProfile's criteria name one). */
export function purposeFrom201(purpose: Profile201['chargingProfilePurpose']): ProfilePurpose {
  return PURPOSES_201[purpose];
}

function profileOf(
  id: number,
  purpose: ProfilePurpose,
  p: {
    stackLevel: number;
    chargingProfileKind: 'Absolute' | 'Recurring' | 'Relative';
    recurrencyKind?: 'Daily' | 'Weekly';
    validFrom?: string;
    validTo?: string;
  },
  s: {
    startSchedule?: string;
    duration?: number;
    chargingRateUnit: 'A' | 'W';
    chargingSchedulePeriod: ReadonlyArray<{ startPeriod: number; limit: number }>;
  },
): LimitProfile {
  const kind =
    p.chargingProfileKind === 'Absolute'
      ? 'absolute'
      : p.chargingProfileKind === 'Recurring'
        ? 'recurring'
        : 'relative';
  const timeOf = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));
  const validFromMs = timeOf(p.validFrom);
  const validToMs = timeOf(p.validTo);
  const startMs = timeOf(s.startSchedule);
  return {
    id,
    stackLevel: p.stackLevel,
    purpose,
    kind,
    ...(kind === 'recurring' && { recurrency: p.recurrencyKind === 'Weekly' ? 'weekly' : 'daily' }),
    ...(validFromMs !== undefined && { validFromMs }),
    ...(validToMs !== undefined && { validToMs }),
    schedule: {
      // A relative schedule counts from its transaction's start, whatever startSchedule says.
      ...(startMs !== undefined && kind !== 'relative' && { startMs }),
      ...(s.duration !== undefined && { durationS: s.duration }),
      unit: s.chargingRateUnit,
      periods: s.chargingSchedulePeriod
        .map((period) => ({ startS: period.startPeriod, limit: period.limit }))
        .sort((a, b) => a.startS - b.startS),
    },
  };
}

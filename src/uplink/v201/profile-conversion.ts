import type { LimitProfile, ProfilePurpose } from '../../load/index.js';
import type { Ocpp201Actions } from '../../ocpp/index.js';
import { forbiddenIn, notNegative, profileOf } from '../profile-conversion.js';

type Profile201 = Ocpp201Actions['SetChargingProfile'][0]['chargingProfile'];

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

/**
 * A 2.0.1 SetChargingProfile's profile: its first schedule, the one a station uses for a car that does not choose
 * among them (ISO 15118 cars may; the others are offers, K15).
 */
export function profileFrom201(p: Profile201): LimitProfile {
  return profileOf(p.id, PURPOSES_201[p.chargingProfilePurpose], p, p.chargingSchedule[0]);
}

/** A 2.0.1 purpose (ClearChargingProfile's criteria name one). */
export function purposeFrom201(purpose: Profile201['chargingProfilePurpose']): ProfilePurpose {
  return PURPOSES_201[purpose];
}

/** forbiddenIn16 for OCPP 2.0.1 (K01): every schedule of the profile, the offers a car may choose among too. */
export function forbiddenIn201(p: Profile201, evseId?: number): string | undefined {
  return notNegative('evseId', evseId) ?? forbiddenIn(p.stackLevel, p.chargingSchedule);
}

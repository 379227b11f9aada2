import type { LimitProfile, ProfilePurpose } from '../../load/index.js';
import type { SetChargingProfileRequest } from '../../ocpp/index.js';
import { forbiddenIn, notNegative, profileOf } from '../profile-conversion.js';

type Profile16 = SetChargingProfileRequest['csChargingProfiles'];

const PURPOSES_16: Record<Profile16['chargingProfilePurpose'], ProfilePurpose> = {
  ChargePointMaxProfile: 'stationMaximum',
  TxDefaultProfile: 'transactionDefault',
  TxProfile: 'transaction',
};

/** A 1.6 SetChargingProfile's (or RemoteStartTransaction's) profile. */
export function profileFrom16(p: Profile16): LimitProfile {
  return profileOf(p.chargingProfileId, PURPOSES_16[p.chargingProfilePurpose], p, p.chargingSchedule);
}

/** A 1.6 purpose (ClearChargingProfile's criteria name one). */
export function purposeFrom16(purpose: Profile16['chargingProfilePurpose']): ProfilePurpose {
  return PURPOSES_16[purpose];
}

/**
 * What OCPP 1.6 forbids in a SetChargingProfile (or a remote start's profile) that its JSON schema lets through, in
 * words (the first found); undefined when nothing is. Such a profile is refused, never kept nor sent on
 * (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles).
 */
export function forbiddenIn16(p: Profile16, connectorId?: number): string | undefined {
  return notNegative('connectorId', connectorId) ?? forbiddenIn(p.stackLevel, [p.chargingSchedule]);
}

import type { GetCompositeScheduleResponse, Ocpp16Actions } from '../../ocpp/index.js';
import {
  clear,
  clearedOnBoth,
  compositeOf,
  handlingOf,
  keep,
  profileCallsOf,
  refused,
  remoteStart,
  sentOnAndKept,
  type KeepRules,
} from '../csms-profile-calls.js';
import { forbiddenIn16, profileFrom16, purposeFrom16 } from './profile-conversion.js';

/**
 * OCPP 1.6's charging-profile calls, answered as csms-profile-calls.ts does for both versions. Undefined (relayed) for
 * a RemoteStartTransaction without a profile, and for a SetChargingProfile, a ClearChargingProfile or a remote start
 * that OCPP allows on a connector whose station refuses profiles (the station's answer the CSMS's). Transaction ids
 * are chargegate's by now.
 */
export const profileCalls16 = profileCallsOf<Ocpp16Actions>({
  SetChargingProfile: (ctx, params, toStation) => {
    const { connectorId, csChargingProfiles: p } = params;
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
      return sentOnAndKept(ctx, connectorId, purpose, profileFrom16(p), rules, () => toStation(params)).then(
        (answer) => ('refusal' in answer ? { status: 'Rejected' } : answer),
      );
    return keep(ctx, connectorId, purpose, profileFrom16(p), rules).then((refusal) => ({
      status: refusal ? 'Rejected' : 'Accepted',
    }));
  },
  ClearChargingProfile: (ctx, params, toStation) => {
    const { id, connectorId, chargingProfilePurpose, stackLevel } = params;
    const handling = handlingOf(ctx, connectorId ?? 0);
    if (handling === 'station') return undefined;
    const criteria = {
      ...(id !== undefined && { id }),
      ...(connectorId !== undefined && { connectorId }),
      ...(chargingProfilePurpose !== undefined && { purpose: purposeFrom16(chargingProfilePurpose) }),
      ...(stackLevel !== undefined && { stackLevel }),
    };
    if (handling === 'sentOn') return clearedOnBoth(ctx, criteria, () => toStation(params));
    return clear(ctx, criteria).then((cleared) => ({ status: cleared ? 'Accepted' : 'Unknown' }));
  },
  GetCompositeSchedule: (ctx, params, toStation) => {
    const { connectorId, duration, chargingRateUnit } = params;
    const composite = compositeOf(ctx, connectorId, duration, chargingRateUnit ?? 'A');
    if (composite === 'station') return toStation(params);
    if (composite === 'rejected') return Promise.resolve({ status: 'Rejected' });
    const { scheduleStart, chargingRateUnit: unit, periods } = composite;
    const answer: GetCompositeScheduleResponse = {
      status: 'Accepted',
      connectorId,
      scheduleStart,
      chargingSchedule: {
        duration: composite.duration,
        startSchedule: scheduleStart,
        chargingRateUnit: unit,
        chargingSchedulePeriod: periods.map((p) => ({ startPeriod: p.startS, limit: p.limit })),
      },
    };
    return Promise.resolve(answer);
  },
  RemoteStartTransaction: (ctx, params, toStation) => {
    const { chargingProfile, ...start } = params;
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
      send: () => toStation(handling === 'sentOn' ? params : start),
    }).then((answer) => ({ status: answer.status }));
  },
});

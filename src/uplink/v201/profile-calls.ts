import type { Ocpp201Actions } from '../../ocpp/index.js';
import type { Refusal } from '../csms-profiles.js';
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
  uncomposed,
  type KeepRules,
} from '../csms-profile-calls.js';
import { forbiddenIn201, profileFrom201, purposeFrom201 } from './profile-conversion.js';

type Response201<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][1];
type CompositeSchedule201 = NonNullable<Response201<'GetCompositeSchedule'>['schedule']>;

/**
 * OCPP 2.0.1's charging-profile calls, answered as csms-profile-calls.ts does for both versions: the EVSE is
 * chargegate's connector (docs/install/connecting-stations.md#ocpp-201-stations), a TxProfile names its transaction by the station's own id.
 * Undefined (relayed) for a RequestStartTransaction without a profile, and for a SetChargingProfile, a
 * ClearChargingProfile or a start that OCPP allows on an EVSE whose station refuses profiles (as 1.6's).
 */
export const profileCalls201 = profileCallsOf<Ocpp201Actions>({
  SetChargingProfile: (ctx, params, toStation) => {
    const { evseId, chargingProfile: p } = params;
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
      return sentOnAndKept(ctx, evseId, purpose, profileFrom201(p), rules, () => toStation(params)).then((answer) =>
        'refusal' in answer ? { status: 'Rejected', statusInfo: statusInfoOf(answer.refusal) } : answer,
      );
    return keep(ctx, evseId, purpose, profileFrom201(p), rules).then((why): Response201<'SetChargingProfile'> =>
      why ? { status: 'Rejected', statusInfo: statusInfoOf(why) } : { status: 'Accepted' },
    );
  },
  ClearChargingProfile: (ctx, params, toStation) => {
    const { chargingProfileId: id, chargingProfileCriteria: c } = params;
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
    if (handling === 'sentOn') return clearedOnBoth(ctx, criteria, () => toStation(params));
    if (!criteria) return Promise.resolve({ status: 'Unknown' });
    return clear(ctx, criteria).then((cleared): Response201<'ClearChargingProfile'> => ({
      status: cleared ? 'Accepted' : 'Unknown',
    }));
  },
  GetCompositeSchedule: (ctx, params, toStation) => {
    const { evseId, duration, chargingRateUnit } = params;
    const composite = compositeOf(ctx, evseId, duration, chargingRateUnit ?? 'A');
    if (composite === 'station') return toStation(params);
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
  },
  RequestStartTransaction: (ctx, params, toStation) => {
    const { chargingProfile, ...start } = params;
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
        const answer = await toStation(handling === 'sentOn' ? params : start);
        // Begun before the request (the cable first): the station names the transaction the profile is for.
        if (answer.status === 'Accepted' && answer.transactionId !== undefined)
          ctx.profiles.noteRemoteStarted(ctx.stationId, answer.transactionId, remoteStartId);
        return answer;
      },
    }).then((answer): Response201<'RequestStartTransaction'> => {
      if (!('refusal' in answer)) return answer;
      return { status: 'Rejected', statusInfo: statusInfoOf(answer.refusal) };
    });
  },
});

/** A refusal as a 2.0.1 answer's statusInfo (additionalInfo: at most 512 characters). */
function statusInfoOf(refusal: Refusal): { reasonCode: string; additionalInfo: string } {
  return { reasonCode: refusal.reasonCode, additionalInfo: refusal.why.slice(0, 512) };
}

import type { CsmsLocalList } from '../../authorization/index.js';
import type { Ocpp201Actions } from '../../ocpp/index.js';
import { CSMS, csmsCallsOf, refusedBy, type CsmsCallContext, type CsmsCallHandler } from '../csms-calls.js';
import { decisionOf } from './dialect.js';

type SendLocalList = Ocpp201Actions['SendLocalList'][0];

/**
 * What a 2.0.1 call from the CSMS becomes, as csmsCallHandler16 does for 1.6 (docs/design/uplink.md#uplink-what-the-csms-sees):
 * RequestStart/StopTransaction are the API's remote start and stop, SendLocalList and GetLocalListVersion concern
 * chargegate's own list too, the rest goes to the station as it is.
 */
export function csmsCallHandler201({ central, site, localLists, log }: CsmsCallContext): CsmsCallHandler {
  const refused = refusedBy(log);
  return csmsCallsOf<Ocpp201Actions>(
    {
      RequestStartTransaction: (stationId, params, toStation) => {
        const { idToken, groupIdToken, evseId, remoteStartId, chargingProfile } = params;
        // The domain's start carries no charging profile: one with a profile goes as it is.
        if (chargingProfile) return toStation();
        // The CSMS's remoteStartId, so it can match the station's TransactionEvents with its request.
        const request = {
          ...(evseId !== undefined && { connectorId: evseId }),
          idTag: idToken.idToken,
          idToken,
          ...(groupIdToken && { groupIdToken }),
          remoteStartId,
        };
        return central.remoteCharging
          .start(stationId, request, CSMS)
          .catch((err: unknown) => refused(err, 'RequestStartTransaction', stationId));
      },
      RequestStopTransaction: async (stationId, { transactionId }, toStation) => {
        const transaction = site.transactions.byStationTransactionId(stationId, transactionId);
        if (transaction)
          return central.remoteCharging
            .stop(transaction, CSMS)
            .catch((err: unknown) => refused(err, 'RequestStopTransaction', stationId));
        // Begun without a driver's token yet: no transaction of chargegate's to stop, but the CSMS has its events.
        if (site.transactions.beganWithoutDriver(stationId, transactionId)) return toStation();
        log.warn(
          { stationId, action: 'RequestStopTransaction', transactionId },
          'CSMS named a transaction this station does not have: answered Rejected',
        );
        return { status: 'Rejected' };
      },
      SendLocalList: (stationId, list, toStation) => localLists.send(stationId, localListOf(list), toStation),
      GetLocalListVersion: (stationId, _params, toStation) => localLists.version(stationId, toStation, 'versionNumber'),
    },
    (stationId, action, params) => central.commands.call201(stationId, action, params),
  );
}

/**
 * A 2.0.1 list in the words chargegate keeps lists in (1.6's): the token's value, its status as the decision chain
 * takes a CSMS's (2.0.1-only ones are Invalid), its cacheExpiryDateTime and groupIdToken as expiry and parent.
 */
function localListOf({ versionNumber, updateType, localAuthorizationList }: SendLocalList): CsmsLocalList {
  return {
    listVersion: versionNumber,
    updateType,
    ...(localAuthorizationList && {
      localAuthorizationList: localAuthorizationList.map(({ idToken, idTokenInfo }) => ({
        idTag: idToken.idToken,
        ...(idTokenInfo && { idTagInfo: decisionOf(idTokenInfo) }),
      })),
    }),
  };
}

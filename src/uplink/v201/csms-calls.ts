import type { CsmsLocalList } from '../../authorization/index.js';
import { OCPP201, type Ocpp201Actions } from '../../ocpp/index.js';
import { CSMS, refusedBy, relayIn, type CsmsCallContext, type CsmsCallHandler } from '../csms-calls.js';
import { decisionOf } from './dialect.js';

type RequestStartTransaction = Ocpp201Actions['RequestStartTransaction'][0];
type SendLocalList = Ocpp201Actions['SendLocalList'][0];

/**
 * What a 2.0.1 call from the CSMS becomes, as csmsCallHandler16 does for 1.6 (README "Uplink to a CSMS"):
 * RequestStart/StopTransaction are the API's remote start and stop, SendLocalList and GetLocalListVersion concern
 * chargegate's own list too, the rest goes to the station as it is.
 */
export function csmsCallHandler201(options: CsmsCallContext): CsmsCallHandler {
  const { central, site, localLists, log } = options;
  const refused = refusedBy(log);
  const relay = relayIn(central, OCPP201);
  return async (stationId, action, params) => {
    const toStation = () => relay(stationId, action, params);
    switch (action) {
      case 'RequestStartTransaction': {
        const { idToken, groupIdToken, evseId, remoteStartId, chargingProfile } = params as RequestStartTransaction;
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
          .catch((err: unknown) => refused(err, action, stationId));
      }
      case 'RequestStopTransaction': {
        const { transactionId } = params as Ocpp201Actions['RequestStopTransaction'][0];
        const transaction = site.transactions.byStationTransactionId(stationId, transactionId);
        if (transaction)
          return central.remoteCharging
            .stop(transaction, CSMS)
            .catch((err: unknown) => refused(err, action, stationId));
        // Begun without a driver's token yet: no transaction of chargegate's to stop, but the CSMS has its events.
        if (site.transactions.beganWithoutDriver(stationId, transactionId)) return toStation();
        log.warn(
          { stationId, action, transactionId },
          'CSMS named a transaction this station does not have: answered Rejected',
        );
        return { status: 'Rejected' };
      }
      case 'SendLocalList':
        return localLists.send(stationId, localListOf(params as SendLocalList), toStation);
      case 'GetLocalListVersion':
        return localLists.version(stationId, toStation, 'versionNumber');
      default:
        return toStation();
    }
  };
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

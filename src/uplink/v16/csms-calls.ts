import type { CsmsLocalList } from '../../authorization/index.js';
import { OCPP16, type RemoteStartTransactionRequest, type RemoteStopTransactionRequest } from '../../ocpp/index.js';
import { CSMS, refusedBy, relayIn, type CsmsCallContext, type CsmsCallHandler } from '../csms-calls.js';

/**
 * What a call from the CSMS becomes (README "Uplink to a CSMS"): RemoteStart/StopTransaction are the same domain
 * calls as the API's, SendLocalList and GetLocalListVersion concern chargegate's own list too, the rest goes to the
 * station as it is. The station's answer is the CSMS's.
 */
export function csmsCallHandler16(options: CsmsCallContext): CsmsCallHandler {
  const { central, site, localLists, log } = options;
  const refused = refusedBy(log);
  const relay = relayIn(central, OCPP16);
  return async (stationId, action, params) => {
    const toStation = () => relay(stationId, action, params);
    switch (action) {
      case 'RemoteStartTransaction': {
        const { connectorId, idTag, chargingProfile } = params as RemoteStartTransactionRequest;
        // The domain's start carries no charging profile: one with a profile goes as it is.
        if (chargingProfile) return toStation();
        return central.remoteCharging
          .start(stationId, { ...(connectorId !== undefined && { connectorId }), idTag }, CSMS)
          .catch((err: unknown) => refused(err, action, stationId));
      }
      case 'RemoteStopTransaction': {
        const transaction = site.transactions.ofStation(
          stationId,
          (params as RemoteStopTransactionRequest).transactionId,
        );
        if (!transaction) return { status: 'Rejected' };
        return central.remoteCharging.stop(transaction, CSMS).catch((err: unknown) => refused(err, action, stationId));
      }
      case 'SendLocalList':
        return localLists.send(stationId, params as CsmsLocalList, toStation);
      case 'GetLocalListVersion':
        return localLists.version(stationId, toStation);
      default:
        return toStation();
    }
  };
}

import { type Ocpp16Actions } from '../../ocpp/index.js';
import { CSMS, csmsCallsOf, refusedBy, type CsmsCallContext, type CsmsCallHandler } from '../csms-calls.js';

/**
 * What a call from the CSMS becomes (docs/design/uplink.md#uplink-what-the-csms-sees): RemoteStart/StopTransaction are the same domain
 * calls as the API's, SendLocalList and GetLocalListVersion concern chargegate's own list too, the rest goes to the
 * station as it is. The station's answer is the CSMS's.
 */
export function csmsCallHandler16({ central, site, localLists, log }: CsmsCallContext): CsmsCallHandler {
  const refused = refusedBy(log);
  return csmsCallsOf<Ocpp16Actions>(
    {
      RemoteStartTransaction: (stationId, { connectorId, idTag, chargingProfile }, toStation) =>
        // The domain's start carries no charging profile: one with a profile goes as it is.
        chargingProfile
          ? toStation()
          : central.remoteCharging
              .start(stationId, { ...(connectorId !== undefined && { connectorId }), idTag }, CSMS)
              .catch((err: unknown) => refused(err, 'RemoteStartTransaction', stationId)),
      RemoteStopTransaction: async (stationId, { transactionId }) => {
        const transaction = site.transactions.ofStation(stationId, transactionId);
        if (!transaction) return { status: 'Rejected' };
        return central.remoteCharging
          .stop(transaction, CSMS)
          .catch((err: unknown) => refused(err, 'RemoteStopTransaction', stationId));
      },
      SendLocalList: (stationId, list, toStation) => localLists.send(stationId, list, toStation),
      GetLocalListVersion: (stationId, _params, toStation) => localLists.version(stationId, toStation, 'listVersion'),
    },
    (stationId, action, params) => central.commands.call16(stationId, action, params),
  );
}

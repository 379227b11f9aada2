import type { UpstreamDecision } from '../../authorization/index.js';
import type { Logger } from '../../log/index.js';
import { OCPP16 } from '../../ocpp/index.js';
import type { LinkDialect } from '../dialect.js';
import type { QueuedMessage, UplinkQueue } from '../queue.js';

/**
 * A 1.6 station's link: StopTransaction, MeterValues and the CSMS's calls name the CSMS's transaction ids, which the
 * queue maps to chargegate's (docs/design/uplink.md#uplink-what-the-csms-sees).
 */
export function v16Dialect(stationId: string, queue: UplinkQueue, log: Logger): LinkDialect {
  return {
    protocol: OCPP16,
    authorize: (idTag) => ({ idTag }),
    decision: (answer) => (answer as { idTagInfo: UpstreamDecision }).idTagInfo,
    statusNotifications: (reported) =>
      reported.map(({ connectorId, status, errorCode }) => ({ connectorId, status, errorCode })),
    outgoing: (message) => mapped(message, queue, log),
    answered(message, answer) {
      if (message.action !== 'StartTransaction' || message.transactionId === null) return;
      const { transactionId, idTagInfo } = answer as { transactionId: number; idTagInfo: { status: string } };
      queue.map(stationId, message.transactionId, transactionId);
      if (idTagInfo.status !== 'Accepted')
        log.info(
          { transactionId: message.transactionId, csmsTransactionId: transactionId, status: idTagInfo.status },
          'CSMS did not accept a started transaction; the local decision stands',
        );
    },
    refused(message) {
      if (message.action === 'StartTransaction' && message.transactionId !== null)
        queue.map(stationId, message.transactionId, null);
    },
    incoming: (action, params) => local(action, params, (csmsId) => queue.transactionIdOf(stationId, csmsId)),
  };
}

/**
 * The CSMS names 1.6 transactions by its own ids; the station knows chargegate's. RemoteStopTransaction and a
 * SetChargingProfile's TxProfile name one; the other calls pass as they are.
 */
function local(
  action: string,
  params: Record<string, unknown>,
  transactionIdOf: (csmsId: number) => number | undefined,
): Record<string, unknown> | undefined {
  if (action === 'RemoteStopTransaction') {
    const transactionId = transactionIdOf(params.transactionId as number);
    return transactionId === undefined ? undefined : { ...params, transactionId };
  }
  const profile = params.csChargingProfiles as Record<string, unknown> | undefined;
  if (action === 'SetChargingProfile' && profile?.transactionId !== undefined) {
    const transactionId = transactionIdOf(profile.transactionId as number);
    return transactionId === undefined ? undefined : { ...params, csChargingProfiles: { ...profile, transactionId } };
  }
  return params;
}

/**
 * The payload with the CSMS's transaction id, also in a MeterValues the station sent without one (queued under the
 * transaction its readings were kept for); undefined when the CSMS never heard of the transaction.
 */
function mapped(message: QueuedMessage, queue: UplinkQueue, log: Logger): Record<string, unknown> | undefined {
  if (message.action === 'StartTransaction' || message.transactionId === null) return message.payload;
  const csmsId = queue.csmsTransactionId(message.transactionId);
  if (csmsId === null || csmsId === undefined) {
    log.warn(
      { action: message.action, transactionId: message.transactionId },
      csmsId === null
        ? 'message of a transaction whose start was dropped: dropped'
        : 'message of a transaction the CSMS never heard of: dropped',
    );
    return undefined;
  }
  return { ...message.payload, transactionId: csmsId };
}

import type { UpstreamDecision } from '../../authorization/index.js';
import type { Logger } from '../../log/index.js';
import { OCPP201, type ForwardedMessage, type Ocpp201Actions } from '../../ocpp/index.js';
import type { AuthorizationStatus } from '../../site/index.js';
import { statement, type Database } from '../../store/index.js';
import type { LinkDialect } from '../dialect.js';
import type { QueuedMessage, UplinkQueue } from '../queue.js';

type IdTokenInfo = Ocpp201Actions['Authorize'][1]['idTokenInfo'];
type ConnectorStatus = Ocpp201Actions['StatusNotification'][0]['connectorStatus'];
type TransactionEvent = Ocpp201Actions['TransactionEvent'][0];

/** The statuses 1.6 has too; the others 2.0.1 adds (NoCredit, NotAtThisTime, ...) all mean "not this token here". */
const STATUSES_16: ReadonlySet<string> = new Set<AuthorizationStatus>([
  'Accepted',
  'Blocked',
  'Expired',
  'Invalid',
  'ConcurrentTx',
]);

/** A 1.6 status that is not one of these has a car at the connector (Preparing, Charging, ..., Finishing). */
const CONNECTOR_STATUSES: ReadonlySet<string> = new Set<ConnectorStatus>([
  'Available',
  'Reserved',
  'Unavailable',
  'Faulted',
]);

/**
 * A 2.0.1 station's link (docs/design/uplink.md#uplink-what-the-csms-sees): nothing to map, a 2.0.1 transactionId is the station's own
 * string. A TransactionEvent Started the CSMS refused every time takes its transaction's later events with it.
 */
export function v201Dialect(stationId: string, queue: UplinkQueue, log: Logger): LinkDialect {
  /** The station's ids of transactions whose Started was dropped (the queue keeps it for those chargegate knows). */
  const droppedStarts = new Set<string>();
  const stationTransactionIdOf = (message: QueuedMessage): string | undefined =>
    transactionEventOf(message)?.transactionInfo.transactionId;
  return {
    protocol: OCPP201,
    // A token the decision chain got without a type came from 1.6 words: an RFID card's UID.
    authorize: (idTag, idTokenType) => ({ idToken: { idToken: idTag, type: idTokenType ?? 'ISO14443' } }),
    decision: (answer) => decisionOf((answer as { idTokenInfo: IdTokenInfo }).idTokenInfo),
    // chargegate's connector is the 2.0.1 EVSE, with one connector (docs/install/connecting-stations.md#ocpp-201-stations); 0 is no EVSE.
    statusNotifications: (reported, now) =>
      reported
        .filter(({ connectorId }) => connectorId > 0)
        .map(({ connectorId, status }) => ({
          timestamp: now.toISOString(),
          connectorStatus: CONNECTOR_STATUSES.has(status) ? status : 'Occupied',
          evseId: connectorId,
          connectorId: 1,
        })),
    outgoing(message) {
      const stationTransactionId = stationTransactionIdOf(message);
      if (stationTransactionId === undefined) return message.payload;
      const startDropped =
        droppedStarts.has(stationTransactionId) ||
        (message.transactionId !== null && queue.csmsTransactionId(message.transactionId) === null);
      if (!startDropped) return message.payload;
      // Kept for the transaction once chargegate knows it, so a restart still drops its later events.
      if (message.transactionId !== null) queue.map(stationId, message.transactionId, null);
      log.warn(
        { action: message.action, stationTransactionId },
        'message of a transaction whose start was dropped: dropped',
      );
      return undefined;
    },
    answered(message, answer) {
      const status = (answer as { idTokenInfo?: IdTokenInfo }).idTokenInfo?.status;
      if (message.action !== 'TransactionEvent' || status === undefined || status === 'Accepted') return;
      log.info(
        { stationTransactionId: stationTransactionIdOf(message), status },
        'CSMS did not accept the token of a transaction; the local decision stands',
      );
    },
    refused(message) {
      const stationTransactionId = stationTransactionIdOf(message);
      if (stationTransactionId === undefined || message.payload.eventType !== 'Started') return;
      droppedStarts.add(stationTransactionId);
      if (message.transactionId !== null) queue.map(stationId, message.transactionId, null);
    },
    // A 2.0.1 call names the station's own transactionId: nothing to map.
    incoming: (_action, params) => params,
  };
}

/** The TransactionEvent a message is, as the station sent it (validated on its way in); undefined for another. */
function transactionEventOf(message: { action: string; payload: object }): TransactionEvent | undefined {
  return message.action === 'TransactionEvent' ? (message.payload as TransactionEvent) : undefined;
}

/**
 * 2.0.1 idTokenInfo in the decision chain's (1.6) words: the CSMS's answer to an Authorize, an entry of its
 * SendLocalList.
 */
export function decisionOf(info: IdTokenInfo): UpstreamDecision {
  return {
    status: STATUSES_16.has(info.status) ? (info.status as AuthorizationStatus) : 'Invalid',
    ...(info.cacheExpiryDateTime !== undefined && { expiryDate: info.cacheExpiryDateTime }),
    ...(info.groupIdToken !== undefined && { parentIdTag: info.groupIdToken.idToken }),
  };
}

/**
 * The station's transaction a TransactionEvent says a RequestStartTransaction began, when it says (remoteStartId),
 * with the token the event names, if any.
 */
export function remoteStartOf(
  message: ForwardedMessage,
): { stationTransactionId: string; remoteStartId: number; idToken?: string } | undefined {
  const event = transactionEventOf(message);
  if (!event) return undefined;
  const { transactionInfo, idToken } = event;
  const { transactionId, remoteStartId } = transactionInfo;
  if (remoteStartId === undefined) return undefined;
  return { stationTransactionId: transactionId, remoteStartId, ...(idToken && { idToken: idToken.idToken }) };
}

/**
 * A TransactionEvent queued while the station's link is not accepted is one the CSMS could not hear of as it
 * happened: it goes with `offline: true`, written into the row so that a repeat carries the same content.
 */
export function queuedV201(message: ForwardedMessage, linkAccepted: boolean): ForwardedMessage {
  if (linkAccepted || message.action !== 'TransactionEvent') return message;
  return { ...message, payload: { ...message.payload, offline: true } };
}

/** Keeps a 2.0.1 station's BootNotification as sent; call inside the write of its boot. */
export function keepBootNotification(db: Database, stationId: string, payload: object): void {
  statement(
    db,
    `INSERT INTO uplink_boot_notifications (station_id, payload) VALUES (?, ?)
     ON CONFLICT (station_id) DO UPDATE SET payload = excluded.payload WHERE payload != excluded.payload`,
  ).run(stationId, JSON.stringify(payload));
}

/**
 * The BootNotification a 2.0.1 station last sent, as it sent it. A station that booted before chargegate kept it (a
 * release without the uplink) is introduced by the boot chargegate knows of it, in 2.0.1's words with reason Unknown:
 * 2.0.1 stations boot again only when they restart, which may be weeks away. Undefined before its first boot.
 */
export function lastBootNotification(
  db: Database,
  stationId: string,
  known: Record<string, unknown> | undefined,
): object | undefined {
  const payload = statement<[string], string>(db, 'SELECT payload FROM uplink_boot_notifications WHERE station_id = ?')
    .pluck()
    .get(stationId);
  if (payload !== undefined) return JSON.parse(payload) as object;
  if (typeof known?.chargePointVendor !== 'string' || typeof known.chargePointModel !== 'string') return undefined;
  const text = (key: string) => (typeof known[key] === 'string' ? known[key] : undefined);
  const firmwareVersion = text('firmwareVersion');
  const serialNumber = text('chargePointSerialNumber');
  return {
    chargingStation: {
      vendorName: known.chargePointVendor,
      model: known.chargePointModel,
      ...(firmwareVersion !== undefined && { firmwareVersion }),
      ...(serialNumber !== undefined && { serialNumber }),
    },
    reason: 'Unknown',
  };
}

import type { AuthorizationDecision } from '../../authorization/index.js';
import { errorCodeOf } from '../../errors/index.js';
import type { Transaction } from '../../site/index.js';
import { BoundedMap } from '../bounded-map.js';
import { callRegistrar, stationTime, unconfiguredConnectorCheck, warnIfStoppedBeforeStart, type StationHandlerDeps } from '../call-handling.js';
import type { StationClient } from '../connections.js';
import { rpcError } from '../rpc.js';
import { SIGN_CERTIFICATE_PER_STATION_PER_MINUTE } from '../sign-certificate-throttle.js';
import { importedEnergyWh, statusOf, stopReasonOf, type ConnectorActivity } from './mapping.js';
import type { IdTokenInfoType, Ocpp201Actions, TransactionEventRequest } from './messages.js';

/** What a connection remembers per EVSE and per open transaction, at most: a station has a handful of each. */
const REMEMBERED_PER_CONNECTION = 64;

/**
 * The station-initiated OCPP 2.0.1 actions, onto the same domain calls as 1.6 (README "OCPP 2.0.1 stations"): an EVSE is a
 * connector (`connectorId` = EVSE id), a TransactionEvent opens and closes the same transactions, and every
 * answer waits for its own writes to be durable.
 */
export function registerV201Handlers(client: StationClient, deps: StationHandlerDeps): void {
  const { site, authorizer, config, logger: log, warn } = deps;
  const stationId = client.session.stationId;
  const on = callRegistrar<Ocpp201Actions>(client, deps);
  // Per EVSE, what its connector and its transaction are doing: the 1.6 status is made of both.
  const activity = new BoundedMap<number, ConnectorActivity>(REMEMBERED_PER_CONNECTION);
  const evseOfTransaction = new BoundedMap<string, number>(REMEMBERED_PER_CONNECTION);
  const lastEnergyWh = new BoundedMap<number, number>(REMEMBERED_PER_CONNECTION);

  const unconfigured = unconfiguredConnectorCheck(stationId, deps);

  /** Records the 1.6 status the EVSE's activity now amounts to (the domain writes and emits only a change). */
  const reportStatus = (evseId: number, change: Partial<ConnectorActivity>): void => {
    const next = { ...(activity.get(evseId) ?? { connectorStatus: 'Occupied' as const }), ...change };
    activity.set(evseId, next);
    const { status, errorCode } = statusOf(next);
    site.connectors.recordStationStatus(stationId, evseId, status, errorCode);
  };

  on(
    'BootNotification',
    (params) => {
      const { chargingStation } = params;
      // Stored as a 1.6 station's BootNotification is: the status page and `station list` read these names.
      const status = site.stations.boot(stationId, {
        chargePointVendor: chargingStation.vendorName,
        chargePointModel: chargingStation.model,
        ...(chargingStation.firmwareVersion !== undefined && { firmwareVersion: chargingStation.firmwareVersion }),
        ...(chargingStation.serialNumber !== undefined && { chargePointSerialNumber: chargingStation.serialNumber }),
      });
      log.info({ status, vendor: chargingStation.vendorName, model: chargingStation.model, reason: params.reason }, 'boot notification');
      return { status, currentTime: new Date().toISOString(), interval: config().ocpp.heartbeatIntervalS };
    },
    { beforeAcceptance: true },
  );

  on('Heartbeat', () => ({ currentTime: new Date().toISOString() }));

  on('StatusNotification', (params) => {
    const { evseId, connectorStatus } = params;
    if (unconfigured('StatusNotification', evseId)) return {};
    // A connector that is free again has no transaction state left to show.
    reportStatus(evseId, connectorStatus === 'Occupied' ? { connectorStatus } : { connectorStatus, ended: false });
    log.debug({ evseId, connectorId: params.connectorId, connectorStatus }, 'status notification');
    return {};
  });

  on('Authorize', async (params) => {
    const idTag = params.idToken.idToken;
    const decision = await authorizer.authorize({ idTag, stationId });
    site.authorizations.record(stationId, idTag, decision.status, decision.connectorId);
    return { idTokenInfo: idTokenInfoOf(decision) };
  });

  /** Opens the transaction with the driver's token: at the first event that carries one (README "OCPP 2.0.1 stations"). */
  const start = async (
    params: TransactionEventRequest,
    evseId: number,
    idTag: string,
    energyWh: number | undefined,
  ): Promise<{ decision: AuthorizationDecision; transaction: Transaction }> => {
    const stationTransactionId = params.transactionInfo.transactionId;
    // Begun before this event named the driver (a Started one without an idToken, perhaps on an earlier connection).
    const begun = site.transactions.beganWithoutDriver(stationId, stationTransactionId);
    const { decision, started } = await authorizer.authorizeStart({ idTag, stationId, connectorId: evseId }, (settled) =>
      site.transactions.start({
        at: site.connectors.locate(stationId, evseId),
        idTag,
        meterStartWh: begun?.meterStartWh ?? energyWh ?? lastEnergyWh.get(evseId) ?? 0,
        startedAt: begun?.startedAt ?? stationTime(params.timestamp),
        ...(params.reservationId !== undefined && { reservationId: params.reservationId }),
        source: 'ocpp',
        stationTransactionId,
        authorizationStatus: settled.status,
      }),
    );
    log.info({ transactionId: started.id, stationTransactionId, evseId, status: decision.status }, 'transaction started');
    return { decision, transaction: started };
  };

  const stop = (params: TransactionEventRequest, transaction: Transaction, energyWh: number | undefined): void => {
    const stoppedAt = stationTime(params.timestamp);
    const stopped = site.transactions.stop({
      stationId,
      transactionId: transaction.id,
      meterStopWh: energyWh ?? lastEnergyWh.get(transaction.connectorId) ?? transaction.meterStartWh,
      stoppedAt,
      reason: stopReasonOf(params.transactionInfo.stoppedReason),
      ...(params.idToken !== undefined && { idTag: params.idToken.idToken }),
    });
    if (!stopped) return;
    log.info({ transactionId: stopped.id, stationTransactionId: stopped.stationTransactionId, reason: stopped.stopReason }, 'transaction stopped');
    warnIfStoppedBeforeStart(stopped, stoppedAt, warn);
  };

  on('TransactionEvent', async (params) => {
    const { transactionInfo, eventType } = params;
    const stationTransactionId = transactionInfo.transactionId;
    let transaction = site.transactions.byStationTransactionId(stationId, stationTransactionId);
    const evseId =
      params.evse?.id ??
      evseOfTransaction.get(stationTransactionId) ??
      transaction?.connectorId ??
      site.transactions.beganWithoutDriver(stationId, stationTransactionId)?.connectorId;
    if (evseId === undefined) {
      warn({ stationTransactionId, eventType, seqNo: params.seqNo }, 'TransactionEvent names no EVSE and none is known for its transaction: answered, no event');
      return {};
    }
    // EVSE 0 is the whole station, as connector 0 is in 1.6: a transaction there would hold its tag for ever.
    if (evseId === 0) throw rpcError('PropertyConstraintViolation', 'evse.id must be 1 or more for a transaction');
    if (unconfigured('TransactionEvent', evseId)) return params.idToken ? { idTokenInfo: { status: 'Invalid' } } : {};
    evseOfTransaction.set(stationTransactionId, evseId);
    const energyWh = importedEnergyWh(params.meterValue);
    if (energyWh !== undefined) lastEnergyWh.set(evseId, energyWh);

    let idTokenInfo: IdTokenInfoType | undefined;
    if (!transaction && params.idToken) {
      const started = await start(params, evseId, params.idToken.idToken, energyWh);
      idTokenInfo = idTokenInfoOf(started.decision);
      transaction = started.transaction;
    } else if (!transaction && eventType === 'Started') {
      site.transactions.noteStartWithoutDriver(stationId, stationTransactionId, { connectorId: evseId, startedAt: stationTime(params.timestamp), meterStartWh: energyWh ?? null });
    } else if (params.idToken) {
      idTokenInfo = idTokenInfoOf(
        await authorizer.authorize({ idTag: params.idToken.idToken, stationId, connectorId: evseId, ...(transaction && { transactionId: transaction.id }) }),
      );
    }

    if (eventType === 'Ended') {
      evseOfTransaction.delete(stationTransactionId);
      if (transaction) stop(params, transaction, energyWh);
      else {
        site.transactions.forgetStartWithoutDriver(stationId, stationTransactionId);
        log.info({ stationTransactionId, evseId }, 'transaction ended before any event named its driver: nothing was billed, no event');
      }
      if (activity.get(evseId)?.connectorStatus === 'Occupied') reportStatus(evseId, { chargingState: undefined, ended: transaction !== undefined });
    } else if (transactionInfo.chargingState && transaction) {
      reportStatus(evseId, { connectorStatus: 'Occupied', chargingState: transactionInfo.chargingState, ended: false });
    }
    log.debug({ stationTransactionId, eventType, seqNo: params.seqNo, offline: params.offline ?? false, triggerReason: params.triggerReason }, 'transaction event');
    return idTokenInfo ? { idTokenInfo } : {};
  });

  on('MeterValues', (params) => {
    const energyWh = importedEnergyWh(params.meterValue);
    if (energyWh !== undefined) lastEnergyWh.set(params.evseId, energyWh);
    log.debug({ evseId: params.evseId, samples: params.meterValue.length }, 'meter values');
    return {};
  });

  on('SignCertificate', async (params) => {
    const turn = deps.signCertificateThrottle.take(stationId);
    if (turn !== 'allowed') {
      if (turn === 'first refused')
        log.warn({ limit: SIGN_CERTIFICATE_PER_STATION_PER_MINUTE }, 'SignCertificate refused: too many from this station in a minute; more this minute are refused unlogged');
      return { status: 'Rejected' };
    }
    const issue = deps.issueStationCertificate;
    if (!issue || (params.certificateType ?? 'ChargingStationCertificate') !== 'ChargingStationCertificate') {
      log.warn({ certificateType: params.certificateType }, 'SignCertificate refused: only a ChargingStationCertificate, and only with a station CA');
      return { status: 'Rejected' };
    }
    let certificateChain: string;
    try {
      certificateChain = await issue(params.csr, stationId);
    } catch (err) {
      if (errorCodeOf(err) !== 'CHARGEGATE_STATION_CSR') throw err;
      log.warn({ reason: (err as Error).message }, 'SignCertificate refused');
      return { status: 'Rejected' };
    }
    // The certificate goes in its own call once the station has our answer (2.0.1 A02).
    setImmediate(() => {
      client.call('CertificateSigned', { certificateChain, certificateType: 'ChargingStationCertificate' }).then(
        // Strict mode checked the answer against the CertificateSigned response schema.
        (answer) =>
          (answer as Ocpp201Actions['CertificateSigned'][1]).status === 'Accepted'
            ? log.info('station certificate sent')
            : log.warn('the station refused the certificate it asked for (CertificateSigned: Rejected); it keeps its current one'),
        (err: unknown) => log.warn({ err }, 'CertificateSigned not taken by the station'),
      );
    });
    return { status: 'Accepted' };
  });

  on('DataTransfer', (params) => {
    log.info({ vendorId: params.vendorId, messageId: params.messageId }, 'data transfer from an unknown vendor');
    return { status: 'UnknownVendorId' };
  });

  // Reports and notifications a station sends on its own: acknowledged, logged.
  on('NotifyReport', (params) => (log.debug({ requestId: params.requestId, seqNo: params.seqNo }, 'report from station'), {}));
  on('NotifyEvent', (params) => (log.debug({ seqNo: params.seqNo, events: params.eventData.length }, 'events from station'), {}));
  on('SecurityEventNotification', (params) => (log.warn({ type: params.type, techInfo: params.techInfo }, 'security event from station'), {}));
  on('FirmwareStatusNotification', (params) => (log.info({ status: params.status }, 'firmware status'), {}));
  on('LogStatusNotification', (params) => (log.info({ status: params.status }, 'log upload status'), {}));
}

/** A 1.6-style decision as 2.0.1 idTokenInfo: the same statuses exist in both. */
function idTokenInfoOf(decision: Pick<AuthorizationDecision, 'status' | 'expiryDate'>): IdTokenInfoType {
  return { status: decision.status, ...(decision.expiryDate !== undefined && { cacheExpiryDateTime: decision.expiryDate }) };
}

import type { AuthorizationDecision } from '../../authorization/index.js';
import { checkEnergyWh } from '../../site/index.js';
import {
  callRegistrar,
  stationTime,
  stopValue,
  unconfiguredConnectorCheck,
  warnIfStoppedBeforeStart,
  type StationHandlerDeps,
} from '../call-handling.js';
import type { StationClient } from '../connections.js';
import { noteDrawnCurrent } from '../drawn-current.js';
import { rpcError } from '../rpc.js';
import type { Ocpp16Actions } from './messages.js';
import { energyReadingsV16, signedReadingsV16 } from './readings.js';

type IdTagInfo = Ocpp16Actions['Authorize'][1]['idTagInfo'];

/**
 * The station-initiated OCPP 1.6 actions. Each translates into a domain call whose state change and events
 * commit before the answer goes out, so the station only ever hears about what is durable.
 */
export function registerV16Handlers(client: StationClient, deps: StationHandlerDeps): void {
  // The logger already carries stationId and siteId.
  const { site, authorizer, config, logger: log, warn } = deps;
  const stationId = client.session.stationId;
  const on = callRegistrar<Ocpp16Actions>(client, deps);
  const forwarder = deps.forwarder;
  /** A message the uplink sends only while its CSMS connection is up. */
  const live = (action: string, payload: object): void => forwarder?.live(stationId, action, payload);

  on(
    'BootNotification',
    (params) => {
      const status = site.together(() => {
        const verdict = site.stations.boot(stationId, params);
        deps.firmware?.booted(stationId, params.firmwareVersion);
        return verdict;
      });
      log.info(
        { status, vendor: params.chargePointVendor, model: params.chargePointModel, firmware: params.firmwareVersion },
        'boot notification',
      );
      live('BootNotification', params);
      return { status, currentTime: new Date().toISOString(), interval: config().ocpp.heartbeatIntervalS };
    },
    {
      beforeAcceptance: true,
      answered: ({ status }) => {
        if (status === 'Accepted') deps.booted?.(stationId);
      },
    },
  );

  on('Heartbeat', (params) => {
    live('Heartbeat', params);
    return { currentTime: new Date().toISOString() };
  });

  const unconfigured = unconfiguredConnectorCheck(stationId, deps);

  on('StatusNotification', (params) => {
    const { connectorId, status, errorCode, info, vendorId, vendorErrorCode, timestamp } = params;
    // The CSMS hears of the connector even if the config does not list it: it is the station's, as the station says.
    live('StatusNotification', params);
    if (unconfigured('StatusNotification', connectorId)) return {};
    const details = {
      ...(info !== undefined && { info }),
      ...(vendorId !== undefined && { vendorId }),
      ...(vendorErrorCode !== undefined && { vendorErrorCode }),
      ...(timestamp !== undefined && { timestamp }),
    };
    site.connectors.recordStationStatus(
      stationId,
      connectorId,
      status,
      errorCode,
      Object.keys(details).length > 0 ? details : undefined,
    );
    site.transactions.noteConnectorStatus(stationId, connectorId, status);
    log.debug({ connectorId, status, errorCode }, 'status notification');
    return {};
  });

  on('Authorize', async (params) => {
    const decision = await authorizer.authorize({ idTag: params.idTag, stationId });
    site.authorizations.record(stationId, params.idTag, decision.status, decision.connectorId);
    // Under the uplink the chain asks the CSMS itself unless the plugin or the local list decided first: only then is
    // the station's Authorize still the CSMS's to hear (docs/design/uplink.md#uplink-what-the-csms-sees).
    if (decision.source === 'plugin' || decision.source === 'local') live('Authorize', params);
    return { idTagInfo: idTagInfoOf(decision) };
  });

  on('StartTransaction', async (params) => {
    if (params.connectorId < 1)
      throw rpcError('PropertyConstraintViolation', 'connectorId must be 1 or more for a transaction');
    // No transaction id exists for it: 0 is never one, and Invalid tells the station not to charge.
    if (unconfigured('StartTransaction', params.connectorId))
      return { transactionId: 0, idTagInfo: { status: 'Invalid' } };
    const startedAt = stationTime(params.timestamp);
    // A station that lost our answer sends the same StartTransaction again, even after stopping: the same transaction.
    const repeated = site.transactions.answeredStart(
      stationId,
      params.connectorId,
      params.idTag,
      params.meterStart,
      startedAt,
    );
    if (repeated) {
      log.info(
        { transactionId: repeated.id, connectorId: params.connectorId },
        'repeated StartTransaction answered with its transaction',
      );
      const decision = await authorizer.authorize({
        idTag: params.idTag,
        stationId,
        connectorId: params.connectorId,
        transactionId: repeated.id,
      });
      return { transactionId: repeated.id, idTagInfo: idTagInfoOf(decision) };
    }
    const { decision, started: transaction } = await authorizer.authorizeStart(
      { idTag: params.idTag, stationId, connectorId: params.connectorId },
      (settled) =>
        site.together(() => {
          const started = site.transactions.start({
            at: site.connectors.locate(stationId, params.connectorId),
            idTag: params.idTag,
            meterStartWh: params.meterStart,
            startedAt,
            ...(params.reservationId !== undefined && { reservationId: params.reservationId }),
            source: 'ocpp',
            authorizationStatus: settled.status,
          });
          forwarder?.queue(stationId, { action: 'StartTransaction', payload: params, transactionId: started.id });
          return started;
        }),
    );
    log.info(
      { transactionId: transaction.id, connectorId: params.connectorId, status: decision.status },
      'transaction started',
    );
    return { transactionId: transaction.id, idTagInfo: idTagInfoOf(decision) };
  });

  on('StopTransaction', async (params) => {
    const stoppedAt = stopValue(
      'timestamp',
      () => stationTime(params.timestamp),
      () => new Date(),
      warn,
    );
    const own = site.transactions.ofStation(stationId, params.transactionId);
    const meterStopWh = stopValue(
      'meterStop',
      () => checkEnergyWh('meterStop', params.meterStop),
      // 1.6 carries no reading but the start's and the stop's: the session is billed nothing rather than left open.
      () => own?.meterStartWh ?? 0,
      warn,
    );
    const signedReadings = signedReadingsV16(own?.connectorId ?? 0, params.transactionData ?? []);
    const readings = energyReadingsV16(params.transactionData ?? []);
    const stopped = site.together(() => {
      const closed = site.transactions.stop({
        stationId,
        transactionId: params.transactionId,
        meterStopWh,
        stoppedAt,
        ...(params.reason !== undefined && { reason: params.reason }),
        ...(params.idTag !== undefined && { idTag: params.idTag }),
        ...(signedReadings.length > 0 && { signedReadings }),
        ...(readings.length > 0 && { readings }),
      });
      // A repeated or unknown stop changed nothing here: the CSMS has nothing to learn from it either.
      if (closed) forwarder?.queue(stationId, { action: 'StopTransaction', payload: params, transactionId: closed.id });
      return closed;
    });
    const owner = stopped ? undefined : site.transactions.byId(params.transactionId)?.stationId;
    if (stopped) {
      log.info({ transactionId: stopped.id, reason: params.reason ?? 'Local' }, 'transaction stopped');
      warnIfStoppedBeforeStart(stopped, stoppedAt, warn);
    } else if (owner !== undefined && owner !== stationId) {
      warn(
        { transactionId: params.transactionId, owner },
        "StopTransaction for another station's transaction: answered, nothing changed",
      );
      return {};
    } else
      warn(
        { transactionId: params.transactionId },
        'StopTransaction for an unknown or already stopped transaction: answered, no event',
      );
    if (params.idTag === undefined) return {};
    const decision = await authorizer.authorize({ idTag: params.idTag, stationId });
    return { idTagInfo: idTagInfoOf(decision) };
  });

  on('MeterValues', (params) => {
    const { transactionId } = params;
    if (
      transactionId !== undefined &&
      !site.transactions.ofStation(stationId, transactionId) &&
      site.transactions.byId(transactionId)
    ) {
      warn({ transactionId }, "MeterValues for another station's transaction: ignored");
      return {};
    }
    const signed = signedReadingsV16(params.connectorId, params.meterValue);
    const owner = site.together(() => {
      const transaction = site.transactions.keepReadings(
        { stationId, connectorId: params.connectorId, ...(transactionId !== undefined && { transactionId }) },
        { signed, plain: energyReadingsV16(params.meterValue) },
      );
      // Readings of one of this station's transactions go through its queue, under the transaction they were kept
      // for (a Begin reading names none: docs/design/uplink.md#uplink-what-the-csms-sees); the others only while online.
      if (transaction)
        forwarder?.queue(stationId, { action: 'MeterValues', payload: params, transactionId: transaction.id });
      return transaction;
    });
    if (!owner) live('MeterValues', params);
    if (!owner && signed.length > 0)
      warn(
        { transactionId, connectorId: params.connectorId, readings: signed.length },
        'signed meter values for no transaction of this station: dropped',
      );
    noteDrawnCurrent(
      deps,
      { stationId, connectorId: params.connectorId },
      params.meterValue.map((mv) =>
        mv.sampledValue
          .filter((s) => s.measurand === 'Current.Import' && (s.unit ?? 'A') === 'A')
          .map((s) => ({ ...(s.phase !== undefined && { phase: s.phase }), valueA: Number(s.value) })),
      ),
    );
    log.debug(
      { connectorId: params.connectorId, transactionId: params.transactionId, samples: params.meterValue.length },
      'meter values',
    );
    return {};
  });

  on('DataTransfer', (params) => {
    log.info({ vendorId: params.vendorId, messageId: params.messageId }, 'data transfer from an unknown vendor');
    live('DataTransfer', params);
    return { status: 'UnknownVendorId' };
  });

  // OCPP 1.6 security extension: a warning within the station's budget (a flood is counted, not written line by
  // line); under the uplink queued for the CSMS like a transaction message.
  on('SecurityEventNotification', (params) => {
    warn({ type: params.type, techInfo: params.techInfo }, 'security event from station');
    if (forwarder)
      site.together(() => forwarder.queue(stationId, { action: 'SecurityEventNotification', payload: params }));
    return {};
  });

  // Notifications a station sends on its own after firmware, diagnostics or log jobs (core profile and the security
  // extension; under the uplink the CSMS asked for those jobs): acknowledged, logged. SignCertificate is not among
  // the forwarded: the station's certificate is for chargegate's listener (docs/design/uplink.md#uplink-what-the-csms-sees).
  // A rollout's station: its progress is recorded in this call's write (src/firmware); any other is only logged there.
  on('FirmwareStatusNotification', (params) => {
    log.info({ status: params.status }, 'firmware status');
    site.together(() => deps.firmware?.status(stationId, params.status));
    live('FirmwareStatusNotification', params);
    return {};
  });
  for (const action of [
    'DiagnosticsStatusNotification',
    'LogStatusNotification',
    'SignedFirmwareStatusNotification',
  ] as const) {
    on(action, (params) => {
      log.info({ action, status: params.status }, 'station notification');
      if (action === 'DiagnosticsStatusNotification' || action === 'LogStatusNotification')
        deps.logStatus?.(stationId, params);
      live(action, params);
      return {};
    });
  }
}

function idTagInfoOf(decision: Pick<AuthorizationDecision, 'status' | 'expiryDate' | 'parentIdTag'>): IdTagInfo {
  return {
    status: decision.status,
    ...(decision.expiryDate !== undefined && { expiryDate: decision.expiryDate }),
    ...(decision.parentIdTag !== undefined && { parentIdTag: decision.parentIdTag }),
  };
}

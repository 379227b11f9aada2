import { callRegistrar, unconfiguredConnectorCheck, type StationHandlerDeps } from '../call-handling.js';
import type { StationClient } from '../connections.js';
import { signCertificateHandler } from './certificates.js';
import { ConnectionMemory } from './connection-memory.js';
import { noteDrawnCurrent } from '../drawn-current.js';
import {
  currentSamples,
  idTokenInfoOf,
  energyReadings,
  signedReadings,
  statusOf,
  type ConnectorActivity,
} from './mapping.js';
import type { Ocpp201Actions } from './messages.js';
import { transactionEventHandler } from './transaction-events.js';

/**
 * The station-initiated OCPP 2.0.1 actions, onto the same domain calls as 1.6 (docs/install/connecting-stations.md#ocpp-201-stations): an
 * EVSE is a connector (`connectorId` = EVSE id), a TransactionEvent opens and closes the same transactions
 * (transaction-events.ts), SignCertificate is the station CA's (certificates.ts), and every answer waits for its
 * own writes to be durable. Under the uplink (docs/design/uplink.md#uplink-what-the-csms-sees) TransactionEvent and SecurityEventNotification
 * go into the station's queue in their own write, the others to the CSMS only while its link is up.
 */
export function registerV201Handlers(client: StationClient, deps: StationHandlerDeps): void {
  const { site, authorizer, config, logger: log, forwarder, warn } = deps;
  const stationId = client.session.stationId;
  const live = (action: string, payload: object): void => forwarder?.live(stationId, action, payload);
  const on = callRegistrar<Ocpp201Actions>(client, deps);
  const memory = new ConnectionMemory();
  const unconfigured = unconfiguredConnectorCheck(stationId, deps);
  const reportStatus = (evseId: number, change: Partial<ConnectorActivity>): void => {
    const { status, errorCode } = statusOf(memory.changeActivity(evseId, change));
    site.connectors.recordStationStatus(stationId, evseId, status, errorCode);
    site.transactions.noteConnectorStatus(stationId, evseId, status);
  };

  on(
    'BootNotification',
    (params) => {
      const { chargingStation } = params;
      const status = site.together(() => {
        forwarder?.keepBootNotification(stationId, params);
        // Stored as a 1.6 station's BootNotification is: the status page and `station list` read these names.
        const verdict = site.stations.boot(stationId, {
          chargePointVendor: chargingStation.vendorName,
          chargePointModel: chargingStation.model,
          ...(chargingStation.firmwareVersion !== undefined && { firmwareVersion: chargingStation.firmwareVersion }),
          ...(chargingStation.serialNumber !== undefined && { chargePointSerialNumber: chargingStation.serialNumber }),
        });
        deps.firmware?.booted(stationId, chargingStation.firmwareVersion);
        return verdict;
      });
      log.info(
        { status, vendor: chargingStation.vendorName, model: chargingStation.model, reason: params.reason },
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

  on('StatusNotification', (params) => {
    const { evseId, connectorStatus } = params;
    // As a 1.6 station's: the CSMS hears of an EVSE the config does not list too.
    live('StatusNotification', params);
    if (unconfigured('StatusNotification', evseId)) return {};
    // A connector that is free again has no transaction state left to show.
    reportStatus(evseId, connectorStatus === 'Occupied' ? { connectorStatus } : { connectorStatus, ended: false });
    log.debug({ evseId, connectorId: params.connectorId, connectorStatus }, 'status notification');
    return {};
  });

  on('Authorize', async (params) => {
    const idTag = params.idToken.idToken;
    const decision = await authorizer.authorize({ idTag, stationId, idTokenType: params.idToken.type });
    site.authorizations.record(stationId, idTag, decision.status, decision.connectorId);
    // As for 1.6: the CSMS hears an Authorize the plugin or the local list decided before it was asked
    // (docs/design/uplink.md#uplink-what-the-csms-sees).
    if (decision.source === 'plugin' || decision.source === 'local') live('Authorize', params);
    return { idTokenInfo: idTokenInfoOf(decision) };
  });

  on('TransactionEvent', transactionEventHandler({ stationId, deps, memory, reportStatus, unconfigured }));

  on('MeterValues', (params) => {
    const readings = energyReadings(params.meterValue);
    memory.noteEnergy(params.evseId, readings.at(-1)?.energyWh);
    noteDrawnCurrent(deps, { stationId, connectorId: params.evseId }, currentSamples(params.meterValue));
    const signed = signedReadings(params.evseId, params.meterValue);
    const kept = site.transactions.keepReadings({ stationId, connectorId: params.evseId }, { signed, plain: readings });
    if (!kept && signed.length > 0)
      deps.warn(
        { evseId: params.evseId, readings: signed.length },
        'signed meter values for no transaction of this station: dropped',
      );
    log.debug({ evseId: params.evseId, samples: params.meterValue.length }, 'meter values');
    live('MeterValues', params);
    return {};
  });

  // Not forwarded: the certificate is for the station's connection to chargegate, issued by chargegate's station CA.
  on('SignCertificate', signCertificateHandler(client, deps));

  on('DataTransfer', (params) => {
    log.info({ vendorId: params.vendorId, messageId: params.messageId }, 'data transfer from an unknown vendor');
    live('DataTransfer', params);
    return { status: 'UnknownVendorId' };
  });

  // Reports and notifications a station sends on its own: acknowledged, logged, forwarded while the uplink is up.
  on('NotifyReport', (params) => {
    log.debug({ requestId: params.requestId, seqNo: params.seqNo }, 'report from station');
    deps.reported?.(stationId, params);
    live('NotifyReport', params);
    return {};
  });
  on('NotifyEvent', (params) => {
    log.debug({ seqNo: params.seqNo, events: params.eventData.length }, 'events from station');
    live('NotifyEvent', params);
    return {};
  });
  // Within the station's warning budget: a flood is counted, not written line by line.
  on('SecurityEventNotification', (params) => {
    warn({ type: params.type, techInfo: params.techInfo }, 'security event from station');
    if (forwarder)
      site.together(() => forwarder.queue(stationId, { action: 'SecurityEventNotification', payload: params }));
    return {};
  });
  // A rollout's station: its progress is recorded in this call's write (src/firmware); any other is only logged there.
  on('FirmwareStatusNotification', (params) => {
    log.info({ status: params.status, requestId: params.requestId }, 'firmware status');
    site.together(() => deps.firmware?.status(stationId, params.status, params.requestId));
    live('FirmwareStatusNotification', params);
    return {};
  });
  on('LogStatusNotification', (params) => {
    log.info({ status: params.status }, 'log upload status');
    deps.logStatus?.(stationId, params);
    live('LogStatusNotification', params);
    return {};
  });
  // What a station sends after a CSMS's request or on its own (a reservation ended, a report asked for): nothing for
  // chargegate to do, but the CSMS's round trips need them (docs/design/uplink.md#uplink-what-the-csms-sees).
  for (const action of FORWARDED_NOTIFICATIONS)
    on(action, (params) => {
      log.debug({ action }, 'notification from station');
      live(action, params);
      return {};
    });
  // ISO 15118: the EV's needs and schedule are the CSMS's to act on; chargegate's limits keep applying on top.
  on('NotifyEVChargingNeeds', (params) => {
    live('NotifyEVChargingNeeds', params);
    return { status: 'Rejected', statusInfo: { reasonCode: 'NoSchedule', additionalInfo: NO_EV_SCHEDULE } };
  });
  on('NotifyEVChargingSchedule', (params) => {
    live('NotifyEVChargingSchedule', params);
    return { status: 'Accepted' };
  });
  // Requests only a CSMS with the PKI can answer, which a station would wait on: refused here, not forwarded.
  const noPki = {
    reasonCode: 'NotSupported',
    additionalInfo: 'chargegate does not relay ISO 15118 certificate requests',
  };
  on('GetCertificateStatus', () => ({ status: 'Failed', statusInfo: noPki }));
  on('Get15118EVCertificate', () => ({ status: 'Failed', statusInfo: noPki, exiResponse: '' }));
}

/** 2.0.1 messages acknowledged with an empty answer and forwarded while the uplink is up. */
const FORWARDED_NOTIFICATIONS = [
  'ReservationStatusUpdate',
  'NotifyChargingLimit',
  'ClearedChargingLimit',
  'ReportChargingProfiles',
  'NotifyMonitoringReport',
  'NotifyCustomerInformation',
  'NotifyDisplayMessages',
  'PublishFirmwareStatusNotification',
] as const;

const NO_EV_SCHEDULE = 'chargegate makes no schedule for the EV; its charging limits apply';

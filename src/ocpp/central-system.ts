import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Authorizer } from '../authorization/index.js';
import { listenFailure, type Config } from '../config/index.js';
import type { HealthSource, ServedCertificate } from '../health/index.js';
import type { ChargingLimits } from '../load/index.js';
import { messageOf, type Logger } from '../log/index.js';
import { STATIONS_TOPIC, type Site } from '../site/index.js';
import { watchChangeCounter, type Database } from '../store/index.js';
import type { FirmwareProgressListener, LogStatusListener, StationMessageForwarder } from './call-handling.js';
import { CallLanes } from './call-lane.js';
import { createChargingLimits } from './charging-profiles.js';
import { StationConnections, type StationClient, type StationSession } from './connections.js';
import { toStationFrame } from './frame-errors.js';
import { registerLaneMetrics, registerOcppMetrics } from './ocpp-metrics.js';
import { createRemoteCharging, type RemoteCharging } from './remote-charging.js';
import { createRpcServer } from './rpc.js';
import { SignCertificateThrottle } from './sign-certificate-throttle.js';
import { accessChanged } from './station-access.js';
import { createStationCommands, type StationCommands } from './station-commands.js';
import { openStationConnection, type SharedHandlerDeps } from './station-connection.js';
import { createListener, type StationCa } from './station-listener.js';
import { admitStationUpgrades } from './upgrade-admission.js';
import type { Ocpp201Actions } from './v201/messages.js';

export interface CentralSystemOptions {
  config: () => Config;
  db: Database;
  site: Site;
  authorizer: Authorizer;
  logger: Logger;
  metrics?: Registry;
  /** The gateway's station CA (security profile 3): its certificate, and how it issues a station's from a CSR. */
  stationCa?: StationCa;
  /** Where what stations send goes after chargegate handled it (the uplink to a CSMS). */
  forwarder?: StationMessageForwarder;
}

/** A station's connection opened (or was replaced) or closed; `protocol` is the OCPP version it speaks. */
export type ConnectionListener = (change: {
  stationId: string;
  connected: boolean;
  protocol: string | undefined;
}) => void;

export type ReportListener = (stationId: string, part: Ocpp201Actions['NotifyReport'][0]) => void;

export interface CentralSystem {
  /** The bound OCPP port (ocpp.port 0 lets the OS choose). */
  readonly port: number;
  readonly commands: StationCommands;
  /** Remote start and stop, the same for the API and the CSMS (docs/design/uplink.md#uplink-what-the-csms-sees). */
  readonly remoteCharging: RemoteCharging;
  /** The load controller's port: charging profiles on the stations. */
  readonly chargingLimits: ChargingLimits;
  /** Tells listener of every BootNotification answered Accepted, once the answer is sent; returns the unsubscribe. */
  onBooted(listener: (stationId: string) => void): () => void;
  /** Tells listener of every part of a report a 2.0.1 station sends (NotifyReport); returns the unsubscribe. */
  onReport(listener: ReportListener): () => void;
  /** Tells listener of stations' firmware progress, inside the write of the call that said it; returns the unsubscribe. */
  onFirmwareProgress(listener: FirmwareProgressListener): () => void;
  /** Tells listener of every diagnostics or log upload status a station sends; returns the unsubscribe. */
  onLogStatus(listener: LogStatusListener): () => void;
  /** Tells listener of every station connection opened or closed; returns the unsubscribe. */
  onConnection(listener: ConnectionListener): () => void;
  /** The stations connected now (a listener added later hears only of changes). */
  connectedStations(): string[];
  readonly health: HealthSource;
  /** The TLS certificate stations are served (security profile 2), for its expiry on GET /health. */
  readonly certificate?: ServedCertificate;
  /** Applies a reloaded config: stations that lost their place in it are disconnected. */
  reload(config: Config): void;
  close(): Promise<void>;
}

/**
 * The OCPP central system (2.0.1 and 1.6-J side by side): one HTTP(S) listener at ocpp.host:port whose WebSocket
 * upgrades under ocpp.path become station connections (ocpp-rpc, strict schema validation both ways).
 */
export async function startCentralSystem(options: CentralSystemOptions): Promise<CentralSystem> {
  const { config, site, logger } = options;
  const log = logger.child({ component: 'ocpp' });
  const { ocpp } = config();
  const connections = new StationConnections();
  const rpc = createRpcServer<StationSession>({
    callTimeoutMs: ocpp.callTimeoutMs,
    maxMessageBytes: ocpp.maxMessageBytes,
    maxBadMessages: ocpp.maxBadMessages,
    outgoingFrame: toStationFrame,
  });
  let closing = false;

  admitStationUpgrades(rpc, { config, site, log });
  const bootListeners = new Set<(stationId: string) => void>();
  const connectionListeners = new Set<ConnectionListener>();
  const reportListeners = new Set<ReportListener>();
  const firmwareListeners = new Set<FirmwareProgressListener>();
  const logStatusListeners = new Set<LogStatusListener>();
  // One lane per station for every call chargegate sends it: load management's limits, the CSMS's, operations.
  const lanes = new CallLanes({ log, dropped: registerLaneMetrics(options.metrics) });
  const handlerDeps: SharedHandlerDeps = {
    site,
    authorizer: options.authorizer,
    config,
    countCall: registerOcppMetrics(options.metrics, connections),
    ...(options.stationCa && { issueStationCertificate: options.stationCa.issue }),
    signCertificateThrottle: new SignCertificateThrottle(),
    lanes,
    booted: (stationId) => bootListeners.forEach((listener) => listener(stationId)),
    reported: (stationId, part) => reportListeners.forEach((listener) => listener(stationId, part)),
    firmware: {
      status: (stationId, status, requestId) =>
        firmwareListeners.forEach((l) => l.status(stationId, status, requestId)),
      booted: (stationId, version) => firmwareListeners.forEach((l) => l.booted(stationId, version)),
    },
    logStatus: (stationId, notification) => logStatusListeners.forEach((listener) => listener(stationId, notification)),
    ...(options.forwarder && { forwarder: options.forwarder }),
  };
  const connectionChanged: ConnectionListener = (change) => connectionListeners.forEach((listener) => listener(change));
  rpc.on('client', (client: StationClient) =>
    openStationConnection(client, { connections, log, deps: handlerDeps, connectionChanged }),
  );
  rpc.on('error', (err) => log.error({ err }, 'OCPP WebSocket server error'));

  const { server, certificate } = createListener(config(), options.stationCa);
  server.on('request', (_request, response) => {
    response.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' });
    response.end(
      JSON.stringify({
        error: 'upgrade_required',
        message: `connect a WebSocket with subprotocol ocpp2.0.1 or ocpp1.6 to ${ocpp.path}/<stationId>`,
      }),
    );
  });
  server.on('upgrade', (request, socket, head) => {
    if (closing) return socket.destroy();
    rpc.handleUpgrade(request, socket, head).catch((err: unknown) => {
      // ocpp-rpc decodes the identity outside its own error handling: a malformed %-escape lands here.
      log.warn({ url: request.url, error: messageOf(err) }, 'station connection refused: unreadable URL');
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    const refuse = (err: Error) => reject(listenFailure(err, 'ocpp'));
    server.once('error', refuse);
    server.listen(ocpp.port, ocpp.host, () => {
      server.off('error', refuse);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  // Without a handler an 'error' after listen (an accept failure) would end the process; recorded, it shows on GET
  // /health.
  let listenerError: { at: Date; error: string } | undefined;
  server.on('error', (err) => {
    listenerError = { at: new Date(), error: err.message };
    log.error({ err }, 'OCPP listener error');
  });
  const report = () => ({
    status: 'ok' as const,
    port,
    connectedStations: connections.size,
    ...(listenerError && { lastErrorAt: listenerError.at.toISOString(), lastError: listenerError.error }),
  });

  /** Closes the sockets of stations whose pairing, blocking or config entry changed since they connected. */
  const recheckAccess = (): void => {
    const profile = config().ocpp.securityProfile;
    for (const client of connections.all()) {
      try {
        const admission = site.stations.admission(client.session.stationId);
        if (!accessChanged(client.session, admission, profile)) continue;
        log.info(
          { stationId: client.session.stationId, was: client.session.admission, now: admission.verdict },
          'station access changed: closing its connection',
        );
        void client.close({ code: 1008, reason: 'station access changed' });
      } catch (err) {
        log.error(
          { err, stationId: client.session.stationId },
          'could not re-check station access; will retry on the next change',
        );
      }
    }
  };
  const stopWatching = watchChangeCounter(options.db, STATIONS_TOPIC, recheckAccess, ocpp.changePollMs);

  const commands = createStationCommands(connections, lanes);
  return {
    port,
    commands,
    remoteCharging: createRemoteCharging({ site, commands, logger: log }),
    chargingLimits: createChargingLimits(connections, lanes),
    onBooted(listener) {
      bootListeners.add(listener);
      return () => bootListeners.delete(listener);
    },
    onReport(listener) {
      reportListeners.add(listener);
      return () => reportListeners.delete(listener);
    },
    onFirmwareProgress(listener) {
      firmwareListeners.add(listener);
      return () => firmwareListeners.delete(listener);
    },
    onLogStatus(listener) {
      logStatusListeners.add(listener);
      return () => logStatusListeners.delete(listener);
    },
    onConnection(listener) {
      connectionListeners.add(listener);
      return () => connectionListeners.delete(listener);
    },
    connectedStations: () => connections.all().map((c) => c.session.stationId),
    health: { name: 'ocpp', report },
    ...(certificate && { certificate }),
    reload: recheckAccess,
    async close() {
      if (closing) return;
      closing = true;
      stopWatching();
      // ocpp-rpc's own close() does not wait for its clients; close them here so each is marked offline first.
      await Promise.all(connections.all().map((c) => c.close({ code: 1001, reason: 'central system shutting down' })));
      await rpc.close({ force: true });
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

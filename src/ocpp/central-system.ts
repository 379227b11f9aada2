import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Authorizer } from '../authorization/index.js';
import { listenFailure, readConfiguredFile, type Config } from '../config/index.js';
import type { HealthSource, ServedCertificate } from '../health/index.js';
import { messageOf, summarisedWarn, type Logger } from '../log/index.js';
import { FailureLimiter } from '../credentials/index.js';
import { STATIONS_TOPIC, type Site } from '../site/index.js';
import { watchChangeCounter, type Database } from '../store/index.js';
import { StationConnections, type StationClient, type StationSession } from './connections.js';
import { toStationFrame } from './frame-errors.js';
import { CENTRAL_SYSTEM_PROTOCOLS, createRpcServer, OCPP201 } from './rpc.js';
import { SignCertificateThrottle } from './sign-certificate-throttle.js';
import { accessChanged, decideAccess, isAdmitted, type ClientCertificate } from './station-access.js';
import { createStationCommands, type StationCommands } from './station-commands.js';
import { registerV16Handlers } from './v16/handlers.js';
import { registerV201Handlers } from './v201/handlers.js';

/** A station that repeats one mistake has it logged this often a minute, the rest counted (README "Security"). */
const STATION_WARNINGS = { perInterval: 10, intervalMs: 60_000 };

export interface CentralSystemOptions {
  config: () => Config;
  db: Database;
  site: Site;
  authorizer: Authorizer;
  logger: Logger;
  metrics?: Registry;
  /** The gateway's station CA (security profile 3): its certificate, and how it issues a station's from a CSR. */
  stationCa?: StationCa;
}

export interface StationCa {
  /** Present once the CA exists: always under profile 3 (made at start), else after a first SignCertificate or `station cert`. */
  certificate?: string;
  issue(csrPem: string, stationId: string): Promise<string>;
}

export interface CentralSystem {
  /** The bound OCPP port (ocpp.port 0 lets the OS choose). */
  readonly port: number;
  readonly commands: StationCommands;
  readonly health: HealthSource;
  /** The TLS certificate stations are served (security profile 2), for its expiry on GET /health. */
  readonly certificate?: ServedCertificate;
  /** Applies a reloaded config: stations that lost their place in it are disconnected. */
  reload(config: Config): void;
  close(): Promise<void>;
}

/**
 * The OCPP central system (2.0.1 and 1.6-J side by side): one HTTP(S) listener at ocpp.host:port whose WebSocket upgrades under ocpp.path
 * become station connections (ocpp-rpc, strict schema validation both ways).
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

  const calls =
    options.metrics &&
    new Counter({
      name: 'chargegate_ocpp_calls_total',
      help: 'Calls from stations by action and outcome (ok or the OCPP error code)',
      labelNames: ['action', 'outcome'],
      registers: [options.metrics],
    });
  if (options.metrics) {
    new Gauge({
      name: 'chargegate_ocpp_connected_stations',
      help: 'Stations with an open OCPP connection',
      registers: [options.metrics],
      collect() {
        this.set(connections.size);
      },
    });
  }

  /** Runs in socket event handlers: a database error is logged, never thrown into ocpp-rpc's emitter. */
  const markOnline = (stationId: string, online: boolean, clientLog: Logger): void => {
    try {
      site.stations.setOnline(stationId, online);
    } catch (err) {
      clientLog.error({ err, online }, 'could not record the station online state');
    }
  };

  const failedUpgrades = new FailureLimiter();
  rpc.auth(async (accept, reject, handshake) => {
    const { ocpp: current } = config();
    const fields = { stationId: handshake.identity, remoteAddress: handshake.remoteAddress };
    if (!CENTRAL_SYSTEM_PROTOCOLS.some((p) => handshake.protocols.has(p))) {
      log.warn({ ...fields, offered: [...handshake.protocols] }, 'station connection refused: it offers neither the ocpp2.0.1 nor the ocpp1.6 subprotocol');
      reject(400, 'WebSocket subprotocol ocpp2.0.1 or ocpp1.6 required');
      return;
    }
    const limit = failedUpgrades.check(handshake.remoteAddress ?? 'unknown');
    if (!limit.allowed) {
      log.debug({ ...fields, retryAfterS: limit.retryAfterS }, 'station connection refused: too many failed attempts from this address');
      reject(429, `too many failed attempts from this address; retry in ${limit.retryAfterS} s`);
      return;
    }
    const decision = await decideAccess({
      identity: handshake.identity,
      endpoint: handshake.endpoint,
      path: current.path,
      profile: current.securityProfile,
      password: handshake.password,
      admission: site.stations.admission(handshake.identity),
      ...(current.securityProfile === 3 && { clientCertificate: clientCertificateOf(handshake.request) }),
    });
    if (limit.ticket.done(decision.accepted)) log.warn(fields, 'station connection refused: too many failed attempts from this address; refusing it for a minute without checking');
    if (!decision.accepted) {
      log.warn({ ...fields, status: decision.status, reason: decision.reason }, 'station connection refused');
      reject(decision.status, decision.reason);
      return;
    }
    accept(decision.session);
  });

  const signCertificateThrottle = new SignCertificateThrottle();
  rpc.on('client', (client: StationClient) => {
    const { stationId, admission } = client.session;
    const counted = isAdmitted(admission, config().ocpp.acceptUnknownStations);
    const clientLog = log.child({ stationId, siteId: counted ? site.stations.siteOf(stationId) : undefined });
    const previous = connections.attach(client);
    if (previous) {
      clientLog.info('station reconnected: closing its previous connection');
      void previous.close({ code: 1000, reason: 'replaced by a new connection' });
    }
    markOnline(stationId, true, clientLog);
    const warn = summarisedWarn(clientLog, STATION_WARNINGS);
    const handlerDeps = {
      site,
      authorizer: options.authorizer,
      config,
      logger: clientLog,
      warn,
      countCall: (action: string, outcome: string) => calls?.inc({ action, outcome }),
      ...(options.stationCa && { issueStationCertificate: options.stationCa.issue }),
      signCertificateThrottle,
    };
    if (client.protocol === OCPP201) registerV201Handlers(client, handlerDeps);
    else registerV16Handlers(client, handlerDeps);
    const schema = client.protocol === OCPP201 ? 'OCPP 2.0.1' : 'OCPP 1.6';
    client.on('badMessage', ({ error, response }) => warn({ error: error.message, answered: response?.[2] }, 'malformed frame from station'));
    client.on('strictValidationFailure', ({ method, error, outbound, isCall }) => {
      if (outbound) clientLog.error({ action: method, error: error.message, isCall }, `our own message failed the ${schema} schema; not sent`);
      else warn({ action: method, error: error.message }, `station message failed the ${schema} schema`);
    });
    client.once('close', ({ code, reason }) => {
      if (connections.detach(client)) markOnline(stationId, false, clientLog);
      warn.flush();
      clientLog.info({ code, reason }, 'station disconnected');
    });
    clientLog.info({ remoteAddress: client.handshake.remoteAddress, protocol: client.protocol, admission, securityProfile: config().ocpp.securityProfile }, 'station connected');
  });
  rpc.on('error', (err) => log.error({ err }, 'OCPP WebSocket server error'));

  const { server, certificate } = createListener(config(), options.stationCa);
  server.on('request', (_request, response) => {
    response.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' });
    response.end(JSON.stringify({ error: 'upgrade_required', message: `connect a WebSocket with subprotocol ocpp2.0.1 or ocpp1.6 to ${ocpp.path}/<stationId>` }));
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
  // Without a handler an 'error' after listen (an accept failure) would end the process; recorded, it shows on GET /health.
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
        log.info({ stationId: client.session.stationId, was: client.session.admission, now: admission.verdict }, 'station access changed: closing its connection');
        void client.close({ code: 1008, reason: 'station access changed' });
      } catch (err) {
        log.error({ err, stationId: client.session.stationId }, 'could not re-check station access; will retry on the next change');
      }
    }
  };
  const stopWatching = watchChangeCounter(options.db, STATIONS_TOPIC, recheckAccess, ocpp.changePollMs);

  return {
    port,
    commands: createStationCommands(connections),
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

/**
 * Profiles 0 and 1 listen in plain HTTP; 2 and 3 in TLS 1.2+ with ocpp.tls. Profile 3 asks every station for a
 * client certificate of the station CA; an upgrade without a good one is refused with its reason, not at the
 * handshake, so the log says why.
 */
function createListener(config: Config, stationCa: StationCa | undefined): { server: http.Server; certificate?: ServedCertificate } {
  const { securityProfile, tls } = config.ocpp;
  if (securityProfile < 2) return { server: http.createServer() };
  if (!tls) throw new Error(`ocpp.tls: required when securityProfile is ${securityProfile}`);
  const cert = readConfiguredFile(tls.cert, 'ocpp.tls.cert');
  const clientCertificates = securityProfile === 3 && { requestCert: true, rejectUnauthorized: false, ca: stationCa?.certificate ?? missingStationCa() };
  const server = https.createServer({ cert, key: readConfiguredFile(tls.key, 'ocpp.tls.key'), minVersion: 'TLSv1.2', ...clientCertificates });
  return { server, certificate: { listener: 'ocpp', file: tls.cert, pem: cert } };
}

function missingStationCa(): never {
  throw new Error('security profile 3 needs the station CA');
}

function clientCertificateOf(request: IncomingMessage): ClientCertificate {
  const socket = request.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function') return { authorized: false, commonName: undefined, error: 'not a TLS connection' };
  const subject = socket.getPeerCertificate().subject as Record<string, string | string[]> | undefined;
  const commonName = subject?.CN;
  return {
    authorized: socket.authorized,
    commonName: Array.isArray(commonName) ? commonName[0] : commonName,
    ...(!socket.authorized && { error: String(socket.authorizationError ?? 'no certificate') }),
  };
}

import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { AccessTokenVerifier, Applications } from '../applications/index.js';
import { createAuthorizer, PluginLoadError } from '../authorization/index.js';
import { ConfigError, listenFailure, readConfiguredFile, type Config } from '../config/index.js';
import { logKeptReadings, signedReadingsHealth } from './signed-readings-report.js';
import { certificatesHealthSource, type HealthSource, type ServedCertificate } from '../health/index.js';
import {
  authorizationServerMetadataRoutes,
  BearerAuth,
  bearerPrincipal,
  chargePointsApiRoutes,
  circuitLimitApiRoutes,
  circuitsApiRoutes,
  createHttpServer,
  historyApiRoutes,
  jwksRoutes,
  openApiRoutes,
  registerFirmwareFiles,
  registerFirmwareRoutes,
  registerStationRoutes,
  statusGuard,
  tokenEndpointRoutes,
  type StatusGuard,
} from '../http/index.js';
import { STATION_CERTIFICATE_DAYS, type Keystore } from '../keystore/index.js';
import {
  hasCircuits,
  LoadManager,
  registerLoadMetrics,
  TemporaryLimits,
  type ConnectorComposite,
  type CsmsSchedules,
  type LoadClock,
  type LoadStatus,
  type Window,
} from '../load/index.js';
import { lineWriter, type Logger } from '../log/index.js';
import { MeterService } from '../modbus/index.js';
import { connectUpstreamAsStation, startCentralSystem, type CentralSystem } from '../ocpp/index.js';
import { pruneDelivered } from '../outbox/index.js';
import { LAST_SEEN_WRITE_MS, pruneStoppedTransactions, Site, type EventListener } from '../site/index.js';
import type { FirmwareRollouts } from '../firmware/index.js';
import { logRoutes, type LogRoutesDeps } from '../http/index.js';
import { StationOperations } from '../stations/index.js';
import { statusPageRoutes } from '../status-page/index.js';
import {
  convertStorageLayout,
  GroupCommit,
  lockDataDir,
  openDatabase,
  schedulePruning,
  type Database,
  type DataDirLock,
} from '../store/index.js';
import { Uplink, type LinkClock } from '../uplink/index.js';
import { WebhookDelivery } from '../webhooks/index.js';
import { packageVersion } from './package-version.js';

/** A running part of the daemon: stopped in reverse start order, told about config reloads. */
export interface DaemonPart {
  name: string;
  stop(): Promise<void> | void;
  reload?(config: Config): void | Promise<void>;
}

/** What the parts share: where they log, count and report, and the HTTP routes they add to the one listener. */
export interface DaemonShared {
  logger: Logger;
  metrics: Registry;
  routes: FastifyPluginAsync[];
  health: HealthSource[];
}

/** How long the daemon's connection waits for a write lock held by another process. */
const WRITE_LOCK_WAIT_MS = 200;

export interface Storage {
  parts: DaemonPart[];
  lock: DataDirLock;
  db: Database;
  group: GroupCommit;
}

/** Why the one-time layout conversion may wait for another start, by SQLite error code. */
const LAYOUT_NOT_CONVERTED: Record<string, string> = {
  SQLITE_BUSY: 'another process has the database open',
  SQLITE_FULL: 'no room on the disk for the one-time rewrite (it needs about the database size free)',
};

/** The data dir, held by this process alone, and its database with the one writer every part writes through. */
export function openStorage(dataDir: string, shared: DaemonShared): Storage {
  const { logger } = shared;
  // Before anything opens or listens: a second daemon on one data directory would bill every Modbus session twice.
  const lock = lockDataDir(dataDir);
  const parts: DaemonPart[] = [{ name: 'data-dir-lock', stop: () => lock.release() }];
  let db: Database | undefined;
  try {
    // Another process holding the write lock (a CLI command, a backup) costs a station call an InternalError it
    // retries, not every station a stalled event loop: the busy wait blocks the thread.
    db = openDatabase(dataDir, {
      busyTimeoutMs: WRITE_LOCK_WAIT_MS,
      migrated: (applied) =>
        logger.info({ dataDir, migrations: applied.map((m) => `${m.version}: ${m.name}`) }, 'database schema migrated'),
    });
    try {
      const converted = convertStorageLayout(db);
      if (converted)
        logger.info(
          { dataDir, ...converted },
          'database converted to the current layout (once): smaller pages, pruned rows give their space back',
        );
    } catch (err) {
      // The old layout works, and VACUUM leaves it whole when it fails: the next start converts. Another process (a
      // CLI command, a backup) may have the file open, or the disk may lack room for the rewrite's journal.
      // Only back in WAL mode, though: the delivery thread's reads would block the stations' commits otherwise.
      const reason = LAYOUT_NOT_CONVERTED[(err as { code?: string }).code ?? ''];
      if (!reason || db.pragma('journal_mode', { simple: true }) !== 'wal') throw err;
      logger.warn({ dataDir }, `database layout not converted: ${reason}; the next start tries again`);
    }
    // One writer, one fsync per event-loop turn: the Site's changes and the delivery thread's records share it.
    // Stopped last, the database part commits whatever the other parts wrote on their way out.
    const group = new GroupCommit(db);
    const opened = db;
    parts.push({ name: 'database', stop: () => void (group.flushHeld(), group.commitNow(), opened.close()) });
    // A failed commit makes the daemon critical at once (docs/operating/guarantees-and-faults.md#guarantees-and-faults) until a commit succeeds again.
    shared.health.push({
      name: 'storage',
      report: () =>
        group.lastFailure
          ? { status: 'critical', lastFailureAt: group.lastFailure.at.toISOString(), error: group.lastFailure.error }
          : { status: 'ok' },
    });
    return { parts, lock, db, group };
  } catch (err) {
    db?.close();
    lock.release();
    throw err;
  }
}

/** Webhook delivery from the durable outbox on its own thread; the Site wakes it after each commit. */
export function startWebhookDelivery(
  options: { dataDir: string; storage: Storage; config: () => Config; keystore: Keystore },
  shared: DaemonShared,
): { part: DaemonPart; webhooks: WebhookDelivery } {
  const { storage, keystore } = options;
  const webhooks = new WebhookDelivery({
    dataDir: options.dataDir,
    db: storage.db,
    group: storage.group,
    config: options.config,
    logger: shared.logger.child({ component: 'webhooks' }),
    writeLogLine: lineWriter(shared.logger),
    signingKeys: () => keystore.webhookSigningKeys(),
    metrics: shared.metrics,
  });
  webhooks.start();
  shared.health.push(webhooks.healthSource());
  return { part: { name: 'webhooks', stop: () => webhooks.stop(), reload: () => webhooks.reload() }, webhooks };
}

/** How long rows are kept: delivered events, stopped transactions (read at each pass, so a reload applies). */
export interface RetentionDays {
  deliveredEvents: number;
  stoppedTransactions: number;
}

export function startRetention(group: GroupCommit, retention: () => RetentionDays, shared: DaemonShared): DaemonPart {
  const daysAgo = (days: number): Date => new Date(Date.now() - days * 86_400_000);
  const stop = schedulePruning({
    writer: group,
    prune: () => ({
      ...pruneDelivered(group, daysAgo(retention().deliveredEvents)),
      stoppedTransactions: pruneStoppedTransactions(group, daysAgo(retention().stoppedTransactions)),
    }),
    logger: shared.logger.child({ component: 'store' }),
  });
  return { name: 'retention', stop };
}

/** The domain on the shared writer; station last-seen times reach the database in one rare batch. */
export function startSite(
  options: { storage: Storage; config: () => Config; webhooks: WebhookDelivery },
  shared: DaemonShared,
): {
  part: DaemonPart;
  site: Site;
} {
  const { storage, webhooks } = options;
  const events: EventListener = {
    appended: (appended) => webhooks.expect(appended),
    committed: () => webhooks.notify(),
    countsFirstAttempt: (queue) => webhooks.countsFirstAttempt(queue),
  };
  const site = new Site({ db: storage.db, config: options.config, events, writer: storage.group });
  site.stations.markAllOffline();
  const signedLog = shared.logger.child({ component: 'signed-meter-values' });
  site.signedReadings.onKept((kept) => logKeptReadings(signedLog, kept));
  shared.health.push(signedReadingsHealth(site));
  const flush = setInterval(() => site.stations.flushLastSeen(), LAST_SEEN_WRITE_MS);
  return { part: { name: 'last-seen', stop: () => (clearInterval(flush), site.stations.flushLastSeen()) }, site };
}

/**
 * The uplink to the operator's CSMS (docs/design/uplink.md#uplink-what-the-csms-sees), made before the central system (its handlers forward
 * to it, the decision chain asks through it) and started once that listens; undefined without upstream.csms.
 */
export function createUplink(
  options: { config: () => Config; storage: Storage; site: Site; keystore: Keystore; linkClock?: LinkClock },
  shared: DaemonShared,
): Uplink | undefined {
  if (!options.config().upstream?.csms) return undefined;
  const { keystore } = options;
  const uplink = new Uplink({
    config: options.config,
    writer: options.storage.group,
    site: options.site,
    upstreamPassword: (stationId) => keystore.upstreamPassword(stationId),
    logger: shared.logger,
    metrics: shared.metrics,
    linkClock: options.linkClock,
  });
  shared.health.push(uplink.health());
  return uplink;
}

/** The OCPP central system (2.0.1 and 1.6) and the Authorize decision chain it asks. */
export async function startOcpp(
  options: {
    configPath: string;
    config: () => Config;
    storage: Storage;
    site: Site;
    keystore: Keystore;
    uplink: Uplink | undefined;
  },
  shared: DaemonShared,
): Promise<{ parts: DaemonPart[]; centralSystem: CentralSystem }> {
  const { config, storage, site, configPath, keystore, uplink } = options;
  // Made at the first start under profile 3 (the listener trusts only it); otherwise on a station's first
  // SignCertificate.
  const stationCa = {
    ...(config().ocpp.securityProfile === 3 && { certificate: await keystore.ensureStationCa() }),
    issue: (csr: string, stationId: string) =>
      keystore.issueStationCertificate(csr, stationId, STATION_CERTIFICATE_DAYS),
  };
  const authorizer = await createAuthorizer({
    writer: storage.group,
    config,
    site,
    logger: shared.logger.child({ component: 'authorization' }),
    connectUpstream: uplink?.connectUpstream ?? connectUpstreamAsStation,
  }).catch((err: unknown) => {
    throw err instanceof PluginLoadError ? new ConfigError(configPath, [err.message], { cause: err }) : err;
  });
  const parts: DaemonPart[] = [
    { name: 'authorization', stop: () => authorizer.close(), reload: (next) => authorizer.reload(next) },
  ];
  try {
    const centralSystem = await startCentralSystem({
      config,
      db: storage.db,
      site,
      authorizer,
      logger: shared.logger,
      metrics: shared.metrics,
      stationCa,
      ...(uplink && { forwarder: uplink }),
    });
    parts.push({ name: 'ocpp', stop: () => centralSystem.close(), reload: (next) => centralSystem.reload(next) });
    if (uplink) {
      uplink.start(centralSystem);
      // Stopped after the central system: the stations' last calls are queued, then the links close and the answered
      // rows are written.
      parts.splice(parts.length - 1, 0, { name: 'uplink', stop: () => uplink.stop(), reload: () => uplink.reload() });
    }
    shared.health.push(centralSystem.health);
    return { parts, centralSystem };
  } catch (err) {
    await authorizer.close();
    throw err;
  }
}

/** Modbus buses and meters: polling and session detection through the Site. */
export async function startMeters(
  options: { config: Config; site: Site; storage: Storage },
  shared: DaemonShared,
): Promise<{ part: DaemonPart; meters: MeterService }> {
  const meters = await MeterService.start({
    config: options.config,
    site: options.site,
    writer: options.storage.group,
    logger: shared.logger,
    metrics: shared.metrics,
  });
  shared.health.push(meters.healthSource());
  return { part: { name: 'meters', stop: () => meters.stop(), reload: (next) => meters.reload(next) }, meters };
}

/**
 * Load management (docs/configuration/circuits.md#circuits-load-management), running only while a site has circuits (a reload may add or
 * remove them): the controller's shell on the circuit meters, the open transactions, the stations' boots and the
 * temporary limits, limiting through charging profiles. The temporary limits are kept whether or not a site has
 * circuits now (the API answers for them), and re-read when the CLI changed them.
 */
export function startLoadManagement(
  options: {
    config: Config;
    site: Site;
    meters: MeterService;
    centralSystem: CentralSystem;
    storage: Storage;
    /** The CSMS's charging profiles, with the uplink: composed with the limits (docs/design/uplink.md#uplink-what-the-csms-sees). */
    csmsSchedules?: CsmsSchedules | undefined;
    clock?: LoadClock;
  },
  shared: DaemonShared,
): {
  part: DaemonPart;
  status: () => LoadStatus | undefined;
  composites: (stationId: string, window: Window) => ConnectorComposite[];
  temporaryLimits: TemporaryLimits;
} {
  const { site, meters, centralSystem } = options;
  const logger = shared.logger.child({ component: 'load' });
  const { clock } = options;
  // On the load clock when one is given: the API then shows a limit's end when load management acts on it.
  const temporaryLimits = new TemporaryLimits({
    writer: options.storage.group,
    ...(clock && { now: () => new Date(clock.wallMs()) }),
  });
  const stopWatching = temporaryLimits.watch(options.config.ocpp.changePollMs, logger);
  let running: { load: LoadManager; health: HealthSource; stopHearing: Array<() => void> } | undefined;
  const stop = (): void => {
    if (!running) return;
    for (const stopHearing of running.stopHearing) stopHearing();
    running.load.stop();
    shared.health.splice(shared.health.indexOf(running.health), 1);
    running = undefined;
  };
  const apply = (config: Config): void => {
    if (!hasCircuits(config)) return stop();
    if (running) return running.load.reload(config);
    const load = new LoadManager({
      config,
      limits: centralSystem.chargingLimits,
      meters,
      transactions: site.transactions,
      temporaryLimits,
      ...(options.csmsSchedules && { csmsSchedules: options.csmsSchedules }),
      ...(clock && { clock }),
      logger,
    });
    running = {
      load,
      health: load.health(),
      stopHearing: [
        centralSystem.onBooted((id) => load.booted(id)),
        centralSystem.onConnection(({ stationId, connected }) => load.connectionChanged(stationId, connected)),
      ],
    };
    for (const stationId of centralSystem.connectedStations()) load.connectionChanged(stationId, true);
    shared.health.push(running.health);
  };
  apply(options.config);
  // Undefined while no site has circuits.
  const status = (): LoadStatus | undefined => running?.load.status();
  const composites = (stationId: string, window: Window) => running?.load.composites(stationId, window) ?? [];
  registerLoadMetrics(shared.metrics, status);
  return {
    part: { name: 'load', stop: () => (stopWatching(), stop()), reload: apply },
    status,
    composites,
    temporaryLimits,
  };
}

/**
 * Operating the stations (contract 11.1): the API's and the CLI's operations, each on the station's call lane; a
 * 2.0.1 station's report parts kept as they arrive.
 */
export function startStationOperations(
  options: { config: () => Config; site: Site; centralSystem: CentralSystem; storage: Storage },
  shared: DaemonShared,
): { part: DaemonPart; stations: StationOperations } {
  const { config, site, centralSystem, storage } = options;
  const stations = new StationOperations({
    commands: centralSystem.commands,
    site,
    config,
    writer: storage.group,
    logger: shared.logger,
  });
  const stopHearing = centralSystem.onReport((stationId, part) => stations.reportReceived(stationId, part));
  return { part: { name: 'stations', stop: stopHearing }, stations };
}

/**
 * The HTTP surface partners and installers use: JWKS, the OAuth 2.0 token endpoint, the charge-points, history and
 * circuits API, OpenAPI, and the status page. Returns the guard that keeps status and metrics behind `status:read`.
 */
export function addHttpRoutes(
  options: {
    config: () => Config;
    storage: Storage;
    keystore: Keystore;
    site: Site;
    centralSystem: CentralSystem;
    temporaryLimits: TemporaryLimits;
    load: () => LoadStatus | undefined;
    stations: StationOperations;
    firmware: FirmwareRollouts;
    /** The station logs API (contract 11.3), beside the stations API. */
    logs: Omit<LogRoutesDeps, 'stations' | 'principal'>;
  },
  shared: DaemonShared,
): StatusGuard {
  const { config, storage, keystore, site, centralSystem, temporaryLimits, load, stations, firmware, logs } = options;
  const applications = new Applications({ db: storage.db });
  const bearer = new BearerAuth({
    verifier: new AccessTokenVerifier({ keystore, issuer: () => config().http.issuer }),
    applications,
    config,
  });
  const guard = statusGuard(config, bearer);
  shared.routes.push(
    jwksRoutes(keystore),
    tokenEndpointRoutes({ applications, keystore, config, metrics: shared.metrics }),
    authorizationServerMetadataRoutes(config),
    chargePointsApiRoutes({
      site,
      auth: bearer,
      remoteCharging: centralSystem.remoteCharging,
      config,
      metrics: shared.metrics,
    }),
    historyApiRoutes({ db: storage.db, auth: bearer, config }),
    circuitLimitApiRoutes({ auth: bearer, config, temporaryLimits }),
    circuitsApiRoutes({ auth: bearer, config, load }),
    (app) => registerStationRoutes(app, { stations, principal: bearerPrincipal(bearer, config) }),
    (app) =>
      registerFirmwareRoutes(app, {
        rollouts: firmware,
        stations: () => stations.list(),
        principal: bearerPrincipal(bearer, config),
      }),
    (app) =>
      registerFirmwareFiles(app, {
        dataDir: config().dataDir,
        download: (token, file) => firmware.download(token, file),
      }),
    logRoutes({ ...logs, stations, principal: bearerPrincipal(bearer, config) }),
    openApiRoutes(config),
    statusPageRoutes(
      {
        site,
        config,
        health: () => shared.health,
        load,
        startedAt: new Date(),
        version: packageVersion(),
        operationOf: (stationId) => stations.inProgress(stationId),
        longOperationOf: (stationId) => stations.longOperationOf(stationId),
      },
      guard,
    ),
  );
  return guard;
}

/** The one HTTP(S) listener at http.host:port, serving the routes the parts added. */
export async function startHttp(
  options: { http: Config['http']; guard: StatusGuard; ocppCertificate: ServedCertificate | undefined },
  shared: DaemonShared,
): Promise<{ part: DaemonPart; port: number }> {
  const { tls, host, port } = options.http;
  const https = tls && {
    cert: readConfiguredFile(tls.cert, 'http.tls.cert'),
    key: readConfiguredFile(tls.key, 'http.tls.key'),
  };
  const served = [
    options.ocppCertificate,
    tls && https && { listener: 'http', file: tls.cert, pem: https.cert },
  ].filter((c) => !!c);
  if (served.length > 0) shared.health.push(certificatesHealthSource(served));
  const server = await createHttpServer({
    logger: shared.logger,
    routes: shared.routes,
    health: () => shared.health,
    metrics: shared.metrics,
    statusGuard: options.guard,
    ...(https && { https }),
  });
  await server.listen({ host, port }).catch((err: unknown) => {
    throw listenFailure(err, 'http');
  });
  return {
    part: { name: 'http', stop: () => server.close() },
    port: (server.server.address() as { port: number }).port,
  };
}

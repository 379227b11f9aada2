import type { FastifyPluginAsync } from 'fastify';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { ConfigError, listenFailure, readConfiguredFile, type Config } from '../config/index.js';
import { AccessTokenVerifier, Applications } from '../applications/index.js';
import {
  authorizationServerMetadataRoutes,
  BearerAuth,
  chargePointsApiRoutes,
  historyApiRoutes,
  createHttpServer,
  jwksRoutes,
  openApiRoutes,
  statusGuard,
  tokenEndpointRoutes,
} from '../http/index.js';
import { certificatesHealthSource, type HealthSource } from '../health/index.js';
import { openKeystore } from '../keystore/index.js';
import { createLogger, lineWriter, type Logger } from '../log/index.js';
import { MeterService } from '../modbus/index.js';
import { connectServiceManager, installProcessSignals, reloadConfig } from '../service/index.js';
import { createAuthorizer, PluginLoadError } from '../authorization/index.js';
import { connectUpstreamAsStation, startCentralSystem } from '../ocpp/index.js';
import { LAST_SEEN_WRITE_MS, pruneStoppedTransactions, Site } from '../site/index.js';
import { statusPageRoutes } from '../status-page/index.js';
import { packageVersion } from './package-version.js';
import { GroupCommit, lockDataDir, openDatabase, schedulePruning, useIncrementalVacuum } from '../store/index.js';
import { WebhookDelivery } from '../webhooks/index.js';
import { pruneDelivered } from '../outbox/index.js';

/** A running part of the daemon: stopped in reverse start order, told about config reloads. */
export interface DaemonPart {
  name: string;
  stop(): Promise<void> | void;
  reload?(config: Config): void | Promise<void>;
}

export interface DaemonOptions {
  configPath: string;
  config: Config;
  logger?: Logger;
  /**
   * Whether the daemon owns its process: signal handlers, crash logging and systemd notifications (NOTIFY_SOCKET).
   * Tests run several daemons in one process and pass false.
   */
  handleSignals?: boolean;
}

export interface Daemon {
  readonly httpPort: number;
  readonly ocppPort: number;
  /** Re-reads the config file; resolves false (old config kept, error logged) when the new one is refused. */
  reload(): Promise<boolean>;
  stop(): Promise<void>;
}

/** Bound on a graceful stop, below the unit's TimeoutStopSec=30 (systemd/chargegate.service). */
const STOP_DEADLINE_MS = 25_000;

/** How long the daemon's connection waits for a write lock held by another process. */
const WRITE_LOCK_WAIT_MS = 200;

/**
 * The composition root: builds every part from the config and hands each only what it needs.
 * A part that fails to start stops the ones already started, so a bad config never leaves a half-started daemon.
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const startedAt = performance.now();
  let config = options.config;
  const logger = options.logger ?? createLogger(config.log.level);
  const parts: DaemonPart[] = [];
  const routes: FastifyPluginAsync[] = [];
  const healthSources: HealthSource[] = [];
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });

  const stopParts = async (): Promise<void> => {
    for (const part of [...parts].reverse()) {
      try {
        await part.stop();
      } catch (err) {
        logger.error({ err, part: part.name }, 'part failed to stop cleanly');
      }
    }
    parts.length = 0;
  };

  try {
    // Before anything opens or listens: a second daemon on one data directory would bill every Modbus session twice.
    const lock = lockDataDir(config.dataDir);
    parts.push({ name: 'data-dir-lock', stop: () => lock.release() });
    // Another process holding the write lock (a CLI command, a backup) costs a station call an InternalError it
    // retries, not every station a stalled event loop: the busy wait blocks the thread.
    const db = openDatabase(config.dataDir, {
      busyTimeoutMs: WRITE_LOCK_WAIT_MS,
      migrated: (applied) => logger.info({ dataDir: config.dataDir, migrations: applied.map((m) => `${m.version}: ${m.name}`) }, 'database schema migrated'),
    });
    if (useIncrementalVacuum(db)) logger.info({ dataDir: config.dataDir }, 'database converted to incremental vacuum (once): pruned rows now give their space back');
    // One writer, one fsync per event-loop turn: the Site's changes and the delivery thread's records share it.
    // Stopped last, the database part commits whatever the other parts wrote on their way out.
    const group = new GroupCommit(db);
    parts.push({ name: 'database', stop: () => void (group.commitNow(), db.close()) });
    // A failed commit makes the daemon critical at once (contract section 7) until a commit succeeds again.
    healthSources.push({
      name: 'storage',
      report: () => (group.lastFailure ? { status: 'critical', lastFailureAt: group.lastFailure.at.toISOString(), error: group.lastFailure.error } : { status: 'ok' }),
    });

    // keystore: webhook `sign` key, access-token keys, JWKS; re-read per use so `keys rotate` needs no restart.
    const keystore = await openKeystore(config, { logger: logger.child({ component: 'keystore' }) });
    routes.push(jwksRoutes(keystore));

    // ---- webhook delivery from the durable outbox (src/webhooks); the Site wakes it after each commit ----
    const webhooks = new WebhookDelivery({
      dataDir: config.dataDir,
      db,
      group,
      config: () => config,
      logger: logger.child({ component: 'webhooks' }),
      writeLogLine: lineWriter(logger),
      signingKey: () => keystore.webhookSigningKey(),
      metrics,
    });
    webhooks.start();
    parts.push({ name: 'webhooks', stop: () => webhooks.stop(), reload: () => webhooks.reload() });
    healthSources.push(webhooks.healthSource());
    // ---- end webhooks ----

    // ---- retention: delivered events after webhookDelivery.retainDeliveredDays, stopped transactions after store.retainStoppedTransactionsDays ----
    const daysAgo = (days: number): Date => new Date(Date.now() - days * 86_400_000);
    const stopPruning = schedulePruning({
      writer: group,
      prune: () => ({
        ...pruneDelivered(group, daysAgo(config.webhookDelivery.retainDeliveredDays)),
        stoppedTransactions: pruneStoppedTransactions(group, daysAgo(config.store.retainStoppedTransactionsDays)),
      }),
      logger: logger.child({ component: 'store' }),
    });
    parts.push({ name: 'retention', stop: stopPruning });
    // ---- end retention ----

    const site = new Site({ db, config: () => config, onEventsCommitted: () => webhooks.notify(), writer: group });
    site.stations.markAllOffline();
    const lastSeenFlush = setInterval(() => site.stations.flushLastSeen(), LAST_SEEN_WRITE_MS);
    parts.push({ name: 'last-seen', stop: () => (clearInterval(lastSeenFlush), site.stations.flushLastSeen()) });

    // ---- OCPP 1.6-J central system and the Authorize decision chain (src/ocpp, src/authorization) ----
    // `centralSystem.commands` (StationCommands) is what HTTP routes use to send RemoteStart/RemoteStop etc.
    const authorizer = await createAuthorizer({
      writer: group,
      config: () => config,
      site,
      logger: logger.child({ component: 'authorization' }),
      connectUpstream: connectUpstreamAsStation,
    }).catch((err: unknown) => {
      throw err instanceof PluginLoadError ? new ConfigError(options.configPath, [err.message]) : err;
    });
    parts.push({ name: 'authorization', stop: () => authorizer.close(), reload: (next) => authorizer.reload(next) });
    const centralSystem = await startCentralSystem({ config: () => config, db, site, authorizer, logger, metrics });
    parts.push({ name: 'ocpp', stop: () => centralSystem.close(), reload: (next) => centralSystem.reload(next) });
    healthSources.push(centralSystem.health);
    // ---- end OCPP ----

    // ---- Modbus meters: buses, polling, session detection through the Site (src/modbus) ----
    const meters = await MeterService.start({ config, site, writer: group, logger, metrics });
    parts.push({ name: 'meters', stop: () => meters.stop(), reload: (next) => meters.reload(next) });
    healthSources.push(meters.healthSource());
    // ---- end Modbus meters ----

    // ---- OAuth 2.0 token server, applications and the charge-points API (src/applications, src/http) ----
    const applications = new Applications({ db });
    const bearer = new BearerAuth({ verifier: new AccessTokenVerifier({ keystore, issuer: () => config.http.issuer }), applications, config: () => config });
    routes.push(
      tokenEndpointRoutes({ applications, keystore, config: () => config, metrics }),
      authorizationServerMetadataRoutes(() => config),
      chargePointsApiRoutes({ site, auth: bearer, commands: centralSystem.commands, config: () => config, metrics }),
      historyApiRoutes({ db, auth: bearer, config: () => config }),
      openApiRoutes(() => config),
    );
    // ---- end API ----

    // ---- status page at GET / and GET /status.json (src/status-page) ----
    const guard = statusGuard(() => config, bearer);
    routes.push(statusPageRoutes({ site, config: () => config, health: () => healthSources, startedAt: new Date(), version: packageVersion() }, guard));
    // ---- end status page ----

    await webhooks.ready();
    const { tls } = config.http;
    const https = tls && { cert: readConfiguredFile(tls.cert, 'http.tls.cert'), key: readConfiguredFile(tls.key, 'http.tls.key') };
    const served = [centralSystem.certificate, tls && https && { listener: 'http', file: tls.cert, pem: https.cert }].filter((c) => !!c);
    if (served.length > 0) healthSources.push(certificatesHealthSource(served));
    const http = await createHttpServer({ logger, routes, health: () => healthSources, metrics, statusGuard: guard, ...(https && { https }) });
    await http.listen({ host: config.http.host, port: config.http.port }).catch((err: unknown) => {
      throw listenFailure(err, 'http');
    });
    parts.push({ name: 'http', stop: () => http.close() });
    const httpPort = (http.server.address() as { port: number }).port;
    // `meter status` and other CLI commands find the running daemon here, also when the config says port 0.
    lock.announce({ httpPort, ocppPort: centralSystem.port });

    logger.info(
      { config: options.configPath, httpPort, ocppPort: centralSystem.port, readyMs: Math.round(performance.now() - startedAt), node: process.versions.node },
      'chargegate ready',
    );

    // ---- service lifecycle: systemd readiness + watchdog, reload, graceful stop (src/service) ----
    const ownsProcess = options.handleSignals !== false;
    const service = connectServiceManager({ env: ownsProcess ? process.env : {}, logger, alive: () => db.open && db.prepare('SELECT 1').pluck().get() === 1 });
    const serving = `serving: http ${httpPort}, ocpp ${centralSystem.port}`;
    void service.ready(serving);

    // One reload at a time: a second SIGHUP waits for the first, then reads the file again.
    let reloading: Promise<boolean> = Promise.resolve(true);
    let stopping: Promise<void> | undefined;
    const daemon: Daemon = {
      httpPort,
      ocppPort: centralSystem.port,
      reload() {
        reloading = reloading.then(async () => {
          // A SIGHUP that arrives while stopping would hand the new config to parts already stopped.
          if (stopping) return false;
          await service.reloading();
          const applied = await reloadConfig({ configPath: options.configPath, running: config, parts, logger, adopt: (next) => (config = next) });
          await service.reloaded(serving);
          return applied;
        });
        return reloading;
      },
      stop() {
        stopping ??= service
          .stopping()
          .then(stopParts)
          .then(() => logger.info('chargegate stopped'));
        return stopping;
      },
    };
    if (ownsProcess) installProcessSignals(daemon, logger, { stopDeadlineMs: STOP_DEADLINE_MS });
    // ---- end service lifecycle ----
    return daemon;
  } catch (err) {
    await stopParts();
    throw err;
  }
}

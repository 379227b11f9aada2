import type { FastifyPluginAsync } from 'fastify';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../config/index.js';
import type { HealthSource } from '../health/index.js';
import type { ChargingLimits, LoadClock } from '../load/index.js';
import { openKeystore } from '../keystore/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { connectServiceManager, installProcessSignals, reloadConfig } from '../service/index.js';
import type { LinkClock } from '../uplink/index.js';
import {
  addHttpRoutes,
  createUplink,
  openStorage,
  startHttp,
  startLoadManagement,
  startStationOperations,
  startMeters,
  startOcpp,
  startRetention,
  startSite,
  startWebhookDelivery,
  type DaemonPart,
  type DaemonShared,
} from './daemon-parts.js';
import { startFirmwareRollouts } from './daemon-firmware.js';
import { startLocalChannel } from './local-channel.js';
import { startStationLogs } from './station-logs-part.js';

export type { DaemonPart } from './daemon-parts.js';

export interface DaemonOptions {
  configPath: string;
  config: Config;
  logger?: Logger;
  /**
   * Whether the daemon owns its process: signal handlers, crash logging and systemd notifications (NOTIFY_SOCKET).
   * Tests run several daemons in one process and pass false.
   */
  handleSignals?: boolean;
  /** Load management's clock: the system's unless a test moves time itself instead of waiting for it. */
  loadClock?: LoadClock;
  /**
   * The uplink links' timers: a test's own clock, so a test of what happens after a back-off or retry wait need not
   * sleep through it; the real one if unset.
   */
  linkClock?: LinkClock;
}

export interface Daemon {
  readonly httpPort: number;
  readonly ocppPort: number;
  /** Charging profiles on the stations: the port the load controller's shell drives. */
  readonly chargingLimits: ChargingLimits;
  /** Re-reads the config file; resolves false (old config kept, error logged) when the new one is refused. */
  reload(): Promise<boolean>;
  stop(): Promise<void>;
}

/** Bound on a graceful stop, below the unit's TimeoutStopSec=30 (systemd/chargegate.service). */
const STOP_DEADLINE_MS = 25_000;

/**
 * The composition root: builds every part from the config and hands each only what it needs.
 * A part that fails to start stops the ones already started, so a bad config never leaves a half-started daemon.
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const startedAt = performance.now();
  let config = options.config;
  const logger = options.logger ?? createLogger(config.log.level);
  const parts: DaemonPart[] = [];
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const shared: DaemonShared = { logger, metrics, routes: [] as FastifyPluginAsync[], health: [] as HealthSource[] };

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
    const storage = openStorage(config.dataDir, shared);
    parts.push(...storage.parts);
    // The keystore is re-read per use, so `keys rotate` needs no restart.
    const keystore = await openKeystore(config, { logger: logger.child({ component: 'keystore' }) });
    const { part: webhooksPart, webhooks } = startWebhookDelivery(
      { dataDir: config.dataDir, storage, config: () => config, keystore },
      shared,
    );
    parts.push(webhooksPart);
    parts.push(
      startRetention(
        storage.group,
        () => ({
          deliveredEvents: config.webhookDelivery.retainDeliveredDays,
          stoppedTransactions: config.store.retainStoppedTransactionsDays,
        }),
        shared,
      ),
    );
    const { part: sitePart, site } = startSite({ storage, config: () => config, webhooks }, shared);
    parts.push(sitePart);
    const uplink = createUplink(
      { config: () => config, storage, site, keystore, linkClock: options.linkClock },
      shared,
    );
    const ocpp = await startOcpp(
      { configPath: options.configPath, config: () => config, storage, site, keystore, uplink },
      shared,
    );
    parts.push(...ocpp.parts);
    const meters = await startMeters({ config, site, storage }, shared);
    parts.push(meters.part);
    const load = startLoadManagement(
      {
        config,
        site,
        meters: meters.meters,
        centralSystem: ocpp.centralSystem,
        storage,
        csmsSchedules: uplink?.csmsSchedules,
        ...(options.loadClock && { clock: options.loadClock }),
      },
      shared,
    );
    uplink?.composeWith(load.composites);
    parts.push(load.part);
    const stations = startStationOperations(
      { config: () => config, site, centralSystem: ocpp.centralSystem, storage },
      shared,
    );
    parts.push(stations.part);
    const firmware = startFirmwareRollouts(
      { config: () => config, site, centralSystem: ocpp.centralSystem, storage, stations: stations.stations },
      shared,
    );
    parts.push(firmware.part);
    const stationLogs = await startStationLogs(
      { config: () => config, storage, centralSystem: ocpp.centralSystem, stations: stations.stations },
      shared,
    );
    parts.push(stationLogs.part);
    const guard = addHttpRoutes(
      {
        config: () => config,
        storage,
        keystore,
        site,
        centralSystem: ocpp.centralSystem,
        temporaryLimits: load.temporaryLimits,
        load: load.status,
        stations: stations.stations,
        firmware: firmware.rollouts,
        logs: stationLogs,
      },
      shared,
    );
    await webhooks.ready();
    const http = await startHttp({ http: config.http, guard, ocppCertificate: ocpp.centralSystem.certificate }, shared);
    parts.push(http.part);
    parts.push(
      await startLocalChannel(
        {
          configPath: options.configPath,
          dataDir: config.dataDir,
          stations: stations.stations,
          firmware: firmware.rollouts,
          logs: stationLogs,
        },
        shared,
      ),
    );
    const httpPort = http.port;
    const ocppPort = ocpp.centralSystem.port;
    // `meter status` and other CLI commands find the running daemon here, also when the config says port 0.
    storage.lock.announce({ httpPort, ocppPort });

    logger.info(
      {
        config: options.configPath,
        httpPort,
        ocppPort,
        readyMs: Math.round(performance.now() - startedAt),
        node: process.versions.node,
      },
      'chargegate ready',
    );

    // ---- service lifecycle: systemd readiness + watchdog, reload, graceful stop (src/service) ----
    const ownsProcess = options.handleSignals !== false;
    const service = connectServiceManager({
      env: ownsProcess ? process.env : {},
      logger,
      alive: () => storage.db.open && storage.db.prepare('SELECT 1').pluck().get() === 1,
    });
    const serving = `serving: http ${httpPort}, ocpp ${ocppPort}`;
    void service.ready(serving);

    // One reload at a time: a second SIGHUP waits for the first, then reads the file again.
    let reloading: Promise<boolean> = Promise.resolve(true);
    let stopping: Promise<void> | undefined;
    const daemon: Daemon = {
      httpPort,
      ocppPort,
      chargingLimits: ocpp.centralSystem.chargingLimits,
      reload() {
        reloading = reloading.then(async () => {
          // A SIGHUP that arrives while stopping would hand the new config to parts already stopped.
          if (stopping) return false;
          await service.reloading();
          const applied = await reloadConfig({
            configPath: options.configPath,
            running: config,
            parts,
            logger,
            adopt: (next) => (config = next),
          });
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

import type { FastifyPluginAsync } from 'fastify';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { createHttpServer, type HealthSource } from '../http/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { Site } from '../site/index.js';
import { openDatabase } from '../store/index.js';

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
  /** Tests run several daemons in one process: they skip the process signal handlers. */
  handleSignals?: boolean;
}

export interface Daemon {
  readonly httpPort: number;
  readonly ocppPort: number;
  reload(): Promise<void>;
  stop(): Promise<void>;
}

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
    const db = openDatabase(config.dataDir);
    parts.push({ name: 'database', stop: () => void db.close() });

    const site = new Site({ db, config: () => config });
    site.markAllOffline();
    const lastSeenFlush = setInterval(() => site.flushLastSeen(), 15_000);
    parts.push({ name: 'last-seen', stop: () => (clearInterval(lastSeenFlush), site.flushLastSeen()) });

    const http = await createHttpServer({ logger, routes, health: () => healthSources, metrics });
    await http.listen({ host: config.http.host, port: config.http.port });
    parts.push({ name: 'http', stop: () => http.close() });
    const httpPort = (http.server.address() as { port: number }).port;

    logger.info({ config: options.configPath, httpPort, readyMs: Math.round(performance.now() - startedAt) }, 'chargegate ready');

    let stopping: Promise<void> | undefined;
    const daemon: Daemon = {
      httpPort,
      ocppPort: 0,
      async reload() {
        let next: Config;
        try {
          next = loadConfig(options.configPath);
        } catch (err) {
          logger.error({ err: err instanceof ConfigError ? err.message : err }, 'config reload refused; the running config stays');
          return;
        }
        config = next;
        for (const part of parts) await part.reload?.(next);
        logger.info({ config: options.configPath }, 'config reloaded');
      },
      stop() {
        stopping ??= stopParts().then(() => logger.info('chargegate stopped'));
        return stopping;
      },
    };
    if (options.handleSignals !== false) installSignalHandlers(daemon, logger);
    return daemon;
  } catch (err) {
    await stopParts();
    throw err;
  }
}

function installSignalHandlers(daemon: Daemon, logger: Logger): void {
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping');
    void daemon.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => void daemon.reload());
}

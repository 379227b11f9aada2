import type { Logger } from '../log/index.js';
import type { ServiceNotifier } from './service-notifier.js';

export interface WatchdogOptions {
  env: NodeJS.ProcessEnv;
  notifier: ServiceNotifier;
  logger: Logger;
  /** Checked before every ping: a daemon whose database stopped answering should be restarted, not kept alive. */
  alive: () => boolean;
}

/**
 * The interval systemd expects WATCHDOG=1 at, from WATCHDOG_USEC (set when the unit has WatchdogSec=), or undefined
 * when no watchdog applies to this process.
 */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv, pid = process.pid): number | undefined {
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return undefined;
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== pid) return undefined;
  return usec / 1000;
}

/**
 * Pings the service manager at half its watchdog interval, as sd_watchdog_enabled(3) advises. The ping rides the
 * event loop, so a blocked loop or a failed liveness check both end in a restart by systemd. Returns a stop function.
 */
export function startWatchdog(options: WatchdogOptions): () => void {
  const intervalMs = watchdogIntervalMs(options.env);
  if (intervalMs === undefined || !options.notifier.enabled) return () => {};
  const log = options.logger.child({ component: 'systemd' });
  const ping = (): void => {
    let alive: boolean;
    try {
      alive = options.alive();
    } catch (err) {
      log.error({ err }, 'liveness check threw');
      alive = false;
    }
    if (alive) void options.notifier.watchdog();
    else log.error('liveness check failed: withholding the watchdog ping so systemd restarts the daemon');
  };
  ping();
  const timer = setInterval(ping, Math.max(1, Math.floor(intervalMs / 2)));
  timer.unref();
  log.info({ intervalMs }, 'watchdog pings started');
  return () => clearInterval(timer);
}

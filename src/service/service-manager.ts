import type { Logger } from '../log/index.js';
import { createServiceNotifier } from './service-notifier.js';
import { startWatchdog } from './watchdog.js';

/** The daemon's side of Type=notify: what it tells systemd at each step of its life. */
export interface ServiceManager {
  /** Start-up done: READY=1, then watchdog pings for as long as `alive()` holds. */
  ready(status: string): Promise<void>;
  reloading(): Promise<void>;
  /** Reload done (applied or refused): the daemon serves again. */
  reloaded(status: string): Promise<void>;
  stopping(): Promise<void>;
}

export interface ServiceManagerOptions {
  /** NOTIFY_SOCKET and WATCHDOG_USEC come from here; without NOTIFY_SOCKET every call does nothing. */
  env: NodeJS.ProcessEnv;
  logger: Logger;
  alive: () => boolean;
}

export function connectServiceManager(options: ServiceManagerOptions): ServiceManager {
  const notifier = createServiceNotifier({ env: options.env, logger: options.logger });
  let stopWatchdog = (): void => {};
  return {
    async ready(status) {
      await notifier.ready(status);
      stopWatchdog = startWatchdog({ env: options.env, notifier, logger: options.logger, alive: options.alive });
    },
    reloading: () => notifier.reloading(),
    reloaded: (status) => notifier.ready(status),
    stopping() {
      stopWatchdog();
      return notifier.stopping();
    },
  };
}

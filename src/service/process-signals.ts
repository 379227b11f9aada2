import type { Logger } from '../log/index.js';

export interface ControlledDaemon {
  stop(): Promise<void>;
  reload(): Promise<unknown>;
}

export interface ProcessSignalOptions {
  /**
   * How long a graceful stop may take before the process gives up and exits 1. Below the unit's TimeoutStopSec,
   * so a part that hangs ends in a logged exit of our own rather than a SIGKILL.
   */
  stopDeadlineMs: number;
}

/**
 * SIGTERM and SIGINT stop gracefully and exit 0 (a second one forces exit 1); SIGHUP reloads the config.
 * A crash is logged as one JSON line before exit 1, so journald keeps it and Restart=on-failure applies.
 */
export function installProcessSignals(daemon: ControlledDaemon, logger: Logger, options: ProcessSignalOptions): void {
  const exit = (code: number): never => process.exit(code);
  let stopRequested = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopRequested) {
      logger.warn({ signal }, 'second stop signal: exiting without waiting for the parts');
      exit(1);
      return;
    }
    stopRequested = true;
    logger.info({ signal }, 'stopping');
    const deadline = setTimeout(() => {
      logger.error({ stopDeadlineMs: options.stopDeadlineMs }, 'graceful stop took too long: exiting');
      exit(1);
    }, options.stopDeadlineMs);
    deadline.unref();
    daemon.stop().then(
      () => exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', () => {
    logger.info({ signal: 'SIGHUP' }, 'reloading the config');
    void daemon.reload();
  });
  const crash = (err: unknown, origin: string): void => {
    logger.fatal({ err, origin }, 'crashed');
    exit(1);
  };
  process.on('uncaughtException', (err, origin) => crash(err, origin));
  process.on('unhandledRejection', (reason) => crash(reason, 'unhandledRejection'));
}

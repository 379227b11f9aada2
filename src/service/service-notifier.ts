import { execFile } from 'node:child_process';
import type { Logger } from '../log/index.js';

/**
 * Tells the service manager (systemd, Type=notify) about readiness, reloads, shutdown and liveness.
 *
 * Node has no unix datagram sockets, so messages go through `systemd-notify`, which ships with every systemd
 * that can set NOTIFY_SOCKET. It runs as a child process, hence the unit's NotifyAccess=all; since systemd 246 it
 * waits on a barrier until the manager has read the message, so the child exiting early loses nothing.
 */
export interface ServiceNotifier {
  /** False outside systemd (no NOTIFY_SOCKET): every call is then a no-op. */
  readonly enabled: boolean;
  ready(status: string): Promise<void>;
  reloading(): Promise<void>;
  stopping(): Promise<void>;
  watchdog(): Promise<void>;
}

const NOTIFY_TIMEOUT_MS = 10_000;

/** Runs one `systemd-notify VAR=VALUE...`; rejects when it could not deliver. */
function systemdNotify(assignments: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('systemd-notify', assignments, { env, timeout: NOTIFY_TIMEOUT_MS }, (err, _stdout, stderr) => {
      if (err) reject(Object.assign(err, { stderr: stderr.trim() }));
      else resolve();
    });
  });
}

export interface ServiceNotifierOptions {
  env: NodeJS.ProcessEnv;
  logger: Logger;
}

export function createServiceNotifier(options: ServiceNotifierOptions): ServiceNotifier {
  const { env, logger } = options;
  const log = logger.child({ component: 'systemd' });
  let enabled = Boolean(env.NOTIFY_SOCKET);
  // One message at a time, in order: READY must never overtake the STOPPING sent after it.
  let queue: Promise<void> = Promise.resolve();

  const send = (assignments: string[]): Promise<void> => {
    if (!enabled) return Promise.resolve();
    queue = queue.then(async () => {
      if (!enabled) return;
      try {
        await systemdNotify(assignments, env);
      } catch (err) {
        const e = err as NodeJS.ErrnoException & { stderr?: string };
        if (e.code === 'ENOENT') {
          enabled = false;
          log.warn(
            'NOTIFY_SOCKET is set but systemd-notify is not installed: readiness and watchdog notifications are off',
          );
          return;
        }
        log.warn({ err: e.stderr || e.message, message: assignments.join(' ') }, 'service manager notification failed');
      }
    });
    return queue;
  };

  return {
    get enabled() {
      return enabled;
    },
    ready: (status) => send(['READY=1', `STATUS=${status}`, `MAINPID=${process.pid}`]),
    reloading: () => send(['RELOADING=1', 'STATUS=reloading the config']),
    stopping: () => send(['STOPPING=1', 'STATUS=stopping']),
    watchdog: () => send(['WATCHDOG=1']),
  };
}

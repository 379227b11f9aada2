import type { Logger } from './logger.js';

/**
 * Runs work no caller waits for (a timer, a setImmediate): a failure (a full disk, say) is logged as `message`
 * instead of reaching uncaughtException and taking the daemon down.
 */
export function safely(log: Logger, message: string, work: () => void, fields: Record<string, unknown> = {}): void {
  try {
    work();
  } catch (err) {
    log.error({ ...fields, err }, message);
  }
}

// Delivery thread: runs in the worker thread that delivery-thread.ts starts, off the daemon's event loop.
import type { Config } from '../../config/index.js';

type DeliverySettings = Config['webhookDelivery'];

/**
 * How long a delivery waits after its n-th failed attempt (n from 1): the n-th entry of
 * webhookDelivery.retryIntervalsS, its last entry repeating; [retryIntervalS] when the list is absent, the fixed
 * schedule partners were promised (docs/configuration/webhook-delivery.md#webhook-delivery-installers).
 */
export function retryWaitMs(settings: DeliverySettings, failedAttempts: number): number {
  const schedule = settings.retryIntervalsS ?? [settings.retryIntervalS];
  return schedule[Math.min(Math.max(failedAttempts, 1), schedule.length) - 1]! * 1000;
}

import type { HealthSource } from '../health/index.js';
import type { Logger } from '../log/index.js';
import type { KeptReadings, Site } from '../site/index.js';

/** How long a reading that failed a pinned meter key keeps /health at warning (docs/partners/signed-meter-values.md#signed-meter-values). */
export const PINNED_KEY_FAILURE_WARNING_DAYS = 7;

/**
 * The log lines of a message's signed readings: one that fails an installer-pinned key is a security warning (a
 * meter swapped or a record forged), as is one dropped; one unreadable or unverified against the station's own key
 * is logged at info, kept marked verified false; one whose key is in no form read is a warning, kept verified null.
 */
export function logKeptReadings(log: Logger, kept: KeptReadings): void {
  const { stationId, transactionId } = kept;
  for (const { context, problem, againstPinnedKey } of kept.unverified) {
    if (againstPinnedKey)
      log.warn(
        { stationId, transactionId, context, problem },
        `signed meter value from ${stationId} fails the meter key pinned for it: kept with verified false`,
      );
    else log.info({ stationId, transactionId, context, problem }, 'signed meter value kept with verified false');
  }
  for (const { context, problem } of kept.unreadableKeys)
    log.warn(
      { stationId, transactionId, context, problem },
      `signed meter value from ${stationId} comes with a public key in no form read: kept with verified null`,
    );
  for (const { context, why } of kept.dropped)
    log.warn({ stationId, transactionId, context, why }, 'signed meter value dropped');
}

/** GET /health `signedMeterValues`: warning while a station's readings failed its pinned key lately, naming it. */
export function signedReadingsHealth(site: Site, now: () => Date = () => new Date()): HealthSource {
  return {
    name: 'signedMeterValues',
    report: () => {
      const since = new Date(now().getTime() - PINNED_KEY_FAILURE_WARNING_DAYS * 86_400_000);
      const failures = site.signedReadings.pinnedKeyFailures(since);
      if (failures.length === 0) return { status: 'ok' };
      return {
        status: 'warning',
        warning: `signed meter values failed the pinned meter key of ${failures.map((f) => f.stationId).join(', ')}`,
        pinnedKeyFailures: failures,
      };
    },
  };
}

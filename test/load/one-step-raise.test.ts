import { describe, expect, it } from 'vitest';
import { clockedSite } from './clocked-site.js';

/*
 * Issue 42 item 3: cars that start together on a metered circuit reach their fair share in one raise. Until their
 * stations' first Current.Import arrives, the cars' draw counts as other load, and the share then is too low; the
 * headroom that matters is the one the first reading with their draw shows.
 */

const LIMIT_A = 63;
const OTHER_A = 10;
const RAISE_AFTER_S = 5;
/** The fail-safe a car starts on (failsafeCurrentA's default). */
const FAILSAFE_A = 6;
/** (63 - 10) / 4, in the tenths limits are sent in. */
const FAIR_A = 13.2;
/** The meter is polled every half second. */
const POLL_MS = 500;

describe('a car that starts charging (issue 42.3)', () => {
  it('4 cars starting together reach their fair share in one raise, raiseAfterS after the first reading with their draw', async () => {
    const site = clockedSite({ stations: 4, limitA: LIMIT_A, raiseAfterS: RAISE_AFTER_S });
    site.read(OTHER_A);
    await site.clock.advance(100);
    for (const id of site.stationIds) site.start(id);
    // The cars take their fail-safe; the meter sees them before their stations say so.
    await site.clock.advance(POLL_MS);
    site.read(OTHER_A + 4 * FAILSAFE_A);
    await site.clock.advance(POLL_MS);
    for (const id of site.stationIds) site.report(id, FAILSAFE_A);
    site.read(OTHER_A + 4 * FAILSAFE_A);
    const firstWithDrawMs = site.clock.monotonicMs();
    for (let i = 0; i < 30; i += 1) {
      await site.clock.advance(POLL_MS);
      site.read(OTHER_A + 4 * FAILSAFE_A);
    }
    for (const id of site.stationIds) {
      const received = site.receivedBy(id);
      expect(
        received.map((r) => r.currentA),
        id,
      ).toEqual([FAILSAFE_A, FAIR_A]);
      const raisedAfterMs = received[1]!.atMs - firstWithDrawMs;
      expect(raisedAfterMs, id).toBeGreaterThanOrEqual(RAISE_AFTER_S * 1000);
      // The next step after raiseAfterS: a step runs at least every second.
      expect(raisedAfterMs, id).toBeLessThanOrEqual(RAISE_AFTER_S * 1000 + 1000);
    }
  });
});

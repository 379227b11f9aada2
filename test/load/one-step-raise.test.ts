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

  it('2 cars that start beside 2 charging ones reach the fair share in one raise too', async () => {
    const site = clockedSite({ stations: 4, limitA: LIMIT_A, raiseAfterS: RAISE_AFTER_S });
    const [first, second, third, fourth] = site.stationIds as [string, string, string, string];
    /** The meter polled: the other load and what each car draws, as it follows its last limit at once. */
    const poll = async (drawnA: (stationId: string) => number) => {
      await site.clock.advance(POLL_MS);
      site.read(OTHER_A + site.stationIds.reduce((sum, id) => sum + drawnA(id), 0));
    };
    const following = (id: string) => site.receivedBy(id).at(-1)?.currentA ?? 0;
    site.read(OTHER_A);
    site.start(first);
    site.start(second);
    // Two cars settle at (63 - 10) / 2 = 26.5 A, their stations reporting what they draw.
    for (let i = 0; i < 20; i += 1) {
      for (const id of [first, second]) site.report(id, following(id));
      await poll(following);
    }
    expect([following(first), following(second)]).toEqual([26.5, 26.5]);

    // Two more start: the first two are lowered to 13.2 A at once, the newcomers start on the fail-safe.
    site.start(third);
    site.start(fourth);
    await poll(following);
    // Their stations' first reports come a poll later.
    for (const id of site.stationIds) site.report(id, following(id));
    await poll(following);
    const firstWithDrawMs = site.clock.monotonicMs();
    for (let i = 0; i < 30; i += 1) await poll(following);
    for (const id of [third, fourth]) {
      const received = site.receivedBy(id);
      expect(
        received.map((r) => r.currentA),
        id,
      ).toEqual([FAILSAFE_A, FAIR_A]);
      const raisedAfterMs = received[1]!.atMs - firstWithDrawMs;
      expect(raisedAfterMs, id).toBeGreaterThanOrEqual(RAISE_AFTER_S * 1000);
      expect(raisedAfterMs, id).toBeLessThanOrEqual(RAISE_AFTER_S * 1000 + 1000);
    }
    // The charging ones were lowered while the newcomers' draw counted as other load (the safe side); from the first
    // reading with it, every car gets one raise, to the fair share.
    for (const id of site.stationIds)
      expect(
        site
          .receivedBy(id)
          .filter((r) => r.atMs >= firstWithDrawMs)
          .map((r) => r.currentA),
        id,
      ).toEqual([FAIR_A]);
  });
});

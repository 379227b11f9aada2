import { describe, expect, it } from 'vitest';
import { OPERATIONS_WAITING } from '../../src/stations/index.js';
import { apiDaemonForTest } from '../http/api-harness.js';
import { charging, inBrussels, limitsOn, temporaryLimitSite } from '../load/temporary-limit-site.js';
import { eventually } from '../support/daemon.js';
import { MovableLoadClock } from '../support/load-clock.js';

/** #41 / contract 11.1: a limit reaches the station within 2 s plus its own answer time. */
const LIMIT_WITHIN_MS = 2_000;
/** How long CP001 takes to answer a Reset: 17 of them in a row hold it over 4 s, beyond LIMIT_WITHIN_MS. */
const STATION_ANSWER_MS = 250;

/**
 * Contract 11.1: one operation at a time per station, at most 16 waiting (429 station_busy beyond), and load
 * management's limits are never delayed by queued operations more than one station answer.
 */
describe('station operations beside load management', () => {
  it('17 resets queue (16 waiting), the 18th gets 429; a lowered limit overtakes the queued ones', async () => {
    const site = temporaryLimitSite();
    // The first raise waits on this clock (clock.meanwhile), not on real time.
    const clock = new MovableLoadClock();
    const api = await apiDaemonForTest(
      {
        ...site,
        groups: [
          ...(site.groups as object[]),
          { id: 'operators', scope: 'company:acme', permissions: ['stations:operate'] },
        ],
        // Long enough that no queued operation reaches its deadline (2 x) in the queue of 17.
        ocpp: { ...(site.ocpp as object), callTimeoutMs: 10_000 },
      },
      { loadClock: clock },
    );
    const [a, b] = [await api.connect('CP001'), await api.connect('CP002')];
    const limit = (): number | undefined => a.limitA(1, clock.now());
    await charging(a, b);
    await expect.poll(clock.meanwhile(limitsOn(clock, a)), { timeout: 10_000 }).toEqual([12]);
    const [operator, ops] = [await api.token(api.createApp('operators')), await api.token(api.createApp('ops'))];

    // Each Reset notes the limit CP001 had when it arrived.
    const limitAtReset: Array<number | undefined> = [];
    a.handle('Reset', async () => {
      limitAtReset.push(limit());
      await new Promise((resolve) => setTimeout(resolve, STATION_ANSWER_MS));
      return { status: 'Accepted' };
    });
    const statuses: number[] = [];
    const resets = Array.from({ length: 1 + OPERATIONS_WAITING + 1 }, () =>
      api.call('POST', '/stations/CP001/reset', { token: operator, body: { type: 'hard' } }).then((r) => {
        statuses.push(r.status);
        return r;
      }),
    );
    await eventually(() => statuses.includes(429), 10_000, 'the one beyond the queue refused');

    // A temporary limit of 16 A (8 A each) while operations still wait for CP001.
    const limitAt = performance.now();
    const put = await api.call('PUT', '/sites/s1/circuits/main/limit', {
      token: ops,
      body: { maxCurrentA: 16, until: inBrussels(Date.now() + 3_600_000) },
    });
    expect(put.status).toBe(200);
    await expect.poll(limit, { timeout: LIMIT_WITHIN_MS + STATION_ANSWER_MS, interval: 10 }).toBe(8);
    expect(performance.now() - limitAt).toBeLessThan(LIMIT_WITHIN_MS + STATION_ANSWER_MS);

    const answered = await Promise.all(resets);
    const busy = answered.filter((r) => r.status === 429);
    expect(busy).toHaveLength(1);
    expect(busy[0]!.body).toMatchObject({
      error: 'station_busy',
      message: expect.stringContaining(`${OPERATIONS_WAITING} operations already wait`),
    });
    expect(answered.filter((r) => r.status === 200)).toHaveLength(1 + OPERATIONS_WAITING);
    // Resets that had waited since before the limit reached CP001 after it: the limit went ahead of them.
    expect(limitAtReset).toHaveLength(1 + OPERATIONS_WAITING);
    expect(limitAtReset[0]).toBe(12);
    expect(limitAtReset.at(-1)).toBe(8);
  }, 60_000);
});

import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { retryWaitMs } from '../../src/webhooks/delivery-thread/retry-schedule.js';

const delivery = (yaml: string) => parseConfig(`sites: [{ id: a }]\nwebhookDelivery: ${yaml}`).webhookDelivery;

describe('retry schedule (webhookDelivery.retryIntervalsS)', () => {
  it('is the interface document fixed 10 s by default, and retryIntervalS alone keeps meaning a fixed wait', () => {
    expect([1, 2, 360].map((n) => retryWaitMs(delivery('{}'), n))).toEqual([10_000, 10_000, 10_000]);
    expect([1, 5].map((n) => retryWaitMs(delivery('{ retryIntervalS: 3 }'), n))).toEqual([3000, 3000]);
  });

  it('takes the n-th entry after the n-th failure and repeats the last; the list replaces retryIntervalS', () => {
    const weekend = delivery('{ retryIntervalS: 3, retryIntervalsS: [5, 300, 1800, 7200] }');
    expect([1, 2, 3, 4, 5, 100].map((n) => retryWaitMs(weekend, n))).toEqual([
      5000, 300_000, 1_800_000, 7_200_000, 7_200_000, 7_200_000,
    ]);
  });

  it('refuses an empty list or a wait over a day, naming the key', () => {
    expect(() => delivery('{ retryIntervalsS: [] }')).toThrow(/webhookDelivery\.retryIntervalsS/);
    expect(() => delivery('{ retryIntervalsS: [10, 90000] }')).toThrow(
      /webhookDelivery\.retryIntervalsS\[1\]: at most 86400/,
    );
  });
});

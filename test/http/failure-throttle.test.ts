import { describe, expect, it } from 'vitest';
import { FailureThrottle } from '../../src/http/index.js';

describe('FailureThrottle', () => {
  it('free failures first, then doubling delays up to the cap; a success or a quiet period clears them', () => {
    let now = 0;
    const throttle = new FailureThrottle({ freeFailures: 3, baseDelayMs: 100, maxDelayMs: 500, forgetAfterMs: 60_000, maxTracked: 10, now: () => now });
    const delays: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      delays.push(throttle.delayMs('10.0.0.1'));
      throttle.recordFailure('10.0.0.1');
    }
    expect(delays).toEqual([0, 0, 0, 0, 100, 200, 400, 500]);
    expect(throttle.delayMs('10.0.0.2')).toBe(0);
    throttle.recordSuccess('10.0.0.1');
    expect(throttle.delayMs('10.0.0.1')).toBe(0);

    for (let i = 0; i < 5; i += 1) throttle.recordFailure('10.0.0.1');
    expect(throttle.delayMs('10.0.0.1')).toBe(200);
    now += 60_001;
    expect(throttle.delayMs('10.0.0.1')).toBe(0);
  });

  it('tracks a bounded number of addresses, forgetting the longest-quiet first', () => {
    const throttle = new FailureThrottle({ freeFailures: 0, baseDelayMs: 100, maxDelayMs: 1000, forgetAfterMs: 60_000, maxTracked: 2 });
    for (const address of ['a', 'b', 'c']) throttle.recordFailure(address);
    expect(throttle.delayMs('a')).toBe(0);
    expect(throttle.delayMs('b')).toBe(100);
    expect(throttle.delayMs('c')).toBe(100);
  });
});

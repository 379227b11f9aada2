import { describe, expect, it } from 'vitest';
import {
  SIGN_CERTIFICATE_PER_STATION_PER_MINUTE,
  SignCertificateThrottle,
} from '../../src/ocpp/sign-certificate-throttle.js';

describe('SignCertificateThrottle', () => {
  it('lets each station ask a few times a minute, says once that it refuses, and lets it ask again the next minute', () => {
    let now = 0;
    const throttle = new SignCertificateThrottle(() => now);
    const turns = Array.from({ length: SIGN_CERTIFICATE_PER_STATION_PER_MINUTE + 2 }, () => throttle.take('EV1'));
    expect(turns).toEqual([
      ...Array<string>(SIGN_CERTIFICATE_PER_STATION_PER_MINUTE).fill('allowed'),
      'first refused',
      'refused',
    ]);
    expect(throttle.take('EV2')).toBe('allowed');
    now = 60_000;
    expect(throttle.take('EV1')).toBe('allowed');
  });

  it('forgets stations whose minute has passed: identities made up one after another do not pile up', () => {
    let now = 0;
    const throttle = new SignCertificateThrottle(() => now);
    for (let i = 0; i < 10_000; i += 1) {
      now = i * 10;
      throttle.take(`made-up-${i}`);
    }
    // Only the identities of the last minute (6,000 of them, 10 ms apart) are still counted.
    expect(throttle.size).toBeLessThanOrEqual(6_001);
    now += 60_000;
    throttle.take('one-more');
    expect(throttle.size).toBe(1);
  });
});

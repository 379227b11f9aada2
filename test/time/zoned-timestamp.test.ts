import { describe, expect, it } from 'vitest';
import { formatZonedTimestamp } from '../../src/time/index.js';

describe('envelope timestamp in the configured zone', () => {
  it('uses +01:00 in Brussels winter and +02:00 in summer, with milliseconds', () => {
    expect(formatZonedTimestamp(new Date('2026-11-21T09:15:30.123Z'), 'Europe/Brussels')).toBe(
      '2026-11-21T10:15:30.123+01:00',
    );
    expect(formatZonedTimestamp(new Date('2026-07-21T09:15:30.003Z'), 'Europe/Brussels')).toBe(
      '2026-07-21T11:15:30.003+02:00',
    );
  });

  it('switches offset exactly at the daylight-saving transitions', () => {
    expect(formatZonedTimestamp(new Date('2026-03-29T00:59:59.999Z'), 'Europe/Brussels')).toBe(
      '2026-03-29T01:59:59.999+01:00',
    );
    expect(formatZonedTimestamp(new Date('2026-03-29T01:00:00.000Z'), 'Europe/Brussels')).toBe(
      '2026-03-29T03:00:00.000+02:00',
    );
    expect(formatZonedTimestamp(new Date('2026-10-25T00:59:59.999Z'), 'Europe/Brussels')).toBe(
      '2026-10-25T02:59:59.999+02:00',
    );
    expect(formatZonedTimestamp(new Date('2026-10-25T01:00:00.000Z'), 'Europe/Brussels')).toBe(
      '2026-10-25T02:00:00.000+01:00',
    );
  });

  it('writes a numeric offset for UTC, negative and half-hour zones, across a date line', () => {
    const instant = new Date('2026-07-21T09:15:30.000Z');
    expect(formatZonedTimestamp(instant, 'UTC')).toBe('2026-07-21T09:15:30.000+00:00');
    expect(formatZonedTimestamp(instant, 'America/St_Johns')).toBe('2026-07-21T06:45:30.000-02:30');
    expect(formatZonedTimestamp(instant, 'Asia/Kolkata')).toBe('2026-07-21T14:45:30.000+05:30');
    expect(formatZonedTimestamp(new Date('2026-12-31T23:59:59.999Z'), 'Pacific/Kiritimati')).toBe(
      '2027-01-01T13:59:59.999+14:00',
    );
  });

  it('is right on both sides of an offset change inside a minute (Monrovia, 1972: -0:44:30 to UTC), asked again', () => {
    for (let round = 0; round < 2; round += 1) {
      expect(formatZonedTimestamp(new Date('1972-01-07T00:44:00.000Z'), 'Africa/Monrovia')).toBe(
        '1972-01-06T23:59:30.000-00:44',
      );
      expect(formatZonedTimestamp(new Date('1972-01-07T00:44:29.999Z'), 'Africa/Monrovia')).toBe(
        '1972-01-06T23:59:59.999-00:44',
      );
      expect(formatZonedTimestamp(new Date('1972-01-07T00:44:30.000Z'), 'Africa/Monrovia')).toBe(
        '1972-01-07T00:44:30.000+00:00',
      );
      // The minutes around it have one offset each, kept after the first time.
      expect(formatZonedTimestamp(new Date('1972-01-07T00:43:59.999Z'), 'Africa/Monrovia')).toBe(
        '1972-01-06T23:59:29.999-00:44',
      );
      expect(formatZonedTimestamp(new Date('1972-01-07T00:45:00.000Z'), 'Africa/Monrovia')).toBe(
        '1972-01-07T00:45:00.000+00:00',
      );
    }
  });

  it('denotes the same instant it was given', () => {
    const instant = new Date('2026-10-25T01:30:00.456Z');
    expect(Date.parse(formatZonedTimestamp(instant, 'Europe/Brussels'))).toBe(instant.getTime());
  });
});

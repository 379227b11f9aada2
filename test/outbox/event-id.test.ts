import { validate, version } from 'uuid';
import { describe, expect, it } from 'vitest';
import { TimeOrderedUuids } from '../../src/outbox/event-id.js';

/** The millisecond a v7 UUID carries in its first 48 bits. */
const msOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('event ids (outbox/event-id.ts)', () => {
  it('are version 7 UUIDs carrying the time they were made, each larger than the one before, none repeated', () => {
    // A generator of its own: the process's one has made ids at other times for other tests in this worker.
    const ids7 = new TimeOrderedUuids();
    const at = Date.UTC(2026, 10, 29, 9, 30);
    // Many in one millisecond, across several refills of the random pool, then later milliseconds.
    const ids = [
      ...Array.from({ length: 1000 }, () => ids7.next(at)),
      ...Array.from({ length: 1000 }, (_, i) => ids7.next(at + 1 + Math.floor(i / 10))),
    ];
    for (const id of ids) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
    }
    expect(msOf(ids[0]!)).toBe(at);
    expect(msOf(ids.at(-1)!)).toBe(at + 100);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('keep growing when the clock goes back: the last millisecond is counted on', () => {
    const ids7 = new TimeOrderedUuids();
    const at = Date.UTC(2026, 10, 29, 10);
    const before = ids7.next(at);
    const after = ids7.next(at - 5000);
    expect(after > before).toBe(true);
    expect(msOf(after)).toBeGreaterThanOrEqual(at);
  });
});

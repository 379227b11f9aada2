import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../src/ocpp/bounded-map.js';

describe('BoundedMap', () => {
  it('holds at most its limit: the most recently set keys, with their last values', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer()), { maxLength: 100 }),
        (limit, writes) => {
          const map = new BoundedMap<number, number>(limit);
          for (const [key, value] of writes) map.set(key, value);
          const latest = new Map<number, number>();
          for (const [key, value] of writes) {
            latest.delete(key);
            latest.set(key, value);
          }
          expect([...map]).toEqual([...latest].slice(-limit));
        },
      ),
    );
  });
});

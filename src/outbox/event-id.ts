import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * Random bytes for event ids, drawn 4 KiB at a time: uuid draws 16 bytes per id through webcrypto, which cost the
 * daemon's main thread 5 % of its time under station load (issue 47).
 */
const pool = new Uint8Array(4096);
let drawn = pool.length;
/** The last id's millisecond and sequence: the state uuid keeps for v7 when it draws its own randomness. */
let lastMs = Number.NEGATIVE_INFINITY;
let sequence = 0;

/**
 * A time-ordered UUID (version 7, RFC 9562), as uuid's v7() makes it: a new millisecond starts from a random sequence,
 * an id within the same millisecond counts it up, so ids made here only ever grow.
 */
export function timeOrderedUuid(now = Date.now()): string {
  if (drawn === pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  const random = pool.subarray(drawn, (drawn += 16));
  if (now > lastMs) {
    lastMs = now;
    sequence = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    sequence = (sequence + 1) | 0;
    if (sequence === 0) lastMs += 1;
  }
  return v7({ random, msecs: lastMs, seq: sequence });
}

import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * Time-ordered UUIDs (version 7, RFC 9562), as uuid's v7() makes them: a new millisecond starts from a random
 * sequence, an id within the same millisecond counts it up, so the ids one generator makes only ever grow. The random
 * bytes are drawn 4 KiB at a time: uuid draws 16 bytes per id through webcrypto, which cost the daemon's main thread
 * 5 % of its time under station load (issue 47).
 */
export class TimeOrderedUuids {
  private readonly pool = new Uint8Array(4096);
  private drawn = this.pool.length;
  /** The last id's millisecond and sequence: the state uuid keeps for v7 when it draws its own randomness. */
  private lastMs = Number.NEGATIVE_INFINITY;
  private sequence = 0;

  next(now = Date.now()): string {
    if (this.drawn === this.pool.length) {
      randomFillSync(this.pool);
      this.drawn = 0;
    }
    const random = this.pool.subarray(this.drawn, (this.drawn += 16));
    if (now > this.lastMs) {
      this.lastMs = now;
      this.sequence = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
    } else {
      this.sequence = (this.sequence + 1) | 0;
      if (this.sequence === 0) this.lastMs += 1;
    }
    return v7({ random, msecs: this.lastMs, seq: this.sequence });
  }
}

const eventIds = new TimeOrderedUuids();

/** The process's next event id: one generator for every event, so their ids grow in the order they are made. */
export function timeOrderedUuid(): string {
  return eventIds.next();
}

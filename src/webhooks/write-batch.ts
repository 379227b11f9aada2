import { inTransaction, type Database } from '../store/index.js';

interface Batch {
  writes: Array<() => void>;
  committed: Promise<void>;
}

/**
 * Group commit for the delivery workers: writes queued in the same turn of the event loop share one SQLite
 * transaction, so N busy workers pay for one fsync instead of N. Batches commit in the order they were queued.
 */
export class WriteBatch {
  private next: Batch | undefined;
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Runs the write in the next shared transaction; resolves once it has committed. */
  run(write: () => void): Promise<void> {
    let batch = this.next;
    if (!batch) {
      const writes: Array<() => void> = [];
      const committed = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          this.next = undefined;
          try {
            inTransaction(this.db, () => {
              for (const w of writes) w();
            });
            resolve();
          } catch (err) {
            reject(err);
          }
        });
      });
      batch = this.next = { writes, committed };
      this.last = committed.catch(() => undefined);
    }
    batch.writes.push(write);
    return batch.committed;
  }

  /** Like run(), for writes nobody waits on: a failure is reported, not thrown. */
  queue(write: () => void): void {
    this.run(write).catch(this.onError);
  }

  /** Resolves once everything queued so far has committed (or failed). */
  flushed(): Promise<void> {
    return this.last;
  }
}

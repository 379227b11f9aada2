import { inTransaction, type Database } from '../store/index.js';

interface Batch {
  writes: Array<() => void>;
  committed: Promise<void>;
  /** Commits at the end of this turn of the event loop instead of after the linger. */
  commitSoon(): void;
}

/**
 * Group commit for the delivery workers: writes queued close together share one SQLite transaction, so busy
 * workers take the database's write lock (which the stations' commits need too) once per batch instead of once
 * per write. Writes someone waits for (run) commit at the end of the turn; outcomes nobody waits for (queue)
 * linger up to `lingerMs` for company. Batches commit in the order they were queued.
 */
export class WriteBatch {
  private next: Batch | undefined;
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly onError: (err: unknown) => void,
    private readonly lingerMs = 0,
  ) {}

  /** Runs the write in the next shared transaction; resolves once it has committed. */
  run(write: () => void): Promise<void> {
    const batch = this.batch();
    batch.writes.push(write);
    batch.commitSoon();
    return batch.committed;
  }

  /** Like run(), for writes nobody waits on: a failure is reported, not thrown. */
  queue(write: () => void): void {
    const batch = this.batch();
    batch.writes.push(write);
    batch.committed.catch(this.onError);
  }

  /** Resolves once everything queued so far has committed (or failed), committing it now rather than later. */
  flushed(): Promise<void> {
    this.next?.commitSoon();
    return this.last;
  }

  private batch(): Batch {
    if (this.next) return this.next;
    const writes: Array<() => void> = [];
    let lingering: NodeJS.Timeout | undefined;
    let soon: NodeJS.Immediate | undefined;
    let commit!: () => void;
    const committed = new Promise<void>((resolve, reject) => {
      commit = () => {
        clearTimeout(lingering);
        clearImmediate(soon);
        if (this.next === batch) this.next = undefined;
        try {
          inTransaction(this.db, () => {
            for (const w of writes) w();
          });
          resolve();
        } catch (err) {
          reject(err);
        }
      };
    });
    const batch: Batch = {
      writes,
      committed,
      commitSoon: () => {
        soon ??= setImmediate(commit);
      },
    };
    this.next = batch;
    this.last = committed.catch(() => undefined);
    if (this.lingerMs > 0) lingering = setTimeout(commit, this.lingerMs);
    else batch.commitSoon();
    return batch;
  }
}

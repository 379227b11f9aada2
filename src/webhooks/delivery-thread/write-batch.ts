// Delivery thread: runs in the worker thread that delivery-thread.ts starts, off the daemon's event loop.
import type { DeliveryWrite } from '../delivery-writes.js';

interface Batch {
  writes: DeliveryWrite[];
  done: Promise<boolean[]>;
  /** Resolves once the batch committed or was refused; one per batch, shared by every write queued in it. */
  settled: Promise<void>;
  settle: { resolve: (results: boolean[]) => void; reject: (err: Error) => void };
  /** Sends at the end of this turn of the event loop instead of after the linger. */
  sendSoon(): void;
}

/**
 * The delivery thread's side of its writes: writes made close together travel to the daemon as one batch and
 * commit in one of its transactions. Writes a worker waits for (run: counting attempts) go at the end of the
 * turn; outcomes nobody waits for (queue) linger up to `lingerMs` for company. Batches apply in the order sent.
 */
export class WriteBatch {
  private next: Batch | undefined;
  private readonly sent = new Map<number, Batch>();
  private last: Promise<void> = Promise.resolve();
  private lastId = 0;

  constructor(
    private readonly send: (batch: number, writes: DeliveryWrite[]) => void,
    private readonly lingerMs = 0,
  ) {}

  /** Sends the writes in the next batch; resolves with their results once committed. */
  async run(writes: readonly DeliveryWrite[]): Promise<boolean[]> {
    const batch = this.batch();
    const from = batch.writes.length;
    batch.writes.push(...writes);
    batch.sendSoon();
    return (await batch.done).slice(from, from + writes.length);
  }

  /**
   * Like run(), for a write nobody waits on: a failure is logged by the daemon that refused it, not thrown here.
   * Resolves once its batch committed or was refused.
   */
  queue(write: DeliveryWrite): Promise<void> {
    const batch = this.batch();
    batch.writes.push(write);
    return batch.settled;
  }

  /** Resolves once everything queued so far has committed (or failed), sending it now rather than later. */
  flushed(): Promise<void> {
    this.next?.sendSoon();
    return this.last;
  }

  /** The daemon's answer to a batch: its results once committed, or why it was not. */
  settle(batch: number, outcome: { results: boolean[] } | { error: string }): void {
    const sent = this.sent.get(batch);
    if (!sent) return;
    this.sent.delete(batch);
    if ('results' in outcome) sent.settle.resolve(outcome.results);
    else sent.settle.reject(new Error(`delivery writes not recorded: ${outcome.error}`));
  }

  private batch(): Batch {
    if (this.next) return this.next;
    this.lastId += 1;
    const id = this.lastId;
    let lingering: NodeJS.Timeout | undefined;
    let soon: NodeJS.Immediate | undefined;
    let settle!: Batch['settle'];
    const done = new Promise<boolean[]>((resolve, reject) => (settle = { resolve, reject }));
    // The daemon logs a batch it could not record; waiters of run() get the rejection too.
    const settled = done.then(
      () => undefined,
      () => undefined,
    );
    const dispatch = (): void => {
      clearTimeout(lingering);
      clearImmediate(soon);
      if (this.next === batch) this.next = undefined;
      this.sent.set(id, batch);
      this.send(id, batch.writes);
    };
    const batch: Batch = {
      writes: [],
      done,
      settled,
      settle,
      sendSoon: () => {
        soon ??= setImmediate(dispatch);
      },
    };
    this.next = batch;
    this.last = settled;
    if (this.lingerMs > 0) lingering = setTimeout(dispatch, this.lingerMs);
    else batch.sendSoon();
    return batch;
  }
}

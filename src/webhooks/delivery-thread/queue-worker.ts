// Delivery thread: runs in the worker thread that delivery-thread.ts starts, off the daemon's event loop.
import type { Config, WebhookConfig } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import {
  RETRIES_EXHAUSTED,
  type DeliveryStore,
  type EventRecord,
  type PendingDelivery,
  type QueueKey,
} from '../../outbox/index.js';
import type { DeliveryObserver } from '../delivery-thread-messages.js';
import type { DeliveryWrite } from '../delivery-writes.js';
import type { WebhookSender } from '../webhook-sender.js';
import type { WriteBatch } from './write-batch.js';
import { retryWaitMs } from './retry-schedule.js';
import {
  STARTED,
  claimed,
  countedInItsCommit,
  foundEmpty,
  givenBack,
  heldAsRead,
  sentOne,
  takeCountedWord,
  takeExpected,
  takenToSend,
  told,
  woke,
  type Emptiness,
  type HeldRow,
} from './queue-states.js';

export interface QueueWorkerDeps {
  queue: QueueKey;
  /** Reads the queue; every write goes through `writes`. */
  deliveries: DeliveryStore;
  writes: WriteBatch;
  sender: Pick<WebhookSender, 'send' | 'prepare'>;
  /** Read per attempt: a reload changes intervals, URL or credentials without restarting the worker. */
  config: () => Config;
  logger: Logger;
  observer: DeliveryObserver;
  now: () => number;
  /** Longest sleep while the queue is empty; a wake() ends it sooner. */
  idlePollMs: number;
  /**
   * Told when the worker finds its queue empty (once until it sends again): the daemon may count the next event's first
   * attempt for it.
   */
  onEmpty?: () => void;
}

// Rows read per look at the queue, and the most attempts counted in one commit: memory stays flat whatever the
// backlog, and a busy queue takes the database's write lock once per batch, not once per event.
const HEAD_BATCH = 16;
// Requests signed ahead of their turn: the next one signs (on the thread pool) while the one before it is in flight,
// and the head signs while its attempt is being counted, so a queue pays signing beside its other waits, not after.
const SIGN_AHEAD = 2;

/**
 * The one worker of one (webhook, event type) queue. Strict FIFO: the head is retried at the fixed interval
 * until it is delivered or dead, and only then does the next event go. Every step is recorded in the outbox
 * before it matters: the attempt is counted before it is sent (for the head and the due events right behind it
 * in one commit, given back to those not sent when the head fails), the outcome right after.
 */
export class QueueWorker {
  private stopping = false;
  private stopReason = 'stopping';
  private readonly abort = new AbortController();
  private wakeUp: (() => void) | undefined;
  private running: Promise<void> = Promise.resolve();
  private lastDequeued: number | undefined;
  /** Rows whose delivered or dead mark is on its way to a commit: the queue still reads them as pending. */
  private readonly leaving = new Set<number>();
  /** Counts given back and perhaps not committed yet: the queue is read again only once they are. */
  private givingBack: Promise<unknown> = Promise.resolve();
  /** What the worker knows of its queue being empty, for the two optimisations of an empty queue (queue-states.ts). */
  private emptiness: Emptiness = STARTED;
  /** Rows whose first attempt the daemon counted in their events' commits for this worker, not taken up yet. */
  private readonly countedRows = new Set<number>();

  constructor(private readonly deps: QueueWorkerDeps) {}

  get queue(): QueueKey {
    return this.deps.queue;
  }

  /** Starts the loop, after `after` settles (the previous worker of the same queue finishing). */
  start(after: Promise<void> = Promise.resolve()): void {
    this.running = after.then(() => this.loop());
  }

  /** New events may be waiting: ends an idle sleep now instead of at the next poll. */
  wake(): void {
    this.wakeUp?.();
  }

  /**
   * An event for this queue is about to commit. An empty queue signs its request now, beside the commit's fsync,
   * instead of after it, when the event has become its head; a busy queue signs ahead of its rows anyway. The request
   * is sent only for that event read committed from the queue, while fresh (WebhookSender.send checks).
   * `countedRow`: the commit counts the first attempt of the event's row for this worker (onEmpty() asked for it),
   * which sends it without counting it again. A row read before this word came is counted again as any other: one
   * count too many, never one too few.
   */
  expect(event: EventRecord, countedRow?: number): void {
    if (countedRow !== undefined) this.countedRows.add(countedRow);
    if (this.emptiness.state !== 'asleep') return;
    const config = this.deps.config();
    const webhook = findWebhook(config, this.deps.queue);
    if (!webhook?.enabled) return;
    const request = this.deps.sender.prepare(webhook, event, config.timezone);
    request.catch(() => undefined);
    this.emptiness = told({ eventId: event.eventId, request });
  }

  /**
   * Stops taking events. The in-flight request may finish within graceMs, then it is aborted (0: at once).
   * An interrupted attempt stays counted; its event stays at the head of the queue, due at once when work resumes.
   */
  async stop(graceMs: number, reason: string): Promise<void> {
    this.stopping = true;
    this.stopReason = reason;
    this.wake();
    const timer = setTimeout(() => this.abort.abort(), graceMs);
    try {
      await this.running;
    } finally {
      clearTimeout(timer);
    }
  }

  private async loop(): Promise<void> {
    let buffer: HeldRow[] = [];
    while (!this.stopping) {
      try {
        if (buffer.length === 0) {
          // Outcomes are committed behind the worker's back: rows it sent stay pending until theirs is in.
          await this.givingBack;
          buffer = this.deps.deliveries
            .head(this.deps.queue, HEAD_BATCH + this.leaving.size)
            .filter((d) => !this.leaving.has(d.id))
            .map(heldAsRead);
          if (buffer.length === 0) {
            const { emptiness, say } = foundEmpty(this.emptiness);
            this.emptiness = emptiness;
            if (say) this.deps.onEmpty?.();
            await this.sleep(this.deps.idlePollMs);
            this.emptiness = woke(this.emptiness);
            continue;
          }
        }
        if (await this.process(buffer)) buffer.shift();
      } catch (err) {
        this.deps.logger.error({ err, ...this.deps.queue }, 'webhook worker error; retrying shortly');
        this.giveBack(buffer);
        buffer = [];
        await this.sleep(this.deps.idlePollMs);
      }
    }
    this.giveBack(buffer);
  }

  /** One step for the head of the buffer (the queue's oldest rows); true once it has left the queue. */
  private async process(buffer: HeldRow[]): Promise<boolean> {
    const config = this.deps.config();
    const webhook = findWebhook(config, this.deps.queue);
    if (!webhook?.enabled) {
      // The dispatcher stops this worker on the reload that got us here.
      await this.sleep(this.deps.idlePollMs);
      return false;
    }
    const { maxRetries, requestTimeoutMs } = config.webhookDelivery;
    const maxAttempts = maxRetries + 1;
    const now = this.deps.now();
    let head = buffer[0]!;
    if (head.state === 'read' && takeCountedWord(this.countedRows, head)) {
      head = buffer[0] = countedInItsCommit(head);
      this.signAhead([head], webhook, config.timezone);
    }
    if (head.state === 'read') {
      const delivery = head.row;
      if (delivery.attempts >= maxAttempts) {
        // Only after a crash during the last attempt, or a reload that lowered maxRetries.
        this.deadLetter(delivery, delivery.lastStatus ?? undefined, delivery.lastError ?? 'no attempt left');
        return true;
      }
      if (delivery.nextAttemptAt > now) {
        // A due time more than one interval ahead was written under a clock that has since gone back: trust the
        // interval, not the stored time (docs/operating/guarantees-and-faults.md#guarantees-and-faults), so no wait is longer than the scheduled one.
        delivery.nextAttemptAt = Math.min(
          delivery.nextAttemptAt,
          now + retryWaitMs(config.webhookDelivery, delivery.attempts),
        );
        await this.sleep(delivery.nextAttemptAt - now);
        return false;
      }
      const due = buffer
        .slice(0, delivery.attempts > 0 ? 1 : SIGN_AHEAD)
        .filter((h) => h.row.attempts < maxAttempts && h.row.nextAttemptAt <= now);
      this.signAhead(due, webhook, config.timezone);
      head = await this.claim(
        buffer,
        now,
        now + retryWaitMs(config.webhookDelivery, delivery.attempts + 1),
        maxAttempts,
      );
      if (head.state === 'read') {
        // The row left the queue between reading and claiming it (changed by another process).
        for (const held of buffer) delete held.signed;
        return true;
      }
    }
    // Stopped while the attempt was being counted (a disable, a daemon stopping): the request would leave after the
    // stop, before its abort. The row stays counted in the buffer, and the loop's end gives the count back.
    if (this.stopping) return false;
    const taken = takenToSend(head);
    buffer[0] = taken.held;
    const delivery = head.row;
    this.signAhead(
      buffer.slice(1, 1 + SIGN_AHEAD).filter((h) => h.state === 'counted'),
      webhook,
      config.timezone,
    );
    this.emptiness = sentOne(this.emptiness);
    if (this.lastDequeued !== delivery.id) {
      this.lastDequeued = delivery.id;
      void this.deps.writes.queue({ op: 'dequeued', queue: this.deps.queue, at: now });
    }

    const outcome = await this.deps.sender.send(webhook, delivery, {
      timeZone: config.timezone,
      timeoutMs: requestTimeoutMs,
      signal: this.abort.signal,
      ...(taken.signed && { prepared: taken.signed }),
    });
    const done = this.deps.now();
    this.deps.observer.attempt(this.deps.queue, outcome);
    void this.deps.writes.queue({
      op: 'requested',
      queue: this.deps.queue,
      record: {
        at: outcome.startedAt,
        durationMs: outcome.durationMs,
        status: outcome.status,
        error: outcome.error,
        outcome: outcome.delivered ? 'delivered' : outcome.interrupted ? 'interrupted' : 'failed',
      },
    });
    const context = {
      eventId: delivery.eventId,
      ...this.deps.queue,
      attempt: delivery.attempts,
      requestId: outcome.requestId,
      durationMs: Math.round(outcome.durationMs),
    };

    if (outcome.delivered) {
      this.leave(
        delivery.id,
        this.deps.writes.queue({ op: 'delivered', id: delivery.id, status: outcome.status!, at: done }),
      );
      this.deps.logger.debug({ ...context, status: outcome.status }, 'webhook delivered');
      return true;
    }
    // The events behind a failed head wait for it: their counted attempts were not made, their signatures go stale.
    this.giveBack(buffer, 1);
    const error = outcome.interrupted ? `interrupted: ${this.stopReason}` : (outcome.error ?? 'failed');
    delivery.lastStatus = outcome.status ?? null;
    delivery.lastError = error;
    if (!outcome.interrupted && delivery.attempts >= maxAttempts) {
      this.deadLetter(delivery, outcome.status, error);
      return true;
    }
    const waitMs = retryWaitMs(config.webhookDelivery, delivery.attempts);
    delivery.nextAttemptAt = outcome.interrupted ? done : done + waitMs;
    void this.deps.writes.queue({
      op: 'failed',
      id: delivery.id,
      status: outcome.status,
      error,
      nextAttemptAt: delivery.nextAttemptAt,
      at: done,
    });
    if (!outcome.interrupted)
      this.deps.logger.warn(
        { ...context, status: outcome.status ?? null, error, retryInS: waitMs / 1000 },
        'webhook attempt failed; will retry',
      );
    return false;
  }

  /**
   * Counts the next attempt of the head and of the due rows right behind it, in one commit; each is sent in turn
   * without another. Returns the head as it is held now: still `read` if it left the queue.
   */
  private async claim(buffer: HeldRow[], now: number, nextAttemptAt: number, maxAttempts: number): Promise<HeldRow> {
    let due = 0;
    for (const held of buffer) {
      const delivery = held.row;
      if (delivery.attempts >= maxAttempts || delivery.nextAttemptAt > now || held.state === 'counted') break;
      due += 1;
      // A head being retried goes alone: the receiver is failing, the events behind it would only be given back.
      if (delivery.attempts > 0) break;
    }
    const started = await this.deps.writes.run(
      buffer.slice(0, due).map((h) => ({ op: 'startAttempt' as const, id: h.row.id, nextAttemptAt, at: now })),
    );
    for (let i = 0; i < due; i++) if (started[i]) buffer[i] = claimed(buffer[i]!);
    return buffer[0]!;
  }

  /** Starts signing the rows' requests that are not signed yet. */
  private signAhead(rows: readonly HeldRow[], webhook: WebhookConfig, timeZone: string): void {
    for (const held of rows) {
      if (held.signed) continue;
      const expected = takeExpected(this.emptiness, held.row.eventId);
      this.emptiness = expected.emptiness;
      const request = expected.request ?? this.deps.sender.prepare(webhook, held.row, timeZone);
      // Awaited only if its row is sent; send() signs again, and reports the error, if this one failed.
      request.catch(() => undefined);
      held.signed = request;
    }
  }

  /**
   * Gives the counted rows from `from` on that were not sent (a failure ahead of them, a stop) their count and due time
   * back; drops their requests signed ahead.
   */
  private giveBack(buffer: HeldRow[], from = 0): void {
    const at = this.deps.now();
    const releases: DeliveryWrite[] = [];
    for (let i = from; i < buffer.length; i++) {
      const { held, write } = givenBack(buffer[i]!, at);
      buffer[i] = held;
      if (write) releases.push(write);
    }
    // Sent at once rather than lingering: until then the rows show attempts that were not made. The daemon logs a
    // failure.
    if (releases.length > 0) this.givingBack = this.deps.writes.run(releases).catch(() => undefined);
  }

  /**
   * The row has left the queue once `written` is settled. If that write was refused, the row reads as pending
   * again and is taken up at the worker's next look at its queue (at least once). Not at once: with storage
   * refusing writes (a full disk), a dead letter tried again at once would loop as fast as the refusals come.
   */
  private leave(id: number, written: Promise<unknown>): void {
    this.leaving.add(id);
    void written.then(() => this.leaving.delete(id));
  }

  /**
   * Moves the row to the dead letters at the end of this turn (not lingering: they are rare, and `deadletter list`
   * should show one as soon as the log says so); logged once committed. Refused, the row stays at the head and
   * comes back here on its next look.
   */
  private deadLetter(delivery: PendingDelivery, status: number | undefined, error: string): void {
    const written = this.deps.writes.run([{ op: 'dead', id: delivery.id, status, error, at: this.deps.now() }]).then(
      () => true,
      () => false,
    );
    this.leave(delivery.id, written);
    void written.then((committed) => {
      if (!committed) return;
      this.deps.observer.deadLetter(this.deps.queue, RETRIES_EXHAUSTED);
      this.deps.logger.error(
        {
          exceptionType: 'Webhook_SendHttp',
          eventId: delivery.eventId,
          ...this.deps.queue,
          attempts: delivery.attempts,
          lastStatus: status ?? null,
          lastError: error,
        },
        'webhook delivery failed after all retries; event moved to the dead-letter list',
      );
    });
  }

  /** Sleeps up to ms; wake() and stop() end it early. */
  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}

export function findWebhook(config: Config, queue: QueueKey): WebhookConfig | undefined {
  const webhook = config.sites.find((s) => s.id === queue.siteId)?.webhooks.find((w) => w.id === queue.webhookId);
  return webhook?.events.includes(queue.eventType) ? webhook : undefined;
}

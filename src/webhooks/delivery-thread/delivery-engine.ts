// Delivery thread: runs in the worker thread that delivery-thread.ts starts, off the daemon's event loop.
import type { Config } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import {
  DELIVERIES_TOPIC,
  DeliveryStore,
  QUEUE_FULL,
  queueId,
  type AppendedRecord,
  type QueueKey,
} from '../../outbox/index.js';
import { openDatabase, watchChangeCounter, type Database } from '../../store/index.js';
import type { DeliveryObserver } from '../delivery-thread-messages.js';
import { QueueWorker } from './queue-worker.js';
import { WebhookSender } from '../webhook-sender.js';
import type { WriteBatch } from './write-batch.js';
import type { WebhookSigningKeys } from '../request-signature.js';

export interface DeliveryEngineOptions {
  /** Where the outbox lives; delivery reads it through its own read-only connection. */
  dataDir: string;
  /** Where its writes go (to the daemon's connection, see delivery-writes.ts). */
  writes: WriteBatch;
  /** Read on every use, so a SIGHUP reload reaches the workers; call reload() to start or stop workers. */
  config: () => Config;
  logger: Logger;
  /** The keystore's current webhook keys, asked for per attempt. */
  signingKeys: () => WebhookSigningKeys;
  /** Told every attempt and dead letter (the Prometheus counters live with the daemon's registry). */
  observer: DeliveryObserver;
  /** Safety-net poll for rows no notify() announced (another process, a missed wake). */
  pollIntervalMs?: number;
  /** A worker found its queue empty: the daemon may count the first attempt of its next event (QueueWorker.expect). */
  onEmptyQueue?: (queue: QueueKey) => void;
}

const QUEUE_FULL_REPORT_BATCH = 500;

/**
 * Delivery from the durable outbox: one QueueWorker per (site, enabled webhook, subscribed event type).
 * notify() after a commit wakes the workers; a slow poll and the deliveries change counter catch the rest.
 * It runs on the delivery thread (delivery-thread.ts), so station traffic on the main thread cannot starve it.
 */
export class DeliveryEngine {
  private readonly db: Database;
  private readonly config: () => Config;
  private readonly logger: Logger;
  private readonly deliveries: DeliveryStore;
  private readonly writes: WriteBatch;
  private readonly sender: WebhookSender;
  private readonly observer: DeliveryObserver;
  private readonly pollIntervalMs: number;
  private readonly onEmptyQueue: ((queue: QueueKey) => void) | undefined;
  private readonly workers = new Map<string, QueueWorker>();
  /** Workers still finishing after being stopped; a successor for the same queue starts once they are done. */
  private readonly retiring = new Map<string, Promise<void>>();
  private started = false;
  private wakeScheduled = false;
  private reporting = false;
  private timers: Array<() => void> = [];

  constructor(options: DeliveryEngineOptions) {
    this.db = openDatabase(options.dataDir, { readonly: true });
    this.config = options.config;
    this.logger = options.logger;
    this.pollIntervalMs = options.pollIntervalMs ?? 5000;
    this.onEmptyQueue = options.onEmptyQueue;
    this.deliveries = new DeliveryStore(this.db);
    this.writes = options.writes;
    this.sender = new WebhookSender({ signingKeys: options.signingKeys });
    this.observer = options.observer;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.reload();
    this.reportQueueFull();
    const poll = setInterval(() => this.wakeAll(), this.pollIntervalMs);
    poll.unref();
    const unwatch = watchChangeCounter(this.db, DELIVERIES_TOPIC, () => this.notify(), 500);
    this.timers = [() => clearInterval(poll), unwatch];
  }

  /**
   * Events were committed: wake the workers (coalesced, so a burst of commits costs one wake, without waiting a turn).
   */
  notify(): void {
    if (!this.started || this.wakeScheduled) return;
    this.wakeScheduled = true;
    queueMicrotask(() => {
      this.wakeScheduled = false;
      this.wakeAll();
    });
  }

  /**
   * Events about to commit: the workers of their queues sign them meanwhile if idle, and take up their counted rows
   * (QueueWorker.expect).
   */
  expect(events: readonly AppendedRecord[]): void {
    for (const event of events) {
      for (const worker of this.workers.values()) {
        const { queue } = worker;
        if (queue.siteId === event.siteId && queue.eventType === event.eventType)
          worker.expect(event, event.counted.find((c) => c.webhookId === queue.webhookId)?.id);
      }
    }
  }

  /**
   * Brings the workers in line with the config: new executors start; those of a disabled or removed webhook
   * (or an unsubscribed event type) stop at once, aborting the in-flight request. Their pending events stay in
   * the outbox and are delivered when the webhook is enabled again.
   */
  reload(): void {
    if (!this.started) return;
    const { onEmptyQueue } = this;
    const wanted = new Map<string, QueueKey>();
    for (const site of this.config().sites) {
      for (const webhook of site.webhooks) {
        if (!webhook.enabled) continue;
        for (const eventType of webhook.events)
          wanted.set(queueId({ siteId: site.id, webhookId: webhook.id, eventType }), {
            siteId: site.id,
            webhookId: webhook.id,
            eventType,
          });
      }
    }
    for (const [id, worker] of this.workers) {
      if (wanted.has(id)) continue;
      this.workers.delete(id);
      this.logger.info(
        { ...worker.queue },
        'webhook executor stopped: webhook disabled, removed or unsubscribed; its pending events are kept',
      );
      this.retire(id, worker.stop(0, 'webhook disabled, removed or unsubscribed'));
    }
    for (const [id, queue] of wanted) {
      if (this.workers.has(id)) continue;
      const worker = new QueueWorker({
        queue,
        deliveries: this.deliveries,
        writes: this.writes,
        sender: this.sender,
        config: this.config,
        logger: this.logger,
        observer: this.observer,
        now: Date.now,
        idlePollMs: this.pollIntervalMs,
        ...(onEmptyQueue && { onEmpty: () => onEmptyQueue(queue) }),
      });
      this.workers.set(id, worker);
      worker.start(this.retiring.get(id));
    }
  }

  /** Lets in-flight requests finish within graceMs, records every outcome, closes the connections. */
  async stop(graceMs: number): Promise<void> {
    this.started = false;
    for (const clear of this.timers) clear();
    for (const [id, worker] of this.workers) this.retire(id, worker.stop(graceMs, 'daemon stopping'));
    this.workers.clear();
    await Promise.all(this.retiring.values());
    await this.writes.flushed();
    await this.sender.close();
    if (this.db.open) this.db.close();
  }

  private wakeAll(): void {
    this.reportQueueFull();
    for (const worker of this.workers.values()) worker.wake();
  }

  /**
   * Logs the queue-full dead letters the domain wrote (it cannot log inside its transaction), then clears their flag.
   */
  private reportQueueFull(): void {
    // Rows being marked reported still read as unreported until that write commits: wait for it, log nothing twice.
    if (this.reporting) return;
    try {
      const rows = this.deliveries.unreportedQueueFull(QUEUE_FULL_REPORT_BATCH);
      if (rows.length === 0) return;
      const capacity = this.config().webhookDelivery.queueCapacity;
      for (const row of rows) {
        this.observer.deadLetter(row, QUEUE_FULL);
        this.logger.error(
          {
            exceptionType: 'Webhook_QueueFull',
            eventId: row.eventId,
            siteId: row.siteId,
            webhookId: row.webhookId,
            eventType: row.eventType,
            queueCapacity: capacity,
          },
          'webhook queue full; event moved to the dead-letter list',
        );
      }
      this.reporting = true;
      this.writes
        .run([{ op: 'reported', ids: rows.map((r) => r.id) }])
        .then(() => rows.length === QUEUE_FULL_REPORT_BATCH && this.notify())
        .catch(() => undefined)
        .finally(() => (this.reporting = false));
    } catch (err) {
      this.logger.error({ err }, 'could not report queue-full dead letters');
    }
  }

  private retire(id: string, stopped: Promise<void>): void {
    const previous = this.retiring.get(id) ?? Promise.resolve();
    const done = Promise.all([previous, stopped]).then(() => {
      if (this.retiring.get(id) === done) this.retiring.delete(id);
    });
    this.retiring.set(id, done);
  }
}

import type { Config, EventType } from '../config/index.js';
import {
  appendEvent,
  subscribedWebhooks,
  type AppendedRecord,
  type OutboxEvent,
  type QueueKey,
} from '../outbox/index.js';
import type { Database, Writer } from '../store/index.js';
import { SiteDirectory } from './directory.js';
import { formatZonedTimestamp } from '../time/index.js';

/** Who hears of the events the domain appends to the outbox: webhook delivery. */
export interface EventListener {
  /**
   * The events of a change, before its commit: delivery may sign their requests beside the commit's fsync, and
   * takes up the rows counted for it. It sends only what it reads committed, so an event of a change that is undone
   * is never sent.
   */
  appended(events: readonly AppendedRecord[]): void;
  /** Events committed (a burst may be told once): delivery wakes up without polling. */
  committed(): void;
  /**
   * Asked per delivery row of a change: count its first attempt in the change's commit
   * (AppendOptions.countFirstAttempt)?
   */
  countsFirstAttempt(queue: QueueKey): boolean;
}

/**
 * What every part of the domain shares: the connection and its writer, the config as it is now, the clock, and
 * the two rules of the house: a state change and its events commit together, and delivery sends an event only
 * once it committed.
 */
export class SiteContext {
  private directoryCache: { config: Config; directory: SiteDirectory } | undefined;
  /** Events of the change being written, not yet told to the listener. */
  private readonly appended: AppendedRecord[] = [];
  /** commit() calls under way: only their events are told to the listener, so only theirs may be counted ahead. */
  private depth = 0;

  constructor(
    readonly db: Database,
    readonly writer: Writer,
    /** Read on every call so a SIGHUP reload takes effect at once. */
    readonly config: () => Config,
    readonly now: () => Date,
    private readonly listener: EventListener,
  ) {}

  get directory(): SiteDirectory {
    const config = this.config();
    if (this.directoryCache?.config !== config) this.directoryCache = { config, directory: new SiteDirectory(config) };
    return this.directoryCache.directory;
  }

  /** One SQLite transaction (or savepoint of the turn's group) for a state change and its events. */
  commit<T>(fn: () => T): T {
    const before = this.appended.length;
    this.depth += 1;
    try {
      const result = this.writer.write(fn);
      if (this.appended.length > before) this.announceEvents(this.appended.splice(before));
      return result;
    } finally {
      this.depth -= 1;
      // A change that threw was undone with its events.
      this.appended.length = before;
    }
  }

  /** Appends an event to the outbox, for every webhook of its site subscribed to its type; call inside commit(). */
  emit(event: OutboxEvent & { eventType: EventType }, now: Date): void {
    const config = this.config();
    const webhookIds = subscribedWebhooks(config, event.siteId, event.eventType);
    const appended = appendEvent(this.db, event, webhookIds, now, {
      queueCapacity: config.webhookDelivery.queueCapacity,
      // Not without a retry to spare: a counted row that its worker never took up (a crash before it was sent) reads
      // as attempted, and with maxRetries 0 it would go to the dead letters unsent.
      ...(this.depth > 0 &&
        config.webhookDelivery.maxRetries > 0 && {
          countFirstAttempt: (queue) => this.listener.countsFirstAttempt(queue),
        }),
    });
    if (webhookIds.length > 0) this.appended.push(appended);
  }

  /** A time as partners read it: the configured zone, the envelope's format. */
  zoned(at: Date): string {
    return formatZonedTimestamp(at, this.config().timezone);
  }

  /**
   * Tells delivery about new events now, and again once they have committed (the listener coalesces a burst into one
   * wake).
   */
  private announceEvents(events: AppendedRecord[]): void {
    this.listener.appended(events);
    if (!this.db.inTransaction) return this.listener.committed();
    this.writer.committed().then(
      () => this.listener.committed(),
      () => undefined,
    );
  }
}

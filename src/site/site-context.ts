import type { Config, EventType } from '../config/index.js';
import { appendEvent, subscribedWebhooks, type OutboxEvent } from '../outbox/index.js';
import type { Database, Writer } from '../store/index.js';
import { SiteDirectory } from './directory.js';
import { formatZonedTimestamp } from './zoned-timestamp.js';

/**
 * What every part of the domain shares: the connection and its writer, the config as it is now, the clock, and
 * the two rules of the house: a state change and its events commit together, and delivery hears of events only
 * once they committed.
 */
export class SiteContext {
  private directoryCache: { config: Config; directory: SiteDirectory } | undefined;
  private appended = 0;

  constructor(
    readonly db: Database,
    readonly writer: Writer,
    /** Read on every call so a SIGHUP reload takes effect at once. */
    readonly config: () => Config,
    readonly now: () => Date,
    private readonly onEventsCommitted: () => void,
  ) {}

  get directory(): SiteDirectory {
    const config = this.config();
    if (this.directoryCache?.config !== config) this.directoryCache = { config, directory: new SiteDirectory(config) };
    return this.directoryCache.directory;
  }

  /** One SQLite transaction (or savepoint of the turn's group) for a state change and its events. */
  commit<T>(fn: () => T): T {
    const before = this.appended;
    const result = this.writer.write(fn);
    if (this.appended !== before) this.announceEvents();
    return result;
  }

  /** Appends an event to the outbox, for every webhook of its site subscribed to its type; call inside commit(). */
  emit(event: OutboxEvent & { eventType: EventType }, now: Date): void {
    const config = this.config();
    appendEvent(this.db, event, subscribedWebhooks(config, event.siteId, event.eventType), now, { queueCapacity: config.webhookDelivery.queueCapacity });
    this.appended += 1;
  }

  /** A time as partners read it: the configured zone, the envelope's format. */
  zoned(at: Date): string {
    return formatZonedTimestamp(at, this.config().timezone);
  }

  /** Tells delivery about new events once they have committed (the listener coalesces a burst into one wake). */
  private announceEvents(): void {
    if (!this.db.inTransaction) return this.onEventsCommitted();
    this.writer.committed().then(
      () => this.onEventsCommitted(),
      () => undefined,
    );
  }
}

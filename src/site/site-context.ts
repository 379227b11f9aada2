import type { Config, EventType } from '../config/index.js';
import { appendEvent, subscribedWebhooks, type CountedDelivery, type OutboxEvent } from '../outbox/index.js';
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
  /** commit() calls under way: what a nested one appends is announced with the outermost, or dropped with it. */
  private depth = 0;
  /** Rows appended with their first attempt counted, not yet announced. */
  private counted: CountedDelivery[] = [];

  constructor(
    readonly db: Database,
    readonly writer: Writer,
    /** Read on every call so a SIGHUP reload takes effect at once. */
    readonly config: () => Config,
    readonly now: () => Date,
    private readonly onEventsCommitted: (counted: readonly CountedDelivery[]) => void,
    /** Count the first attempt of a delivery to an empty queue in the event's commit (AppendOptions.countFirstAttempt). */
    private readonly countFirstAttempt: boolean,
  ) {}

  get directory(): SiteDirectory {
    const config = this.config();
    if (this.directoryCache?.config !== config) this.directoryCache = { config, directory: new SiteDirectory(config) };
    return this.directoryCache.directory;
  }

  /** One SQLite transaction (or savepoint of the turn's group) for a state change and its events. */
  commit<T>(fn: () => T): T {
    const before = this.appended;
    const countedBefore = this.counted.length;
    this.depth += 1;
    let result: T;
    try {
      result = this.writer.write(fn);
    } catch (err) {
      // Undone: its rows are gone, and their ids may be given to other rows.
      this.counted.length = countedBefore;
      throw err;
    } finally {
      this.depth -= 1;
    }
    if (this.depth === 0 && this.appended !== before) this.announceEvents(this.counted.splice(0));
    return result;
  }

  /** Appends an event to the outbox, for every webhook of its site subscribed to its type; call inside commit(). */
  emit(event: OutboxEvent & { eventType: EventType }, now: Date): void {
    const config = this.config();
    const { counted } = appendEvent(this.db, event, subscribedWebhooks(config, event.siteId, event.eventType), now, {
      queueCapacity: config.webhookDelivery.queueCapacity,
      // Only inside commit(), which drops them if the change is undone; and only with a retry to spare: a row whose
      // word never reached its worker reads as attempted, and without retries it would go to the dead letters unsent.
      countFirstAttempt: this.countFirstAttempt && this.depth > 0 && config.webhookDelivery.maxRetries > 0,
    });
    this.counted.push(...counted);
    this.appended += 1;
  }

  /** A time as partners read it: the configured zone, the envelope's format. */
  zoned(at: Date): string {
    return formatZonedTimestamp(at, this.config().timezone);
  }

  /** Tells delivery about new events once they have committed (the listener coalesces a burst into one wake). */
  private announceEvents(counted: readonly CountedDelivery[]): void {
    if (!this.db.inTransaction) return this.onEventsCommitted(counted);
    this.writer.committed().then(
      () => this.onEventsCommitted(counted),
      () => undefined,
    );
  }
}

import type { Config } from '../config/index.js';
import { DirectWriter, type Database, type Writer } from '../store/index.js';
import { Authorizations } from './authorizations.js';
import { Connectors } from './connectors.js';
import type { SiteDirectory } from './directory.js';
import { SiteContext, type EventListener } from './site-context.js';
import { MeterReadings } from './meter-readings.js';
import { SignedReadings } from './signed-readings.js';
import { StationRegistry } from './station-registry.js';
import { Transactions } from './transactions.js';

export interface SiteOptions {
  db: Database;
  /** Read on every call so a SIGHUP reload takes effect at once. */
  config: () => Config;
  now?: () => Date;
  /** Who hears of the events the site appends: before their commit (to sign ahead) and after it (to send). */
  events?: EventListener;
  /**
   * What writes to db: the daemon's group commit (the changes of one event-loop turn commit together at its end;
   * callers answer for a change only through durable()). Without it each change commits before its method returns.
   */
  writer?: Writer;
}

/** How often the daemon writes the last-seen times of connected stations (the running daemon shows them live). */
export const LAST_SEEN_WRITE_MS = 3_600_000;

/**
 * The domain: stations, connectors, transactions (with their signed readings) and the events they cause, one part each. Every state change and
 * its events commit in one SQLite transaction, before the caller (an OCPP handler, the Modbus detector) answers
 * anyone. It knows no protocol.
 */
export class Site {
  readonly stations: StationRegistry;
  readonly connectors: Connectors;
  readonly authorizations: Authorizations;
  readonly transactions: Transactions;
  readonly signedReadings: SignedReadings;
  private readonly ctx: SiteContext;

  constructor(options: SiteOptions) {
    this.ctx = new SiteContext(
      options.db,
      options.writer ?? new DirectWriter(options.db),
      options.config,
      options.now ?? (() => new Date()),
      options.events ?? { appended: () => undefined, committed: () => undefined, countsFirstAttempt: () => false },
    );
    this.stations = new StationRegistry(this.ctx);
    this.connectors = new Connectors(this.ctx, this.stations);
    this.authorizations = new Authorizations(this.ctx, this.stations);
    this.signedReadings = new SignedReadings(this.ctx);
    this.transactions = new Transactions(
      this.ctx,
      this.connectors,
      this.authorizations,
      this.signedReadings,
      new MeterReadings(this.ctx),
    );
  }

  /** Who owns what, from the config as it is now. */
  get directory(): SiteDirectory {
    return this.ctx.directory;
  }

  /**
   * Runs fn (a station's call, say) and resolves with its result once every change it made is durable; rejects if a
   * commit of one of them failed (the change is undone, the caller answers with an error).
   */
  durable<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.ctx.writer.durable(fn);
  }

  /**
   * Runs fn as one write of the turn's commit: its domain calls and what the caller writes beside them (the uplink's
   * queue row for the message a change came from) are durable together, or undone together when fn throws.
   */
  together<T>(fn: () => T): T {
    return this.ctx.writer.write(fn);
  }

  /**
   * Runs fn as one write (its domain calls and whatever else it writes on this connection, such as a Modbus
   * detector's state) and commits it before returning: all of it is durable, or none of it (it throws).
   */
  inOneCommit<T>(fn: () => T): T {
    return this.ctx.writer.writeNow(fn);
  }
}

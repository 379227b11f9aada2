import type { Database } from './database.js';

/**
 * The one way a part writes to the database: whoever writes is handed its Writer by the composition root. The
 * daemon's is its GroupCommit (a turn's writes share one fsync); a CLI command or a test gets a DirectWriter.
 */
export interface Writer {
  readonly db: Database;
  /** Runs fn as one write (a savepoint inside a write already running). Durable once its commit settles. */
  write<T>(fn: () => T): T;
  /** Runs fn as one write and commits it before returning: durable, or it throws. */
  writeNow<T>(fn: () => T): T;
  /** Resolves with fn's result once every write fn made (also after its awaits) has committed. */
  durable<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Resolves once everything written so far has committed. */
  committed(): Promise<void>;
  /**
   * Tells listener, synchronously, whenever writes were undone: a write that threw (its savepoint rolled back) or a
   * group whose commit failed. What is kept in memory beside the rows (the open transactions) is forgotten on it.
   */
  onUndone(listener: () => void): void;
}

/** Each write is its own IMMEDIATE transaction, committed before it returns: for CLI commands, tools and tests. */
export class DirectWriter implements Writer {
  private readonly undoneListeners: Array<() => void> = [];

  constructor(readonly db: Database) {}

  write<T>(fn: () => T): T {
    try {
      // Inside a running transaction better-sqlite3 makes this a savepoint of it.
      return this.db.transaction(fn).immediate();
    } catch (err) {
      for (const listener of this.undoneListeners) listener();
      throw err;
    }
  }

  onUndone(listener: () => void): void {
    this.undoneListeners.push(listener);
  }

  writeNow<T>(fn: () => T): T {
    return this.write(fn);
  }

  async durable<T>(fn: () => T | Promise<T>): Promise<T> {
    return fn();
  }

  committed(): Promise<void> {
    return Promise.resolve();
  }
}

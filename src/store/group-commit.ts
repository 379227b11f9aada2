import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from './database.js';
import type { Writer } from './writer.js';
import { messageOf } from '../log/index.js';

/** Bookkeeping held back to share a later commit (GroupCommit.writeHeld). */
interface Held {
  fn: () => void;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * How long held bookkeeping waits for a commit to share before it commits on its own (docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear): a kill -9 or power loss within it costs repeated deliveries, never a lost one.
 */
export const HOLD_MS = 2000;

interface OpenGroup {
  /** Committed with an fsync (synchronous=FULL), or left to the next one (NORMAL: survives a crash, not power loss). */
  synced: boolean;
  /** The connection's total_changes() when the group began: a synced group that changed no row has no fsync to share. */
  changesAtBegin: number;
  committed: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: the writes of one turn of the event loop share one transaction and one fsync, committed when the
 * turn ends. A burst of station calls then costs one commit instead of one each, and holds the write lock (which
 * the delivery thread needs too) for one fsync. Each write is a savepoint of the group (a write that throws undoes
 * only itself). Whoever answers for a write (an OCPP reply) waits for it through durable(), so nobody hears of a
 * change before it is durable.
 */
export class GroupCommit implements Writer {
  private open: OpenGroup | undefined;
  private depth = 0;
  /** The commits that the writes made inside durable() belong to, followed across awaits. */
  private readonly tracked = new AsyncLocalStorage<Set<Promise<void>>>();
  private failure: { at: Date; error: string } | undefined;
  /** The connection's synchronous level: FULL (openDatabase sets it) until an unsynced group lowers it. */
  private synced = true;
  /**
   * Bookkeeping waiting for a commit to share: none while an unsynced group is open (it takes them as it opens); while
   * a synced one is, until it commits.
   */
  private readonly held: Held[] = [];
  private holdTimer: NodeJS.Timeout | undefined;
  private readonly totalChanges;
  /** Told just before the open group's COMMIT (beforeCommit). */
  private committing: Array<() => void> = [];
  private readonly undoneListeners: Array<() => void> = [];

  constructor(
    readonly db: Database,
    private readonly holdMs = HOLD_MS,
  ) {
    this.totalChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
  }

  /** Runs fn inside this turn's transaction, opening it (BEGIN IMMEDIATE) if needed; its commit is fsynced. */
  write<T>(fn: () => T): T {
    return this.inGroup(true, fn);
  }

  /**
   * Like write, for bookkeeping whose loss on power loss costs a repeated delivery, never a lost event (delivery
   * attempts, delivered marks, executor statistics). Alone in a turn it commits without an fsync: the next synced
   * commit makes it durable too (the WAL is written in order). In a synced group it is synced with it.
   */
  writeUnsynced<T>(fn: () => T): T {
    return this.inGroup(false, fn);
  }

  /**
   * Like writeUnsynced, for bookkeeping that may also wait. It joins an unsynced group open now; else it is held in
   * memory and written in the next commit that happens anyway: a synced group that changed something (a station's
   * change, whose fsync it shares, and many of whose pages it rewrites anyway) or an unsynced one (a delivery attempt
   * counted); or in a group of its own after holdMs or at flushHeld(). Held writes keep their order with the other
   * bookkeeping: they are written before it. Resolves once committed; rejects if fn threw or its commit failed.
   */
  writeHeld(fn: () => void): Promise<void> {
    if (this.open && !this.open.synced) {
      try {
        this.writeUnsynced(fn);
      } catch (err) {
        return Promise.reject(err);
      }
      return this.committed();
    }
    return new Promise((resolve, reject) => {
      this.held.push({ fn, resolve, reject });
      this.holdTimer ??= setTimeout(() => {
        this.holdTimer = undefined;
        this.flushHeld();
      }, this.holdMs).unref();
    });
  }

  /** Writes the held bookkeeping now, in the open group or one of its own, committed at the end of this turn. */
  flushHeld(): void {
    if (this.held.length === 0 || this.writing) return;
    try {
      if (this.open) this.takeHeld(this.open);
      else this.begin(false);
    } catch (err) {
      // The write lock was not to be had (another process holding it past the busy wait): the waiters hear of it.
      clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
      for (const held of this.held.splice(0)) held.reject(err);
    }
  }

  private inGroup<T>(synced: boolean, fn: () => T): T {
    // SQLite fixes a transaction's safety level at BEGIN: an unsynced group commits as it is (cheap, no fsync)
    // before a write that must be durable starts a synced one. (A write nested in another joins it, as it must.)
    if (synced && this.open && !this.open.synced && !this.writing) this.commitQuietly();
    // Other bookkeeping comes after what was held before it (a failed attempt's mark before the next attempt's count).
    if (!synced && this.open && !this.writing) this.takeHeld(this.open);
    if (!this.open) this.begin(synced);
    const open = this.open!;
    this.tracked.getStore()?.add(open.committed);
    this.depth += 1;
    try {
      return this.db.transaction(fn)();
    } catch (err) {
      this.tellUndone();
      // On SQLITE_FULL, IOERR or BUSY SQLite rolls the whole transaction back by itself: the group's earlier writes
      // are gone too. Fail it now, so the next write starts a fresh group instead of committing on its own.
      if (!this.db.inTransaction && this.open === open) this.fail(open, err);
      throw err;
    } finally {
      this.depth -= 1;
    }
  }

  /**
   * Runs fn in this turn's transaction and commits the group before returning (inside a write, fn joins that write).
   */
  writeNow<T>(fn: () => T): T {
    const result = this.write(fn);
    if (!this.writing) this.commitNow();
    return result;
  }

  /**
   * Runs fn and resolves with its result once every write fn made (also after its awaits) has committed; rejects
   * with the failure if one of those commits failed. What answers a station waits for this: its own writes, not
   * whatever group happens to be open when it asks.
   */
  async durable<T>(fn: () => T | Promise<T>): Promise<T> {
    const commits = new Set<Promise<void>>();
    const result = await this.tracked.run(commits, fn);
    await Promise.all(commits);
    return result;
  }

  /** The last commit's failure while no commit has succeeded since: storage is not taking writes. */
  get lastFailure(): { at: Date; error: string } | undefined {
    return this.failure;
  }

  /** True while a write runs: whatever it calls belongs to it, and the group cannot commit in the middle of it. */
  get writing(): boolean {
    return this.depth > 0;
  }

  /**
   * Resolves once everything written so far in this turn has committed; rejects if that commit failed (the writes are
   * undone).
   */
  committed(): Promise<void> {
    return this.open?.committed ?? Promise.resolve();
  }

  /**
   * Runs fn once, just before the open group commits (or fails), at once when no group is open: whoever collects what
   * a turn's writes did (delivery, told of their events) passes it on once per group instead of once per write.
   */
  beforeCommit(fn: () => void): void {
    if (this.open) this.committing.push(fn);
    else fn();
  }

  onUndone(listener: () => void): void {
    this.undoneListeners.push(listener);
  }

  private tellUndone(): void {
    for (const listener of this.undoneListeners) listener();
  }

  /** Commits the open group now; throws what the commit threw. */
  commitNow(): void {
    const open = this.open;
    if (!open) return;
    if (this.writing) throw new Error('cannot commit a group from inside one of its writes');
    this.tellCommitting();
    // A synced group that changed something commits with an fsync: held bookkeeping shares it (a fatal error in it, a
    // full disk, would have failed this commit too).
    if (open.synced && this.totalChanges.get() !== open.changesAtBegin) {
      const undone = this.takeHeld(open);
      if (undone) throw undone.error;
    }
    this.open = undefined;
    try {
      this.db.exec('COMMIT');
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.fail(open, err);
      throw err;
    }
    this.failure = undefined;
    open.resolve();
  }

  private fail(open: OpenGroup, err: unknown): void {
    if (this.open === open) this.open = undefined;
    this.tellUndone();
    this.tellCommitting();
    this.failure = { at: new Date(), error: messageOf(err) };
    open.reject(err);
  }

  /** Opens a group; an unsynced one takes the held bookkeeping first (anew if one of them undid the group). */
  private begin(synced: boolean): void {
    do {
      if (this.synced !== synced) {
        this.db.pragma(`synchronous = ${synced ? 'FULL' : 'NORMAL'}`);
        this.synced = synced;
      }
      this.db.exec('BEGIN IMMEDIATE');
      let settle!: Pick<OpenGroup, 'resolve' | 'reject'>;
      const committed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
      // Waiters get the failure; an unwaited group must not crash the process with an unhandled rejection.
      committed.catch(() => undefined);
      const open: OpenGroup = { synced, changesAtBegin: this.totalChanges.get()!, committed, ...settle };
      this.open = open;
      setImmediate(() => this.commitQuietly());
      if (!synced) this.takeHeld(open);
    } while (!this.open);
  }

  /**
   * Writes the held bookkeeping into the open group, each as a savepoint of it. Returns the error of one that undid the
   * whole group (which is then failed), if one did.
   */
  private takeHeld(open: OpenGroup): { error: unknown } | undefined {
    if (this.held.length === 0) return undefined;
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    while (this.held.length > 0) {
      const held = this.held.shift()!;
      this.depth += 1;
      try {
        this.db.transaction(held.fn)();
        open.committed.then(held.resolve, held.reject);
      } catch (err) {
        this.tellUndone();
        held.reject(err);
        // SQLite rolled the whole group back (SQLITE_FULL, IOERR): the rest wait for the next group.
        if (!this.db.inTransaction) {
          this.fail(open, err);
          return { error: err };
        }
      } finally {
        this.depth -= 1;
      }
    }
    return undefined;
  }

  private tellCommitting(): void {
    for (const fn of this.committing.splice(0)) {
      try {
        fn();
      } catch (err) {
        // Not the commit's failure: thrown where nothing catches it, as if fn had run on its own.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  private commitQuietly(): void {
    try {
      this.commitNow();
    } catch {
      // Reported to the waiters through committed().
    }
  }
}

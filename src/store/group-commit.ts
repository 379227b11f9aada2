import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database } from './database.js';
import type { Writer } from './writer.js';
import { messageOf } from '../log/index.js';

interface OpenGroup {
  /** Committed with an fsync (synchronous=FULL), or left to the next one (NORMAL: survives a crash, not power loss). */
  synced: boolean;
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

  constructor(readonly db: Database) {}

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

  private inGroup<T>(synced: boolean, fn: () => T): T {
    // SQLite fixes a transaction's safety level at BEGIN: an unsynced group commits as it is (cheap, no fsync)
    // before a write that must be durable starts a synced one. (A write nested in another joins it, as it must.)
    if (synced && this.open && !this.open.synced && !this.writing) this.commitQuietly();
    if (!this.open) this.begin(synced);
    const open = this.open!;
    this.tracked.getStore()?.add(open.committed);
    this.depth += 1;
    try {
      return this.db.transaction(fn)();
    } catch (err) {
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

  /** Commits the open group now; throws what the commit threw. */
  commitNow(): void {
    const open = this.open;
    if (!open) return;
    if (this.writing) throw new Error('cannot commit a group from inside one of its writes');
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
    this.failure = { at: new Date(), error: messageOf(err) };
    open.reject(err);
  }

  private begin(synced: boolean): void {
    if (this.synced !== synced) {
      this.db.pragma(`synchronous = ${synced ? 'FULL' : 'NORMAL'}`);
      this.synced = synced;
    }
    this.db.exec('BEGIN IMMEDIATE');
    let settle!: Pick<OpenGroup, 'resolve' | 'reject'>;
    const committed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    // Waiters get the failure; an unwaited group must not crash the process with an unhandled rejection.
    committed.catch(() => undefined);
    this.open = { synced, committed, ...settle };
    setImmediate(() => this.commitQuietly());
  }

  private commitQuietly(): void {
    try {
      this.commitNow();
    } catch {
      // Reported to the waiters through committed().
    }
  }
}

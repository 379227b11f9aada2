import type { Database } from './database.js';

interface OpenGroup {
  committed: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** The group transaction open on a connection, if any: inTransaction() commits it before returning. */
const openGroups = new WeakMap<Database, GroupCommit>();

/**
 * Group commit: the writes of one turn of the event loop share one transaction and one fsync, committed when the
 * turn ends. A burst of station calls then costs one commit instead of one each, and holds the write lock (which
 * the delivery thread needs too) for one fsync. Each write is a savepoint of the group (a write that throws undoes
 * only itself). Whoever answers for a write (an OCPP reply) waits for committed() first, so nobody hears of a
 * change before it is durable.
 */
export class GroupCommit {
  private open: OpenGroup | undefined;
  private depth = 0;

  constructor(private readonly db: Database) {}

  /** Runs fn inside this turn's transaction, opening it (BEGIN IMMEDIATE) if needed. */
  write<T>(fn: () => T): T {
    if (!this.open) this.begin();
    this.depth += 1;
    try {
      return this.db.transaction(fn)();
    } finally {
      this.depth -= 1;
    }
  }

  /** True while a write runs: whatever it calls belongs to it, and the group cannot commit in the middle of it. */
  get writing(): boolean {
    return this.depth > 0;
  }

  /** Resolves once everything written so far has committed; rejects if that commit failed (the writes are undone). */
  committed(): Promise<void> {
    return this.open?.committed ?? Promise.resolve();
  }

  /** Commits the open group now; throws what the commit threw. */
  commitNow(): void {
    const open = this.open;
    if (!open) return;
    if (this.writing) throw new Error('cannot commit a group from inside one of its writes');
    this.open = undefined;
    openGroups.delete(this.db);
    try {
      this.db.exec('COMMIT');
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      open.reject(err);
      throw err;
    }
    open.resolve();
  }

  private begin(): void {
    this.db.exec('BEGIN IMMEDIATE');
    let settle!: Pick<OpenGroup, 'resolve' | 'reject'>;
    const committed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    // Waiters get the failure; an unwaited group must not crash the process with an unhandled rejection.
    committed.catch(() => undefined);
    this.open = { committed, ...settle };
    openGroups.set(this.db, this);
    setImmediate(() => {
      try {
        this.commitNow();
      } catch {
        // Reported to the waiters through committed().
      }
    });
  }
}

/** The group transaction open on db, for inTransaction() to join and commit. */
export function openGroupOf(db: Database): GroupCommit | undefined {
  return openGroups.get(db);
}

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { migrate } from './migrations.js';

export type Database = BetterSqlite3.Database;

export const DATABASE_FILE = 'chargegate.db';

const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Opens (creating when needed) the one SQLite database under dataDir and brings its schema up to date.
 * The daemon and CLI commands open it at the same time: WAL lets readers run beside the one writer, and
 * busy_timeout makes a second writer wait for the lock instead of failing.
 */
export function openDatabase(dataDir: string, options: { readonly?: boolean; busyTimeoutMs?: number } = {}): Database {
  mkdirSync(dataDir, { recursive: true, mode: 0o750 });
  const db = new BetterSqlite3(path.join(dataDir, DATABASE_FILE), { fileMustExist: options.readonly === true, readonly: options.readonly === true });
  // SQLite waits for a lock another process holds by sleeping the calling thread: a CLI command may wait; the
  // daemon passes a short time, since its event loop serves every station.
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
  if (!options.readonly) {
    // Takes effect on a new file; an existing one is converted once by useIncrementalVacuum().
    db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    // After a checkpoint the WAL file is cut back to this size: a burst does not leave it large for ever.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    // Events are acknowledged to stations only after commit: FULL makes the commit survive power loss, not just a crash.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db);
  }
  return db;
}

/**
 * Runs fn in one IMMEDIATE transaction: the write lock is taken up front, so concurrent writers queue instead of
 * deadlocking. For a process with no Writer of its own (a migration, a tool); the daemon's parts write through theirs.
 */
export function inTransaction<T>(db: Database, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/**
 * Puts a database made before auto_vacuum=INCREMENTAL into that mode (one VACUUM, which rewrites the file), so
 * pruning gives space back; true when it converted. The daemon runs it at start, before anything else writes.
 */
export function useIncrementalVacuum(db: Database): boolean {
  if (db.pragma('auto_vacuum', { simple: true }) === 2) return false;
  db.pragma('auto_vacuum = INCREMENTAL');
  db.exec('VACUUM');
  return true;
}

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Migration } from './migration-list.js';
import { migrate } from './migrations.js';
import { storageOpenFailure } from './storage-errors.js';

export type Database = BetterSqlite3.Database;

export const DATABASE_FILE = 'chargegate.db';

const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;
const PAGE_SIZE_BYTES = 1024;
/**
 * Pages in the WAL before it is checkpointed: ~4 MB of 1 KiB pages (24-byte frame headers), within
 * WAL_SIZE_LIMIT_BYTES. A checkpoint copies each page the commits since the last one touched, and most commits touch
 * the same few (index edges, counters): SQLite's default of 1,000 copied them four times as often, ~1.4 KB per event
 * at a site's pace instead of ~0.7 (docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear).
 */
const WAL_CHECKPOINT_PAGES = 3800;

/**
 * Opens (creating when needed) the one SQLite database under dataDir and brings its schema up to date.
 * The daemon and CLI commands open it at the same time: WAL lets readers run beside the one writer, and
 * busy_timeout makes a second writer wait for the lock instead of failing.
 */
export function openDatabase(dataDir: string, options: OpenOptions = {}): Database {
  const file = path.join(dataDir, DATABASE_FILE);
  let db: Database | undefined;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o750 });
    db = new BetterSqlite3(file, { fileMustExist: options.readonly === true, readonly: options.readonly === true });
    prepare(db, options);
    return db;
  } catch (err) {
    db?.close();
    throw storageOpenFailure(err, dataDir, file);
  }
}

export interface OpenOptions {
  readonly?: boolean;
  busyTimeoutMs?: number;
  /** Told which migrations this open applied (none: not called). */
  migrated?: (applied: Migration[]) => void;
}

function prepare(db: Database, options: OpenOptions): void {
  // SQLite waits for a lock another process holds by sleeping the calling thread: a CLI command may wait; the
  // daemon passes a short time, since its event loop serves every station.
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
  if (!options.readonly) {
    // Both take effect on a new file; convertStorageLayout() converts an existing one once.
    db.pragma(`page_size = ${PAGE_SIZE_BYTES}`);
    db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    // After a checkpoint the WAL file is cut back to this size: a burst does not leave it large for ever.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
    // Events are acknowledged to stations only after commit: FULL makes the commit survive power loss, not just a
    // crash.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    const applied = migrate(db);
    if (applied.length > 0) options.migrated?.(applied);
  }
}

/**
 * Runs fn in one IMMEDIATE transaction: the write lock is taken up front, so concurrent writers queue instead of
 * deadlocking. For a process with no Writer of its own (a migration, a tool); the daemon's parts write through theirs.
 */
export function inTransaction<T>(db: Database, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/**
 * What a database made by an earlier version lacks, and convertStorageLayout() gives it: incremental vacuum (pruning
 * gives space back) and 1 KiB pages (a commit rewrites whole pages: with 4 KiB ones an event cost 16 KB written,
 * with 1 KiB 8 KB; scripts/bench/README.md).
 */
export interface LayoutChange {
  autoVacuum?: 'incremental';
  pageSizeBytes?: { from: number; to: number };
}

/**
 * Converts a database to the current layout with one VACUUM (which rewrites the file), outside WAL mode since WAL
 * cannot change the page size. The daemon runs it at start, holding the data dir, before anything else writes;
 * undefined when there was nothing to do.
 */
export function convertStorageLayout(db: Database): LayoutChange | undefined {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const change: LayoutChange = {
    ...(db.pragma('auto_vacuum', { simple: true }) !== 2 && { autoVacuum: 'incremental' as const }),
    ...(pageSize !== PAGE_SIZE_BYTES && { pageSizeBytes: { from: pageSize, to: PAGE_SIZE_BYTES } }),
  };
  if (Object.keys(change).length === 0) return undefined;
  db.pragma('journal_mode = DELETE');
  try {
    db.pragma(`page_size = ${PAGE_SIZE_BYTES}`);
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
  } finally {
    db.pragma('journal_mode = WAL');
  }
  return change;
}

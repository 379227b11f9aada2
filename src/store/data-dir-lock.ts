import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { storageOpenFailure } from './storage-errors.js';
import { ChargegateError } from '../errors/index.js';

const LOCK_FILE = 'chargegate.lock';
const HOLDER_FILE = 'chargegate.pid';

/** A second daemon on a data directory another one holds: both would poll the same meters and bill twice. */
export class DataDirInUseError extends ChargegateError {
  override name = 'DataDirInUseError';
  readonly code = 'CHARGEGATE_DATA_DIR_IN_USE';
}

export interface DataDirLock {
  /** Adds what other processes may want to know of the holder (the ports it listens on) to the holder file. */
  announce(details: Record<string, unknown>): void;
  release(): void;
}

/** The process holding a data directory, as it describes itself in the holder file. */
export interface DataDirHolder {
  pid: number;
  since: string;
  httpPort?: number;
  ocppPort?: number;
}

/**
 * Takes the data directory for this process: an exclusive SQLite lock on `chargegate.lock`, held until release
 * or until the process dies, when the OS drops it (kill -9 and power loss leave no stale lock). Who holds it
 * is written beside it, since the lock file itself cannot be read while locked.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  let lock: BetterSqlite3.Database;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o750 });
    // timeout 0: a held lock answers at once instead of after better-sqlite3's 5 s busy wait.
    lock = new BetterSqlite3(file, { timeout: 0 });
  } catch (err) {
    throw storageOpenFailure(err, dataDir, file);
  }
  try {
    lock.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw storageOpenFailure(err, dataDir, file);
    throw new DataDirInUseError(
      `${path.resolve(dataDir)} is in use by another chargegate (${holderOf(dataDir)}): stop that one first, or give this one another dataDir`,
    );
  }
  const holder = path.join(dataDir, HOLDER_FILE);
  const self = { pid: process.pid, since: new Date().toISOString() };
  writeFileSync(holder, `${JSON.stringify(self)}\n`);
  return {
    announce(details) {
      writeFileSync(holder, `${JSON.stringify({ ...self, ...details })}\n`);
    },
    release() {
      if (!lock.open) return;
      rmSync(holder, { force: true });
      lock.close();
    },
  };
}

/** Who holds dataDir, from its holder file; undefined when no process that is still alive wrote one. */
export function dataDirHolder(dataDir: string): DataDirHolder | undefined {
  let holder: DataDirHolder;
  try {
    holder = JSON.parse(readFileSync(path.join(dataDir, HOLDER_FILE), 'utf8')) as DataDirHolder;
  } catch {
    return undefined;
  }
  // kill -9 and power loss leave the file behind: a holder that no longer runs holds nothing.
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return undefined;
  }
  return holder;
}

function holderOf(dataDir: string): string {
  const holder = dataDirHolder(dataDir);
  return holder ? `pid ${holder.pid}, running since ${holder.since}` : 'its pid is not known yet';
}

import path from 'node:path';
import { ChargegateError } from '../errors/index.js';

/** The data dir cannot hold chargegate's files: missing rights, a file in its place, a read-only file system. */
export class DataDirUnusableError extends ChargegateError {
  override name = 'DataDirUnusableError';
  readonly code = 'CHARGEGATE_DATA_DIR_UNUSABLE';
}

/** The database file is not a SQLite database, or a damaged one. */
export class DatabaseDamagedError extends ChargegateError {
  override name = 'DatabaseDamagedError';
  readonly code = 'CHARGEGATE_DATABASE_DAMAGED';
}

const DATA_DIR_CODES = new Set(['SQLITE_CANTOPEN', 'SQLITE_READONLY', 'EACCES', 'EPERM', 'ENOTDIR', 'EEXIST', 'EROFS']);

/**
 * Opening something under dataDir failed: the failures an installer can fix become one line naming the path and
 * what to do (the original error as `cause`); anything else is returned as it is.
 */
export function storageOpenFailure(err: unknown, dataDir: string, file: string): unknown {
  const code = (err as { code?: unknown }).code;
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return new DatabaseDamagedError(
      `database ${file} is damaged (${(err as Error).message}): restore it from a backup, or move it aside to start with an empty one`,
      {
        cause: err,
      },
    );
  }
  if (typeof code === 'string' && DATA_DIR_CODES.has(code)) {
    return new DataDirUnusableError(
      `data dir ${path.resolve(dataDir)}: ${(err as Error).message}: dataDir must be a directory the chargegate user can write`,
      { cause: err },
    );
  }
  return err;
}

import path from 'node:path';
import type { Config } from '../config/index.js';
import { DATABASE_FILE } from '../store/index.js';

/**
 * The one line an installer reads when `chargegate run` cannot start for a reason they can fix (contract section
 * 7): what, where (path or port) and what to do. Undefined for anything else, which is a bug and keeps its stack.
 */
export function describeStartupFailure(err: unknown, config: Config): string | undefined {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  const code = typeof e?.code === 'string' ? e.code : '';
  // chargegate's own errors (keystore, TLS files, a data dir another daemon holds) already say it in one line.
  if (code.startsWith('CHARGEGATE_')) return e.message;
  if (e?.syscall === 'listen') {
    const where = `${e.address ?? '?'}:${e.port ?? '?'}`;
    const key = e.port === config.ocpp.port ? 'ocpp.port' : 'http.port';
    if (code === 'EADDRINUSE') return `cannot listen on ${where}: the port is in use. Is chargegate already running? Otherwise free the port or change ${key}`;
    if (code === 'EACCES') return `cannot listen on ${where}: permission denied (ports below 1024 need privileges): change ${key}`;
    if (code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: this machine has no such address: change ${key.replace('port', 'host')}`;
  }
  const database = path.join(config.dataDir, DATABASE_FILE);
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB')
    return `database ${database} is damaged (${e.message}): restore it from a backup, or move it aside to start with an empty one`;
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || ['EACCES', 'EPERM', 'ENOTDIR', 'EEXIST', 'EROFS'].includes(code)) {
    return `data dir ${path.resolve(config.dataDir)}: ${e.message}: dataDir must be a directory the chargegate user can write`;
  }
  return undefined;
}

import type BetterSqlite3 from 'better-sqlite3';
import type { Database } from './database.js';

const caches = new WeakMap<Database, Map<string, BetterSqlite3.Statement>>();

/**
 * The prepared statement for this SQL on this connection, prepared once. Preparing on every call cost the OCPP hot
 * path about an eighth of its CPU in the benchmarks.
 */
export function statement(db: Database, sql: string): BetterSqlite3.Statement {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  let prepared = cache.get(sql);
  if (!prepared) cache.set(sql, (prepared = db.prepare(sql)));
  return prepared;
}

import type BetterSqlite3 from 'better-sqlite3';
import type { Database } from './database.js';

const caches = new WeakMap<Database, Map<string, BetterSqlite3.Statement>>();

/**
 * The prepared statement for this SQL on this connection, prepared once, typed by its parameters and the row its SELECT
 * returns (`statement<[string], Transaction>(db, 'SELECT ... WHERE id = ?').get(id)` is a Transaction | undefined).
 * Preparing on every call cost the OCPP hot path about an eighth of its CPU in the benchmarks.
 */
export function statement<Params extends unknown[] = unknown[], Row = unknown>(
  db: Database,
  sql: string,
): BetterSqlite3.Statement<Params, Row> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  let prepared = cache.get(sql);
  if (!prepared) cache.set(sql, (prepared = db.prepare(sql)));
  // One cache serves every row type: the SQL text decides the shape, the caller names it once, here.
  return prepared as BetterSqlite3.Statement<Params, Row>;
}

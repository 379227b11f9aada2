import { openDatabase, type Database } from '../store/index.js';

/**
 * Delivery bookkeeping (attempt counts, outcomes, executor stats) gets its own connection with
 * synchronous=NORMAL. In WAL mode that still survives a process crash (kill -9) completely; only a power loss
 * may forget the last outcomes, which then means a repeated request, never a lost event: events and their
 * delivery rows are written by the domain's connection with synchronous=FULL. It spares one fsync per request.
 */
export function openDeliveryDatabase(dataDir: string): Database {
  const db = openDatabase(dataDir);
  db.pragma('synchronous = NORMAL');
  return db;
}

import { inTransaction, type Database } from '../store/index.js';

export interface PruneResult {
  deliveries: number;
  events: number;
}

/**
 * Forgets what partners already have: delivered deliveries last touched before `olderThan`, then events older than
 * that with no delivery left. Pending deliveries and dead letters are never touched. Works in small batches so the
 * write lock is never held long against stations waiting for their answers.
 */
export function pruneDelivered(db: Database, olderThan: Date, batchSize = 2000): PruneResult {
  const cutoff = olderThan.toISOString();
  const deleteDeliveries = db.prepare("DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE state = 'delivered' AND updated_at < ? LIMIT ?)");
  const deleteEvents = db.prepare(
    'DELETE FROM events WHERE seq IN (SELECT seq FROM events e WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = e.seq) LIMIT ?)',
  );
  const drain = (stmt: typeof deleteDeliveries): number => {
    let total = 0;
    for (;;) {
      const { changes } = inTransaction(db, () => stmt.run(cutoff, batchSize));
      total += changes;
      if (changes < batchSize) return total;
    }
  };
  return { deliveries: drain(deleteDeliveries), events: drain(deleteEvents) };
}

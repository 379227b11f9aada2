import { deleteInBatches, type Writer } from '../store/index.js';

export interface PruneResult {
  deliveries: number;
  events: number;
}

/**
 * Forgets what partners already have: delivered deliveries last touched before `olderThan`, then events older than
 * that with no delivery left. Pending deliveries and dead letters are never touched.
 */
export function pruneDelivered(writer: Writer, olderThan: Date, batchSize = 2000): PruneResult {
  const cutoff = olderThan.toISOString();
  return {
    deliveries: deleteInBatches(
      writer,
      "DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE state = 'delivered' AND updated_at < ? LIMIT ?)",
      cutoff,
      batchSize,
    ),
    events: deleteInBatches(
      writer,
      'DELETE FROM events WHERE seq IN (SELECT seq FROM events e WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = e.seq) LIMIT ?)',
      cutoff,
      batchSize,
    ),
  };
}

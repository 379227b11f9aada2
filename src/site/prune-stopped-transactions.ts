import { deleteInBatches, type Writer } from '../store/index.js';

/**
 * Forgets transactions stopped before `olderThan` (store.retainStoppedTransactionsDays). Open transactions are
 * never touched; ids are never reused (AUTOINCREMENT).
 */
export function pruneStoppedTransactions(writer: Writer, olderThan: Date, batchSize = 2000): number {
  return deleteInBatches(
    writer,
    'DELETE FROM transactions WHERE id IN (SELECT id FROM transactions WHERE stopped_at IS NOT NULL AND stopped_at < ? LIMIT ?)',
    olderThan.toISOString(),
    batchSize,
  );
}

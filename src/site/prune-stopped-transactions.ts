import { deleteInBatches, type Writer } from '../store/index.js';

/**
 * Forgets transactions stopped before `olderThan` (store.retainStoppedTransactionsDays), their readings with them.
 * Open transactions are never touched; ids are never reused (AUTOINCREMENT). Also the signed readings of a 2.0.1
 * transaction no event ever named the driver of, received before `olderThan`: nothing else would ever end them.
 * Returns the transactions forgotten.
 */
export function pruneStoppedTransactions(writer: Writer, olderThan: Date, batchSize = 2000): number {
  deleteInBatches(
    writer,
    'DELETE FROM signed_readings WHERE id IN (SELECT id FROM signed_readings WHERE transaction_id IS NULL AND received_at < ? LIMIT ?)',
    olderThan.toISOString(),
    batchSize,
  );
  return deleteInBatches(
    writer,
    'DELETE FROM transactions WHERE id IN (SELECT id FROM transactions WHERE stopped_at IS NOT NULL AND stopped_at < ? LIMIT ?)',
    olderThan.toISOString(),
    batchSize,
  );
}

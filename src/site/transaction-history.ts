import { statement, type Database } from '../store/index.js';
import { TRANSACTION_COLUMNS, type Transaction } from './transactions.js';

export interface TransactionFilter {
  /** Started at or after (inclusive). */
  from?: Date;
  /** Started before (exclusive). */
  to?: Date;
  status?: 'open' | 'stopped';
  /** Only transactions with a larger id: the next page after the last one seen. */
  afterId?: number;
  limit: number;
}

/**
 * Transactions in id order (the order they started in), for reconciliation (GET /transactions). Times are compared
 * as instants: the stored ISO strings are all UTC with milliseconds, so they sort as text.
 */
export function transactionHistory(db: Database, filter: TransactionFilter): Transaction[] {
  const status = filter.status === 'open' ? 'AND stopped_at IS NULL' : filter.status === 'stopped' ? 'AND stopped_at IS NOT NULL' : '';
  return statement<[number, string, string, number], Transaction>(
    db,
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions
      WHERE id > ? AND started_at >= ? AND started_at < ? ${status}
      ORDER BY id LIMIT ?`,
  ).all(filter.afterId ?? 0, filter.from?.toISOString() ?? '', filter.to?.toISOString() ?? '9999', filter.limit);
}

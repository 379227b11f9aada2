import type { Logger } from '../log/index.js';
import { statement, type Writer } from '../store/index.js';

export interface PruneResult {
  deliveries: number;
  events: number;
}

/**
 * Forgets what partners already have: delivered deliveries last touched before `olderThan`, then events older than
 * that with no delivery left. Pending deliveries and dead letters are never touched. Works in small batches so the
 * write lock is never held long against stations waiting for their answers.
 */
export function pruneDelivered(writer: Writer, olderThan: Date, batchSize = 2000): PruneResult {
  const cutoff = olderThan.toISOString();
  const { db } = writer;
  const deleteDeliveries = statement(db, "DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE state = 'delivered' AND updated_at < ? LIMIT ?)");
  const deleteEvents = statement(
    db,
    'DELETE FROM events WHERE seq IN (SELECT seq FROM events e WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = e.seq) LIMIT ?)',
  );
  const drain = (stmt: typeof deleteDeliveries): number => {
    let total = 0;
    for (;;) {
      const { changes } = writer.writeNow(() => stmt.run(cutoff, batchSize));
      total += changes;
      if (changes < batchSize) return total;
    }
  };
  return { deliveries: drain(deleteDeliveries), events: drain(deleteEvents) };
}

/** Prunes a minute after start, then hourly, keeping `retainDays()` days of delivered events; returns a stop function. */
export function scheduleOutboxRetention(options: { writer: Writer; retainDays: () => number; logger: Logger }): () => void {
  const { writer, logger } = options;
  const prune = (): void => {
    try {
      const pruned = pruneDelivered(writer, new Date(Date.now() - options.retainDays() * 86_400_000));
      if (pruned.deliveries + pruned.events > 0) logger.info({ prunedDeliveries: pruned.deliveries, prunedEvents: pruned.events }, 'pruned delivered outbox rows');
    } catch (err) {
      logger.error({ err }, 'pruning delivered outbox rows failed; tried again in an hour');
    }
  };
  const first = setTimeout(prune, 60_000).unref();
  const hourly = setInterval(prune, 3_600_000).unref();
  return () => {
    clearTimeout(first);
    clearInterval(hourly);
  };
}

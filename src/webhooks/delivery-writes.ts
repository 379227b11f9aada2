// Both threads: the delivery thread makes these writes, the main thread applies them.
import { RETRIES_EXHAUSTED, type DeliveryStore, type QueueKey } from '../outbox/index.js';
import type { ExecutorStatsStore, RequestRecord } from './main-thread/executor-stats.js';

/**
 * The outbox writes delivery makes, as data. The delivery thread only reads the database; it sends these to the
 * daemon, whose connection applies them inside its group commit. One writer means the thread never waits for
 * the write lock while stations keep the daemon's transactions coming. Times are epoch ms.
 */
export type DeliveryWrite =
  | { op: 'startAttempt'; id: number; nextAttemptAt: number; at: number }
  | { op: 'releaseAttempt'; id: number; attempts: number; nextAttemptAt: number; at: number }
  | { op: 'delivered'; id: number; status: number; at: number }
  | { op: 'failed'; id: number; status: number | undefined; error: string; nextAttemptAt: number; at: number }
  | { op: 'dead'; id: number; status: number | undefined; error: string; at: number }
  | { op: 'dequeued'; queue: QueueKey; at: number }
  | { op: 'requested'; queue: QueueKey; record: RequestRecord }
  | { op: 'reported'; ids: number[] };

/**
 * Applies writes in order, in the caller's transaction. Per write: false only for an attempt on a row that left its
 * queue.
 */
export function applyDeliveryWrites(
  deliveries: DeliveryStore,
  stats: ExecutorStatsStore,
  writes: readonly DeliveryWrite[],
): boolean[] {
  return writes.map((w) => {
    switch (w.op) {
      case 'startAttempt':
        return deliveries.startAttempt(w.id, w.nextAttemptAt, new Date(w.at));
      case 'releaseAttempt':
        deliveries.releaseAttempt(w.id, w.attempts, w.nextAttemptAt, new Date(w.at));
        return true;
      case 'delivered':
        deliveries.markDelivered(w.id, w.status, new Date(w.at));
        return true;
      case 'failed':
        deliveries.markFailed(w.id, w.status, w.error, w.nextAttemptAt, new Date(w.at));
        return true;
      case 'dead':
        deliveries.markDead(w.id, RETRIES_EXHAUSTED, w.status, w.error, new Date(w.at));
        return true;
      case 'dequeued':
        stats.recordDequeue(w.queue, w.at);
        return true;
      case 'requested':
        stats.recordRequest(w.queue, w.record);
        return true;
      case 'reported':
        deliveries.markReported(w.ids);
        return true;
    }
  });
}

import { statement, type Database } from '../store/index.js';
import type { QueueKey } from './delivery-store.js';

/** Pending deliveries of one queue: one row read (migration 6 keeps the count), whatever the backlog. */
export function queueSize(db: Database, queue: QueueKey): number {
  const size = statement(
    db,
    'SELECT size FROM webhook_queue_sizes WHERE site_id = ? AND webhook_id = ? AND event_type = ?',
  )
    .pluck()
    .get(queue.siteId, queue.webhookId, queue.eventType);
  return (size as number | undefined) ?? 0;
}

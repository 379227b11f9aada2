import { statement, type Database } from '../store/index.js';
import type { EventType } from '../config/index.js';

/** One (webhook, event type) FIFO queue: its pending delivery rows in id order. */
export interface QueueKey {
  siteId: string;
  webhookId: string;
  eventType: EventType;
}

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

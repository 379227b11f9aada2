import type { EventType } from '../config/index.js';
import { statement, type Database } from '../store/index.js';
import { QUEUE_FULL } from './dead-reasons.js';
import { timeOrderedUuid } from './event-id.js';
import { queueSize, type QueueKey } from './queue-size.js';

/** A domain event as the outbox stores it: the envelope's fields other than the send-time timestamp. */
export interface OutboxEvent {
  eventType: EventType;
  siteId: string;
  payload: object;
  /**
   * When it happened, if not when it is committed: a station's own time for a start or stop (docs/partners/webhooks.md#receiving-webhooks-partners).
   */
  occurredAt?: Date;
}

/** What appendEvent wrote: the event as delivery will read it, and what became of its delivery rows. */
export interface AppendedEvent extends AppendedRecord {
  seq: number;
  /** Webhooks whose queue for this event type was full: their delivery went straight to the dead letters. */
  queueFull: string[];
}

/** A delivery row whose first attempt was counted as it was written, for its queue's worker to send as counted. */
export interface CountedDelivery {
  webhookId: string;
  id: number;
}

/** An event as delivery reads it back from the outbox (a pending delivery carries the same fields). */
export interface EventRecord {
  eventId: string;
  eventType: EventType;
  siteId: string;
  payloadJson: string;
  /** ISO time it happened. */
  occurredAt: string;
}

/** An event as delivery is told of it before its commit: with the rows that commit counts the first attempt of. */
export interface AppendedRecord extends EventRecord {
  /** The delivery rows written with their first attempt counted (AppendOptions.countFirstAttempt). */
  counted: CountedDelivery[];
}

export interface AppendOptions {
  /** webhookDelivery.queueCapacity: pending deliveries one (webhook, event type) queue holds. Unbounded when absent. */
  queueCapacity?: number;
  /**
   * Whether the delivery to this queue is written with its first attempt counted, in the event's own commit, for a
   * worker that waits for it (idle, told of the row before the commit) and sends it without a round trip through
   * the daemon's commit to count it. The count is made before the request is sent, as every count is.
   */
  countFirstAttempt?: (queue: QueueKey) => boolean;
}

/**
 * Writes the event and one delivery row per subscribed webhook. Must run inside the caller's transaction,
 * the one that changes the state the event describes, so both commit or neither does. A delivery that finds
 * its queue full is written as a dead letter (docs/configuration/webhook-delivery.md#webhook-delivery-installers), flagged for the daemon to log.
 */
export function appendEvent(
  db: Database,
  event: OutboxEvent,
  webhookIds: readonly string[],
  now: Date,
  options: AppendOptions = {},
): AppendedEvent {
  // A time-ordered UUID (version 7): each new id lands at the right edge of the event_id index, so the events of
  // one commit share its last page instead of each rewriting a random 4 KiB leaf (docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear).
  const eventId = timeOrderedUuid();
  const at = now.toISOString();
  const payloadJson = JSON.stringify(event.payload);
  const occurredAt = event.occurredAt?.toISOString();
  const { lastInsertRowid } = statement(
    db,
    'INSERT INTO events (event_id, event_type, site_id, payload, created_at, occurred_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(
    eventId,
    event.eventType,
    event.siteId,
    payloadJson,
    at,
    // Only when it differs from created_at (readers take COALESCE): most events would store the same time twice.
    occurredAt ?? null,
  );
  const seq = Number(lastInsertRowid);
  const queueFull: string[] = [];
  const counted: CountedDelivery[] = [];
  const insert = statement(
    db,
    'INSERT INTO deliveries (event_seq, webhook_id, site_id, event_type, updated_at, attempts) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const insertDead = statement(
    db,
    `INSERT INTO deliveries (event_seq, webhook_id, site_id, event_type, updated_at, state, dead_reason, unreported) VALUES (?, ?, ?, ?, ?, 'dead', '${QUEUE_FULL}', 1)`,
  );
  for (const webhookId of webhookIds) {
    const queue: QueueKey = { siteId: event.siteId, webhookId, eventType: event.eventType };
    if (options.queueCapacity !== undefined && queueSize(db, queue) >= options.queueCapacity) {
      insertDead.run(seq, webhookId, event.siteId, event.eventType, at);
      queueFull.push(webhookId);
      continue;
    }
    const countNow = options.countFirstAttempt?.(queue) === true;
    const { lastInsertRowid: id } = insert.run(seq, webhookId, event.siteId, event.eventType, at, countNow ? 1 : 0);
    if (countNow) counted.push({ webhookId, id: Number(id) });
  }
  return {
    eventId,
    eventType: event.eventType,
    siteId: event.siteId,
    payloadJson,
    occurredAt: occurredAt ?? at,
    seq,
    queueFull,
    counted,
  };
}

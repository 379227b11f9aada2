import { randomUUID } from 'node:crypto';
import type { EventType } from '../config/index.js';
import type { Database } from '../store/index.js';

/** A domain event as the outbox stores it: the envelope's fields other than the send-time timestamp. */
export interface OutboxEvent {
  eventType: EventType;
  siteId: string;
  payload: object;
}

export interface AppendedEvent {
  eventId: string;
  seq: number;
}

/**
 * Writes the event and one delivery row per subscribed webhook. Must run inside the caller's transaction,
 * the one that changes the state the event describes, so both commit or neither does.
 */
export function appendEvent(db: Database, event: OutboxEvent, webhookIds: readonly string[], now: Date): AppendedEvent {
  const eventId = randomUUID();
  const at = now.toISOString();
  const { lastInsertRowid } = db
    .prepare('INSERT INTO events (event_id, event_type, site_id, payload, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(eventId, event.eventType, event.siteId, JSON.stringify(event.payload), at);
  const seq = Number(lastInsertRowid);
  const insert = db.prepare('INSERT INTO deliveries (event_seq, webhook_id, site_id, event_type, updated_at) VALUES (?, ?, ?, ?, ?)');
  for (const webhookId of webhookIds) insert.run(seq, webhookId, event.siteId, event.eventType, at);
  return { eventId, seq };
}

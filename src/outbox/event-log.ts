import type { EventType } from '../config/index.js';
import { statement, type Database } from '../store/index.js';

/** An outbox event in commit order, as GET /events serves it. */
export interface LoggedEvent {
  seq: number;
  eventId: string;
  eventType: EventType;
  siteId: string;
  payloadJson: string;
  occurredAt: string;
}

/** The events committed after `afterSeq` (0: from the oldest kept), oldest first. */
export function eventsAfter(db: Database, afterSeq: number, limit: number): LoggedEvent[] {
  return statement<[number, number], LoggedEvent>(
    db,
    `SELECT seq, event_id AS eventId, event_type AS eventType, site_id AS siteId, payload AS payloadJson, COALESCE(occurred_at, created_at) AS occurredAt
       FROM events WHERE seq > ? ORDER BY seq LIMIT ?`,
  ).all(afterSeq, limit);
}

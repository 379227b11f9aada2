// Both threads: loaded by the delivery thread and by the main thread.
import type { EventType } from '../config/index.js';
import { formatZonedTimestamp } from '../time/index.js';

/**
 * The body of every webhook request, fields in this order (docs/partners/webhooks.md#receiving-webhooks-partners), occurredAt and test
 * included.
 */
export interface WebhookEnvelope {
  eventId: string;
  eventType: EventType;
  siteId: string;
  timestamp: string;
  occurredAt: string;
  test?: true;
  payload: Record<string, unknown>;
}

/** An outbox event ready to send: the payload is the JSON text the domain committed. */
export interface DeliverableEvent {
  eventId: string;
  eventType: EventType;
  siteId: string;
  payloadJson: string;
  /** ISO time it happened. */
  occurredAt: string;
  /** `chargegate webhook test`: not a real event. */
  test?: true;
}

/**
 * The request body for one attempt; `timestamp` is the send time in the configured zone (docs/partners/webhooks.md#receiving-webhooks-partners).
 */
export function envelopeBody(event: DeliverableEvent, sentAt: Date, timeZone: string): string {
  return JSON.stringify(envelopeOf(event, sentAt, timeZone));
}

/** The envelope as an object: what a webhook carries, and GET /events serves. */
export function envelopeOf(event: DeliverableEvent, sentAt: Date, timeZone: string): WebhookEnvelope {
  return {
    eventId: event.eventId,
    eventType: event.eventType,
    siteId: event.siteId,
    timestamp: formatZonedTimestamp(sentAt, timeZone),
    occurredAt: formatZonedTimestamp(new Date(event.occurredAt), timeZone),
    ...(event.test && { test: true }),
    payload: JSON.parse(event.payloadJson) as Record<string, unknown>,
  };
}

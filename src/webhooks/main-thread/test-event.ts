// Main thread: the daemon's (or a CLI command's) side of delivery; the delivery thread never loads it.
import { v7 as timeOrderedUuid } from 'uuid';
import type { Config, EventType, WebhookConfig } from '../../config/index.js';
import {
  type AuthorizePayload,
  type ChargePointStatusPayload,
  type StartTransactionPayload,
  type StopTransactionPayload,
} from '../../site/index.js';
import { formatZonedTimestamp } from '../../time/index.js';
import type { DeliverableEvent } from '../envelope.js';
import { WebhookSender, type AttemptOutcome } from '../webhook-sender.js';
import type { WebhookSigningKeys } from '../request-signature.js';

/** The station and charge point id of `webhook test` events, so a receiver can tell them from real ones. */
const TEST_STATION_ID = 'chargegate-webhook-test';

/**
 * A payload of each event type's own type (so it cannot drift from the real ones), about the test station; a test
 * session is 0.5 kWh and ends now.
 */
function testPayload(eventType: EventType, at: Date, timeZone: string): object {
  const connector = { stationId: TEST_STATION_ID, chargePointId: TEST_STATION_ID, connectorId: 1 };
  const time = formatZonedTimestamp(at, timeZone);
  switch (eventType) {
    case 'ChargePointStatus':
      return { ...connector, status: 'Available', errorCode: 'NoError' } satisfies ChargePointStatusPayload;
    case 'Authorize':
      return {
        stationId: TEST_STATION_ID,
        idTag: TEST_STATION_ID,
        status: 'Accepted',
        chargePointId: TEST_STATION_ID,
        connectorId: 1,
      } satisfies AuthorizePayload;
    case 'StartTransaction':
      return {
        ...connector,
        idTag: TEST_STATION_ID,
        meterStart: 0,
        transactionId: 0,
        startedAt: time,
      } satisfies StartTransactionPayload;
    case 'StopTransaction':
      return {
        ...connector,
        idTag: TEST_STATION_ID,
        meterStart: 0,
        meterStop: 0.5,
        transactionId: 0,
        startedAt: time,
        stoppedAt: time,
      } satisfies StopTransactionPayload;
  }
}

/**
 * `chargegate webhook test`: an envelope with `"test": true` and a fresh eventId, of an event type the webhook
 * subscribes to (ChargePointStatus when it does), about station "chargegate-webhook-test", sent once through the
 * same signing, authentication and HTTP code as real deliveries. It is not written to the outbox: never retried,
 * never dead-lettered.
 */
function webhookTestEvent(siteId: string, webhook: WebhookConfig, timeZone: string): DeliverableEvent {
  const eventType = webhook.events.includes('ChargePointStatus') ? 'ChargePointStatus' : webhook.events[0]!;
  const at = new Date();
  return {
    eventId: timeOrderedUuid(),
    eventType,
    siteId,
    payloadJson: JSON.stringify(testPayload(eventType, at, timeZone)),
    occurredAt: at.toISOString(),
    test: true,
  };
}

export async function sendTestEvent(
  config: Config,
  siteId: string,
  webhook: WebhookConfig,
  signingKeys: () => WebhookSigningKeys,
): Promise<{ event: DeliverableEvent; outcome: AttemptOutcome }> {
  const sender = new WebhookSender({ signingKeys });
  try {
    const event = webhookTestEvent(siteId, webhook, config.timezone);
    const outcome = await sender.send(webhook, event, {
      timeZone: config.timezone,
      timeoutMs: config.webhookDelivery.requestTimeoutMs,
    });
    return { event, outcome };
  } finally {
    await sender.close();
  }
}

import { randomUUID, type KeyObject } from 'node:crypto';
import type { Config, WebhookConfig } from '../config/index.js';
import type { DeliverableEvent } from './envelope.js';
import { WebhookSender, type AttemptOutcome } from './webhook-sender.js';

/** The station and charge point id of `webhook test` events, so a receiver can tell them from real ones. */
const TEST_STATION_ID = 'chargegate-webhook-test';

/**
 * `chargegate webhook test`: a ChargePointStatus-shaped event (stationId and chargePointId
 * "chargegate-webhook-test", connector 1, Available, NoError) with a fresh eventId, sent once through the same
 * signing, authentication and HTTP code as real deliveries. It is not written to the outbox: never retried,
 * never dead-lettered.
 */
function webhookTestEvent(siteId: string): DeliverableEvent {
  const payload = { stationId: TEST_STATION_ID, chargePointId: TEST_STATION_ID, connectorId: 1, status: 'Available', errorCode: 'NoError' };
  return { eventId: randomUUID(), eventType: 'ChargePointStatus', siteId, payloadJson: JSON.stringify(payload) };
}

export async function sendTestEvent(
  config: Config,
  siteId: string,
  webhook: WebhookConfig,
  signingKey: () => KeyObject,
): Promise<{ event: DeliverableEvent; outcome: AttemptOutcome }> {
  const sender = new WebhookSender({ signingKey });
  try {
    const event = webhookTestEvent(siteId);
    const outcome = await sender.send(webhook, event, { timeZone: config.timezone, timeoutMs: config.webhookDelivery.requestTimeoutMs });
    return { event, outcome };
  } finally {
    await sender.close();
  }
}

export { WebhookDelivery, type WebhookDeliveryOptions } from './webhook-delivery.js';
export { executorLevel, executorStatuses, HEALTH_THRESHOLDS, type ExecutorStatus } from './executor-status.js';
export { ExecutorStatsStore } from './executor-stats.js';
export { WebhookSender, type AttemptOutcome, type SendOptions, type WebhookSenderOptions } from './webhook-sender.js';
export { signRequest, requestPath, type SignatureHeaders, type SignatureProfile, type SignableRequest } from './request-signature.js';
export { signatureBase, serializeSignatureParams, type SignatureParams } from './signature-base.js';
export { envelopeBody, type DeliverableEvent, type WebhookEnvelope } from './envelope.js';
export { formatZonedTimestamp } from './zoned-timestamp.js';
export { sendTestEvent, webhookTestEvent, TEST_STATION_ID } from './test-event.js';

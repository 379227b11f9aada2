export { WebhookDelivery, type WebhookDeliveryOptions } from './webhook-delivery.js';
export { executorLevel, executorStatuses, HEALTH_THRESHOLDS, type ExecutorStatus } from './executor-status.js';
export { ExecutorStatsStore } from './executor-stats.js';
export { WebhookSender, type AttemptOutcome, type SendOptions, type WebhookSenderOptions } from './webhook-sender.js';
export { signRequest, type SignatureHeaders, type SignatureProfile, type SignableRequest } from './request-signature.js';
export type { DeliverableEvent, WebhookEnvelope } from './envelope.js';
export { formatZonedTimestamp } from './zoned-timestamp.js';
export { sendTestEvent, TEST_STATION_ID } from './test-event.js';

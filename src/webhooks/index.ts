export { WebhookDelivery, type WebhookDeliveryOptions } from './main-thread/webhook-delivery.js';
export { executorLevel, executorStatuses, type ExecutorStatus } from './main-thread/executor-status.js';
export { ExecutorStatsStore } from './main-thread/executor-stats.js';
export { WebhookSender, type AttemptOutcome } from './webhook-sender.js';
export { keyFor, signRequest, type WebhookSigningKeys } from './request-signature.js';
export { envelopeBody, envelopeOf, type DeliverableEvent, type WebhookEnvelope } from './envelope.js';
export { sendTestEvent } from './main-thread/test-event.js';

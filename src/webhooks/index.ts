export { WebhookDelivery, type WebhookDeliveryOptions } from './webhook-delivery.js';
export { executorLevel, executorStatuses, type ExecutorStatus } from './executor-status.js';
export { ExecutorStatsStore } from './executor-stats.js';
export { WebhookSender, type AttemptOutcome } from './webhook-sender.js';
export { signRequest } from './request-signature.js';
export { envelopeBody, envelopeOf, type DeliverableEvent, type WebhookEnvelope } from './envelope.js';
export { sendTestEvent } from './test-event.js';

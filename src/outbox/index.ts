export {
  appendEvent,
  type AppendedEvent,
  type AppendedRecord,
  type AppendOptions,
  type CountedDelivery,
  type EventRecord,
  type OutboxEvent,
} from './append.js';
export { subscribedWebhooks } from './subscriptions.js';
export { eventsAfter, type LoggedEvent } from './event-log.js';
export {
  DeliveryStore,
  DELIVERIES_TOPIC,
  queueId,
  type DeadLetter,
  type PendingDelivery,
  type ReplayResult,
  type StoredEvent,
} from './delivery-store.js';
export { QUEUE_FULL, RETRIES_EXHAUSTED, type DeadReason } from './dead-reasons.js';
export type { QueueKey } from './queue-size.js';
export { pruneDelivered, type PruneResult } from './prune-delivered.js';

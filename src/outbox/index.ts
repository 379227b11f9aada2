export { appendEvent, type AppendedEvent, type OutboxEvent } from './append.js';
export { subscribedWebhooks } from './subscriptions.js';

import type { Config, EventType } from '../config/index.js';

/** The enabled webhooks of a site that asked for this event type: each gets its own delivery row. */
export function subscribedWebhooks(config: Config, siteId: string, eventType: EventType): string[] {
  const site = config.sites.find((s) => s.id === siteId);
  return site ? site.webhooks.filter((w) => w.enabled && w.events.includes(eventType)).map((w) => w.id) : [];
}

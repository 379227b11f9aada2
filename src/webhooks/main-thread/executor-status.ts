// Main thread: the daemon's (or a CLI command's) side of delivery; the delivery thread never loads it.
import { EVENT_TYPES, type Config, type EventType } from '../../config/index.js';
import { worstLevel, type HealthLevel } from '../../health/index.js';
import { queueId, type DeliveryStore } from '../../outbox/index.js';
import type { ExecutorStatsStore } from './executor-stats.js';
import { formatZonedTimestamp } from '../../time/index.js';

/** An executor's health level and why (docs/operating/index.md#operating, "Webhook delivery (installers)"). */
const HEALTH_THRESHOLDS = {
  queueSize: { warning: 5, critical: 100 },
  lastRequestMs: { warning: 500, critical: 5000 },
  consecutiveFailures: { warning: 2, critical: 99 },
} as const;

/** One executor (webhook, event type) as GET /health, /metrics and `webhook status` show it. */
export interface ExecutorStatus {
  siteId: string;
  webhookId: string;
  eventType: EventType;
  /** A worker serves this queue: the webhook is configured, enabled and subscribed to the event type. */
  active: boolean;
  queueSize: number;
  queueCapacity: number;
  lastDequeueAt: string | null;
  lastRequestAt: string | null;
  lastRequestDurationMs: number | null;
  lastStatus: number | null;
  lastError: string | null;
  /** Failed attempts since the last delivered one. */
  consecutiveFailures: number;
  /** Dead letters of this queue not replayed (`chargegate deadletter list`). */
  deadLetters: number;
  status: HealthLevel;
  /** Which thresholds the level comes from, e.g. "queue size 120 > 100". */
  reasons: string[];
}

/**
 * Warning above 5 queued / 500 ms / from 3 failed attempts in a row; critical above 100 queued / 5000 ms / from 100
 * failures in a row, or while a dead letter waits for a replay. The worst wins.
 */
export function executorLevel(state: {
  queueSize: number;
  lastRequestMs: number | null;
  consecutiveFailures: number;
  deadLetters: number;
}): {
  status: HealthLevel;
  reasons: string[];
} {
  const { queueSize, lastRequestMs, consecutiveFailures, deadLetters } = state;
  const levels: HealthLevel[] = [];
  const reasons: string[] = [];
  const check = (value: number, limits: { warning: number; critical: number }, label: string, unit: string) => {
    const level: HealthLevel = value > limits.critical ? 'critical' : value > limits.warning ? 'warning' : 'ok';
    if (level === 'ok') return;
    levels.push(level);
    reasons.push(
      `${label} ${Math.round(value * 10) / 10}${unit} > ${level === 'critical' ? limits.critical : limits.warning}${unit}`,
    );
  };
  check(queueSize, HEALTH_THRESHOLDS.queueSize, 'queue size', '');
  if (lastRequestMs !== null) check(lastRequestMs, HEALTH_THRESHOLDS.lastRequestMs, 'last request', ' ms');
  check(consecutiveFailures, HEALTH_THRESHOLDS.consecutiveFailures, 'failed attempts in a row', '');
  if (deadLetters > 0) {
    levels.push('critical');
    reasons.push(`${deadLetters} dead letter${deadLetters === 1 ? '' : 's'} not replayed`);
  }
  return { status: worstLevel(levels), reasons };
}

/**
 * Every configured executor (disabled webhooks too, their kept events count) plus any queue that still holds
 * pending events but has no executor any more (a removed webhook, an unsubscribed event type).
 */
export function executorStatuses(
  config: Config,
  deliveries: DeliveryStore,
  stats: ExecutorStatsStore,
): ExecutorStatus[] {
  const queues = deliveries.queueSizes();
  const sizes = new Map(queues.map((q) => [queueId(q), q.size]));
  const recorded = new Map(stats.all().map((s) => [queueId(s), s]));
  const deadQueues = deliveries.deadLetterCounts();
  const dead = new Map(deadQueues.map((d) => [queueId(d), d.count]));
  const executors = new Map<string, { siteId: string; webhookId: string; eventType: EventType; active: boolean }>();
  for (const site of config.sites) {
    for (const webhook of site.webhooks) {
      for (const eventType of webhook.events)
        executors.set(queueId({ siteId: site.id, webhookId: webhook.id, eventType }), {
          siteId: site.id,
          webhookId: webhook.id,
          eventType,
          active: webhook.enabled,
        });
    }
  }
  for (const q of [...queues, ...deadQueues]) {
    const k = queueId(q);
    if (!executors.has(k))
      executors.set(k, { siteId: q.siteId, webhookId: q.webhookId, eventType: q.eventType, active: false });
  }
  const at = (ms: number | null) => (ms === null ? null : formatZonedTimestamp(new Date(ms), config.timezone));
  const order = (e: EventType) => EVENT_TYPES.indexOf(e);
  return [...executors.entries()]
    .map(([k, e]) => {
      const s = recorded.get(k);
      const queueSize = sizes.get(k) ?? 0;
      const lastRequestMs = s?.lastRequestMs ?? null;
      const consecutiveFailures = s?.consecutiveFailures ?? 0;
      const deadLetters = dead.get(k) ?? 0;
      return {
        ...e,
        queueSize,
        queueCapacity: config.webhookDelivery.queueCapacity,
        lastDequeueAt: at(s?.lastDequeueAt ?? null),
        lastRequestAt: at(s?.lastRequestAt ?? null),
        lastRequestDurationMs: lastRequestMs === null ? null : Math.round(lastRequestMs * 10) / 10,
        lastStatus: s?.lastStatus ?? null,
        lastError: s?.lastError ?? null,
        consecutiveFailures,
        deadLetters,
        ...executorLevel({ queueSize, lastRequestMs, consecutiveFailures, deadLetters }),
      };
    })
    .sort(
      (a, b) =>
        a.siteId.localeCompare(b.siteId) ||
        a.webhookId.localeCompare(b.webhookId) ||
        order(a.eventType) - order(b.eventType),
    );
}

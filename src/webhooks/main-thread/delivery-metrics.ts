// Main thread: the daemon's (or a CLI command's) side of delivery; the delivery thread never loads it.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DeadReason, QueueKey } from '../../outbox/index.js';
import type { AttemptSummary, DeliveryObserver } from '../delivery-thread-messages.js';
import type { ExecutorStatus } from './executor-status.js';

const LABELS = ['site', 'webhook', 'event_type'] as const;
const LEVEL_VALUE = { ok: 0, warning: 1, critical: 2 } as const;

function labels(queue: QueueKey): Record<(typeof LABELS)[number], string> {
  return { site: queue.siteId, webhook: queue.webhookId, event_type: queue.eventType };
}

/** Prometheus view of delivery: executor gauges read at scrape time, counters and a histogram updated per attempt. */
export class DeliveryMetrics implements DeliveryObserver {
  private readonly attempts: Counter<'site' | 'webhook' | 'event_type' | 'outcome'>;
  private readonly durations: Histogram<'site' | 'webhook' | 'event_type'>;
  private readonly deadLetters: Counter<'site' | 'webhook' | 'event_type' | 'reason'>;

  constructor(registry: Registry, statuses: () => ExecutorStatus[]) {
    // One scrape collects every gauge in the same tick: read the executor statuses once and share them.
    let snapshot: ExecutorStatus[] | undefined;
    const scrape = (): ExecutorStatus[] => {
      if (snapshot === undefined) {
        snapshot = statuses();
        queueMicrotask(() => {
          snapshot = undefined;
        });
      }
      return snapshot;
    };
    const gauge = (name: string, help: string, value: (s: ExecutorStatus) => number | null) =>
      new Gauge({
        name,
        help,
        labelNames: LABELS,
        registers: [registry],
        collect() {
          this.reset();
          for (const s of scrape()) {
            const v = value(s);
            if (v !== null) this.set(labels(s), v);
          }
        },
      });
    const seconds = (iso: string | null) => (iso === null ? null : Date.parse(iso) / 1000);
    gauge('chargegate_webhook_queue_size', 'Pending events in the (webhook, event type) queue', (s) => s.queueSize);
    gauge(
      'chargegate_webhook_last_dequeue_timestamp_seconds',
      'When the executor last took an event from its queue',
      (s) => seconds(s.lastDequeueAt),
    );
    gauge('chargegate_webhook_last_request_timestamp_seconds', 'When the executor last sent a request', (s) =>
      seconds(s.lastRequestAt),
    );
    gauge('chargegate_webhook_last_request_duration_seconds', "Duration of the executor's last request", (s) =>
      s.lastRequestDurationMs === null ? null : s.lastRequestDurationMs / 1000,
    );
    gauge(
      'chargegate_webhook_dead_letters',
      'Dead letters of the (webhook, event type) queue not replayed',
      (s) => s.deadLetters,
    );
    gauge(
      'chargegate_webhook_health_level',
      'Executor health: 0 ok, 1 warning, 2 critical (docs/operating/index.md#operating)',
      (s) => LEVEL_VALUE[s.status],
    );
    this.attempts = new Counter({
      name: 'chargegate_webhook_attempts_total',
      help: 'Webhook HTTP attempts by outcome',
      labelNames: [...LABELS, 'outcome'],
      registers: [registry],
    });
    this.durations = new Histogram({
      name: 'chargegate_webhook_request_duration_seconds',
      help: 'Webhook HTTP attempt durations',
      labelNames: LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    this.deadLetters = new Counter({
      name: 'chargegate_webhook_dead_letters_total',
      help: 'Deliveries moved to the dead-letter list',
      labelNames: [...LABELS, 'reason'],
      registers: [registry],
    });
  }

  attempt(queue: QueueKey, outcome: AttemptSummary): void {
    const outcomeLabel = outcome.delivered ? 'delivered' : outcome.interrupted ? 'interrupted' : 'failed';
    this.attempts.inc({ ...labels(queue), outcome: outcomeLabel });
    this.durations.observe(labels(queue), outcome.durationMs / 1000);
  }

  deadLetter(queue: QueueKey, reason: DeadReason): void {
    this.deadLetters.inc({ ...labels(queue), reason });
  }
}

// Main thread: the daemon's (or a CLI command's) side of delivery; the delivery thread never loads it.
import type { QueueKey } from '../../outbox/index.js';
import type { Database } from '../../store/index.js';

/**
 * What an executor last did (docs/configuration/webhook-delivery.md#webhook-delivery-installers, health), persisted for health after restarts and
 * for the CLI.
 */
export interface ExecutorStats {
  lastDequeueAt: number | null;
  lastRequestAt: number | null;
  lastRequestMs: number | null;
  lastStatus: number | null;
  lastError: string | null;
  /** Failed attempts since the last delivered one; an attempt cut short by a shutdown counts as neither. */
  consecutiveFailures: number;
}

export interface RequestRecord {
  at: number;
  durationMs: number;
  status: number | undefined;
  error: string | undefined;
  outcome: 'delivered' | 'failed' | 'interrupted';
}

/**
 * Rows of webhook_executors (migration 3), written in the daemon's group commit (delivery-writes.ts): no fsync of their
 * own.
 */
export class ExecutorStatsStore {
  private readonly statements;

  constructor(db: Database) {
    this.statements = {
      dequeue: db.prepare(
        `INSERT INTO webhook_executors (site_id, webhook_id, event_type, last_dequeue_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (site_id, webhook_id, event_type) DO UPDATE SET last_dequeue_at = excluded.last_dequeue_at`,
      ),
      request: db.prepare(
        `INSERT INTO webhook_executors (site_id, webhook_id, event_type, last_request_at, last_request_ms, last_status, last_error, consecutive_failures)
         VALUES (:siteId, :webhookId, :eventType, :at, :durationMs, :status, :error, CASE :outcome WHEN 'failed' THEN 1 ELSE 0 END)
         ON CONFLICT (site_id, webhook_id, event_type) DO UPDATE SET last_request_at = excluded.last_request_at, last_request_ms = excluded.last_request_ms,
           last_status = excluded.last_status, last_error = excluded.last_error,
           consecutive_failures = CASE :outcome WHEN 'delivered' THEN 0 WHEN 'failed' THEN webhook_executors.consecutive_failures + 1 ELSE webhook_executors.consecutive_failures END`,
      ),
      all: db.prepare<[], QueueKey & ExecutorStats>(
        `SELECT site_id AS siteId, webhook_id AS webhookId, event_type AS eventType, last_dequeue_at AS lastDequeueAt, last_request_at AS lastRequestAt,
                last_request_ms AS lastRequestMs, last_status AS lastStatus, last_error AS lastError, consecutive_failures AS consecutiveFailures FROM webhook_executors`,
      ),
    };
  }

  recordDequeue(queue: QueueKey, at: number): void {
    this.statements.dequeue.run(queue.siteId, queue.webhookId, queue.eventType, at);
  }

  recordRequest(queue: QueueKey, request: RequestRecord): void {
    const { siteId, webhookId, eventType } = queue;
    this.statements.request.run({
      siteId,
      webhookId,
      eventType,
      at: request.at,
      durationMs: request.durationMs,
      status: request.status ?? null,
      error: request.error ?? null,
      outcome: request.outcome,
    });
  }

  all(): Array<QueueKey & ExecutorStats> {
    return this.statements.all.all();
  }
}

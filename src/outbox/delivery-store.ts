import type { EventType } from '../config/index.js';
import { bumpChangeCounter, inTransaction, statement, type Database } from '../store/index.js';
import type { EventRecord } from './append.js';
import type { DeadReason } from './dead-reasons.js';
import { queueSize, type QueueKey } from './queue-size.js';

/** The head of a queue as a worker sends it (occurredAt of events from before migration 10: when they committed). */
export interface PendingDelivery extends QueueKey, EventRecord {
  id: number;
  attempts: number;
  /** Epoch ms before which the next attempt must not start. */
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
}

/** A dead letter as `deadletter list` shows it. */
export interface DeadLetter extends QueueKey {
  eventId: string;
  reason: DeadReason;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deadSince: string;
}

export interface ReplayResult {
  /** Deliveries back in their queue as pending, with the same eventId and a fresh retry budget. */
  replayed: number;
  /** Dead letters left where they were because their queue is full right now. */
  queueFull: number;
}

/** A queue's identity as one string, for maps keyed by queue. */
export function queueId(queue: QueueKey): string {
  return JSON.stringify([queue.siteId, queue.webhookId, queue.eventType]);
}

/** Dead letters, oldest first, with everything `deadletter list` shows and the row id replay needs. */
function deadLetterSql(byEvent: boolean): string {
  return `SELECT d.id, e.event_id AS eventId, d.site_id AS siteId, d.webhook_id AS webhookId, d.event_type AS eventType, d.dead_reason AS reason,
                d.attempts, d.last_status AS lastStatus, d.last_error AS lastError, e.created_at AS createdAt, d.updated_at AS deadSince
           FROM deliveries d JOIN events e ON e.seq = d.event_seq
          WHERE d.state = 'dead'${byEvent ? ' AND e.event_id = ?' : ''}
          ORDER BY d.id`;
}

const REVIVE_SQL =
  "UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = 0, dead_reason = NULL, last_status = NULL, last_error = NULL, unreported = 0, updated_at = ? WHERE id = ?";

/** Bumped after a replay so the running daemon looks at its queues at once. */
export const DELIVERIES_TOPIC = 'webhook-deliveries';

/**
 * The delivery side of the outbox: reading queue heads, recording attempts and outcomes, the dead-letter
 * list. Only the worker of a queue changes its pending rows; the CLI touches dead rows only.
 */
export class DeliveryStore {
  private readonly statements;

  constructor(private readonly db: Database) {
    this.statements = {
      head: db.prepare<[string, string, string, number], PendingDelivery>(
        `SELECT d.id, d.site_id AS siteId, d.webhook_id AS webhookId, d.event_type AS eventType, e.event_id AS eventId, e.payload AS payloadJson,
                COALESCE(e.occurred_at, e.created_at) AS occurredAt,
                d.attempts, d.next_attempt_at AS nextAttemptAt, d.last_status AS lastStatus, d.last_error AS lastError
           FROM deliveries d JOIN events e ON e.seq = d.event_seq
          WHERE d.state = 'pending' AND d.site_id = ? AND d.webhook_id = ? AND d.event_type = ?
          ORDER BY d.id LIMIT ?`,
      ),
      startAttempt: db.prepare(
        "UPDATE deliveries SET attempts = attempts + 1, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'pending'",
      ),
      release: db.prepare(
        "UPDATE deliveries SET attempts = ?, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'pending'",
      ),
      delivered: db.prepare(
        "UPDATE deliveries SET state = 'delivered', last_status = ?, last_error = NULL, updated_at = ? WHERE id = ? AND state = 'pending'",
      ),
      failed: db.prepare(
        "UPDATE deliveries SET last_status = ?, last_error = ?, next_attempt_at = ?, updated_at = ? WHERE id = ? AND state = 'pending'",
      ),
      dead: db.prepare(
        "UPDATE deliveries SET state = 'dead', dead_reason = ?, last_status = ?, last_error = ?, updated_at = ? WHERE id = ? AND state = 'pending'",
      ),
      queueSizes: db.prepare<[], QueueKey & { size: number }>(
        'SELECT site_id AS siteId, webhook_id AS webhookId, event_type AS eventType, size FROM webhook_queue_sizes WHERE size > 0',
      ),
      unreported: db.prepare<[number], QueueKey & { id: number; eventId: string }>(
        `SELECT d.id, d.site_id AS siteId, d.webhook_id AS webhookId, d.event_type AS eventType, e.event_id AS eventId
           FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.unreported = 1 ORDER BY d.id LIMIT ?`,
      ),
      reported: db.prepare('UPDATE deliveries SET unreported = 0 WHERE id = ?'),
      deadCount: db.prepare<[], number>("SELECT COUNT(*) FROM deliveries WHERE state = 'dead'").pluck(),
      deadByQueue: db.prepare<[], QueueKey & { count: number }>(
        "SELECT site_id AS siteId, webhook_id AS webhookId, event_type AS eventType, COUNT(*) AS count FROM deliveries WHERE state = 'dead' GROUP BY site_id, webhook_id, event_type",
      ),
    };
  }

  /** The first `limit` pending deliveries of a queue, oldest first. */
  head(queue: QueueKey, limit: number): PendingDelivery[] {
    return this.statements.head.all(queue.siteId, queue.webhookId, queue.eventType, limit);
  }

  /**
   * Counts an attempt before it is sent, with the time the one after it may start: a crash during the request
   * neither resets the count nor lets a restart retry sooner than the interval. False if the row left the queue.
   */
  startAttempt(id: number, nextAttemptAt: number, at: Date): boolean {
    return this.statements.startAttempt.run(nextAttemptAt, at.toISOString(), id).changes === 1;
  }

  /**
   * Takes back an attempt counted by startAttempt that was never sent: the row gets its previous count and due time.
   */
  releaseAttempt(id: number, attempts: number, nextAttemptAt: number, at: Date): void {
    this.statements.release.run(attempts, nextAttemptAt, at.toISOString(), id);
  }

  markDelivered(id: number, status: number, at: Date): void {
    this.statements.delivered.run(status, at.toISOString(), id);
  }

  markFailed(id: number, status: number | undefined, error: string, nextAttemptAt: number, at: Date): void {
    this.statements.failed.run(status ?? null, error, nextAttemptAt, at.toISOString(), id);
  }

  markDead(id: number, reason: DeadReason, status: number | undefined, error: string, at: Date): void {
    this.statements.dead.run(reason, status ?? null, error, at.toISOString(), id);
  }

  /** Every queue that holds pending deliveries, configured or not. */
  queueSizes(): Array<QueueKey & { size: number }> {
    return this.statements.queueSizes.all();
  }

  deadLetterCount(): number {
    return this.statements.deadCount.get() ?? 0;
  }

  /** Dead letters not replayed, per queue (only queues that have some). */
  deadLetterCounts(): Array<QueueKey & { count: number }> {
    return this.statements.deadByQueue.all();
  }

  /** Queue-full dead letters not logged yet, oldest first. */
  unreportedQueueFull(limit: number): Array<QueueKey & { id: number; eventId: string }> {
    return this.statements.unreported.all(limit);
  }

  /** In the caller's transaction (the daemon's group commit, through delivery-writes.ts). */
  markReported(ids: readonly number[]): void {
    for (const id of ids) this.statements.reported.run(id);
  }

  /** Dead letters, oldest first; `eventId` narrows to one event's. */
  deadLetters(filter: { eventId?: string } = {}): DeadLetter[] {
    return this.deadRows(filter).map(({ id: _id, ...letter }) => letter);
  }

  private deadRows(filter: { eventId?: string }): Array<DeadLetter & { id: number }> {
    const { eventId } = filter;
    return statement<string[], DeadLetter & { id: number }>(this.db, deadLetterSql(eventId !== undefined)).all(
      ...(eventId !== undefined ? [eventId] : []),
    );
  }

  /**
   * Puts dead letters back in their queues (same eventId, attempts from zero), oldest first, as long as each
   * queue has room: replay obeys the queue capacity like a new event does. Tells the daemon through a change counter.
   */
  replay(filter: { eventId?: string }, queueCapacity: number, at: Date): ReplayResult {
    return inTransaction(this.db, () => {
      const rows = this.deadRows(filter);
      const revive = statement(this.db, REVIVE_SQL);
      const sizes = new Map<string, number>();
      const result: ReplayResult = { replayed: 0, queueFull: 0 };
      for (const row of rows) {
        const key = queueId(row);
        const size = sizes.get(key) ?? queueSize(this.db, row);
        if (size >= queueCapacity) {
          result.queueFull += 1;
          continue;
        }
        revive.run(at.toISOString(), row.id);
        sizes.set(key, size + 1);
        result.replayed += 1;
      }
      if (result.replayed > 0) bumpChangeCounter(this.db, DELIVERIES_TOPIC);
      return result;
    });
  }

  /** Forgets dead letters for good (their events go with the next retention pass); returns how many. */
  discard(filter: { eventId?: string }): number {
    return inTransaction(this.db, () => {
      const remove = statement(this.db, "DELETE FROM deliveries WHERE id = ? AND state = 'dead'");
      return this.deadRows(filter).reduce((n, row) => n + remove.run(row.id).changes, 0);
    });
  }

  /** A stored event as the outbox holds it, for `deadletter show`. */
  event(eventId: string): StoredEvent | undefined {
    return statement<[string], StoredEvent>(
      this.db,
      'SELECT event_id AS eventId, event_type AS eventType, site_id AS siteId, payload AS payloadJson, created_at AS createdAt, COALESCE(occurred_at, created_at) AS occurredAt FROM events WHERE event_id = ?',
    ).get(eventId);
  }
}

export interface StoredEvent {
  eventId: string;
  eventType: EventType;
  siteId: string;
  payloadJson: string;
  createdAt: string;
  occurredAt: string;
}

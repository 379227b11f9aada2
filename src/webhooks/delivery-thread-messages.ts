// Both threads: what the delivery thread and the main thread tell each other.
import type { Config } from '../config/index.js';
import type { AppendedRecord, DeadReason, QueueKey } from '../outbox/index.js';
import type { DeliveryWrite } from './delivery-writes.js';
import type { WebhookSigningKeys } from './request-signature.js';
import type { AttemptOutcome } from './webhook-sender.js';

/** What the counters need to know of an attempt: small enough to cross from the delivery thread. */
export type AttemptSummary = Pick<AttemptOutcome, 'delivered' | 'interrupted' | 'durationMs'>;

/** Told of every attempt and dead letter as it happens (on the delivery thread, passed on to the daemon's counters). */
export interface DeliveryObserver {
  attempt(queue: QueueKey, outcome: AttemptSummary): void;
  deadLetter(queue: QueueKey, reason: DeadReason): void;
}

/** What the delivery thread starts with (worker_threads workerData). */
export interface DeliveryThreadData {
  dataDir: string;
  config: Config;
  logLevel: string;
  signingKeys: WebhookSigningKeys;
  pollIntervalMs?: number;
}

/** From the daemon to the delivery thread. */
export type ToDeliveryThread =
  | { kind: 'wake' }
  | { kind: 'expect'; events: AppendedRecord[] }
  | { kind: 'config'; config: Config; logLevel: string }
  | { kind: 'signingKeys'; keys: WebhookSigningKeys }
  | { kind: 'written'; batch: number; results: boolean[] }
  | { kind: 'notWritten'; batch: number; error: string }
  | { kind: 'stop'; graceMs: number };

/** From the delivery thread to the daemon. */
export type FromDeliveryThread =
  | { kind: 'ready' }
  | { kind: 'log'; line: string }
  | { kind: 'write'; batch: number; writes: DeliveryWrite[] }
  | { kind: 'attempt'; queue: QueueKey; outcome: AttemptSummary }
  | { kind: 'deadLetter'; queue: QueueKey; reason: DeadReason }
  | { kind: 'emptyQueue'; queue: QueueKey };

// Delivery thread: runs in the worker thread that delivery-thread.ts starts, off the daemon's event loop.
import type { PendingDelivery } from '../../outbox/index.js';
import type { DeliveryWrite } from '../delivery-writes.js';
import type { PreparedRequest } from '../webhook-sender.js';

/**
 * The states of one queue's worker (queue-worker.ts drives them) and the transitions between them, in one place.
 * Two things are tracked: each row the worker holds, from reading it to its request leaving, and what the worker
 * knows of its queue being empty, which two optimisations of an empty queue rely on (signing an event beside its
 * commit, the first attempt counted in that commit). The rules they keep (test/webhooks/queue-worker.model.test.ts
 * checks them): nothing is sent before it is read committed, and no row is sent more often than it is counted.
 */

/** A row's count and due time before this worker counted its attempt: what it gets back if it is not sent after all. */
export interface CountBefore {
  attempts: number;
  nextAttemptAt: number;
}

/**
 * A row of the queue as the worker holds it, oldest first. `read`: as read from the queue, not counted by this
 * worker (it is counted before it is sent). `counted`: its next attempt is counted in the outbox (by the worker's
 * claim, or in its event's own commit) and not made yet. Either may carry its request, signed ahead of its turn.
 */
export type HeldRow =
  | { state: 'read'; row: PendingDelivery; signed?: Promise<PreparedRequest> }
  | { state: 'counted'; row: PendingDelivery; before: CountBefore; signed?: Promise<PreparedRequest> };

export function heldAsRead(row: PendingDelivery): HeldRow {
  return { state: 'read', row };
}

/** The worker's claim committed the row's next attempt: the row now reads one attempt more. */
export function claimed(held: HeldRow): HeldRow {
  const before = { attempts: held.row.attempts, nextAttemptAt: held.row.nextAttemptAt };
  held.row.attempts += 1;
  return { state: 'counted', row: held.row, before, ...(held.signed && { signed: held.signed }) };
}

/**
 * The row was written with its first attempt counted in its event's commit, for this worker: it reads as counted
 * already.
 */
export function countedInItsCommit(held: HeldRow): HeldRow {
  return {
    state: 'counted',
    row: held.row,
    before: { attempts: 0, nextAttemptAt: held.row.nextAttemptAt },
    ...(held.signed && { signed: held.signed }),
  };
}

/**
 * A counted row not sent after all (a failure ahead of it, a stop): it gets its count and due time back, in memory and
 * in the outbox.
 */
export function givenBack(held: HeldRow, at: number): { held: HeldRow; write?: DeliveryWrite } {
  if (held.state === 'read') return { held: heldAsRead(held.row) };
  held.row.attempts = held.before.attempts;
  held.row.nextAttemptAt = held.before.nextAttemptAt;
  return {
    held: heldAsRead(held.row),
    write: {
      op: 'releaseAttempt',
      id: held.row.id,
      attempts: held.before.attempts,
      nextAttemptAt: held.before.nextAttemptAt,
      at,
    },
  };
}

/**
 * A counted row's attempt is being made, with the request signed for it meanwhile: the row is held as `read` again (a
 * failed head stays).
 */
export function takenToSend(held: HeldRow & { state: 'counted' }): {
  held: HeldRow;
  signed: Promise<PreparedRequest> | undefined;
} {
  return { held: heldAsRead(held.row), signed: held.signed };
}

/**
 * What the worker knows of its queue being empty. `asleep`: it found the queue empty and said so, and no event has
 * been told since: the next event told is signed beside its commit. `awake`: reading and sending; `saidEmpty` while
 * nothing was sent since it said its queue was empty (the daemon may count the next event's first attempt for it);
 * `expected`, the request of the event told while it slept, until that event is read or the queue found empty again.
 */
export type Emptiness = { state: 'asleep' } | { state: 'awake'; saidEmpty: boolean; expected?: Expected };

export interface Expected {
  eventId: string;
  request: Promise<PreparedRequest>;
}

export const STARTED: Emptiness = { state: 'awake', saidEmpty: false };

/**
 * The queue read empty: whatever was expected is not coming (its change was undone) or was sent signed again. `say`:
 * tell the daemon, once until a row is sent.
 */
export function foundEmpty(emptiness: Emptiness): { emptiness: Emptiness; say: boolean } {
  return { emptiness: { state: 'asleep' }, say: emptiness.state === 'awake' && !emptiness.saidEmpty };
}

/** An event told while asleep, its request signing: the worker is awake from then on. */
export function told(expected: Expected): Emptiness {
  return { state: 'awake', saidEmpty: true, expected };
}

/** The sleep ended (a wake, the poll, a stop) with no event told: awake, having said its queue was empty. */
export function woke(emptiness: Emptiness): Emptiness {
  return emptiness.state === 'asleep' ? { state: 'awake', saidEmpty: true } : emptiness;
}

/**
 * A row was sent: the queue is not empty, and the daemon must hear of it before it counts an event for this worker
 * again.
 */
export function sentOne(emptiness: Emptiness): Emptiness {
  return {
    state: 'awake',
    saidEmpty: false,
    ...(emptiness.state === 'awake' && emptiness.expected && { expected: emptiness.expected }),
  };
}

/** The request signed while the event committed, if it is this one; the worker expects it no longer. */
export function takeExpected(
  emptiness: Emptiness,
  eventId: string,
): { emptiness: Emptiness; request?: Promise<PreparedRequest> } {
  if (emptiness.state !== 'awake' || emptiness.expected?.eventId !== eventId) return { emptiness };
  return { emptiness: { state: 'awake', saidEmpty: emptiness.saidEmpty }, request: emptiness.expected.request };
}

/**
 * Whether a `read` head was counted for this worker in its event's commit, as the daemon left it: named in a word
 * (`countedRows`) and with that one attempt (an id a rolled-back row had may be reused by a row not counted). The
 * words of this row and of rows before it are used up either way: a row read before its word came was counted
 * again, as any other (one count too many, never one too few).
 */
export function takeCountedWord(countedRows: Set<number>, head: HeldRow & { state: 'read' }): boolean {
  if (countedRows.size === 0) return false;
  const counted = countedRows.has(head.row.id) && head.row.attempts === 1;
  for (const id of countedRows) if (id <= head.row.id) countedRows.delete(id);
  return counted;
}

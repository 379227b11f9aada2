import type { TransactionLimit } from './charging-limits.js';
import { capped, constant, periodsOf, type Steps } from './schedules.js';

/**
 * What a transaction's profile carries: from when, the limit then, where it changes before validTo, and all of it as
 * one key.
 */
export interface Plan {
  from: Date;
  currentA: number;
  changes: NonNullable<TransactionLimit['changes']>['steps'];
  schedule: string;
}

/**
 * The profile a transaction gets: at every instant the lower of the CSMS's schedule and allowedA, in the periods it is
 * sent in (flat: for a station that refused one that changes, the lowest of it throughout); the key names the limits
 * and the instants they change at, so a schedule that moves on with the clock compares alike.
 */
export function planOf(csms: Steps, allowedA: number, flat: boolean): Plan {
  const schedule = transactionLimitOf(csms, allowedA, flat);
  const [first, ...changes] = periodsOf(schedule);
  return {
    from: new Date(schedule.window.fromMs),
    currentA: first!.limit,
    changes: changes.map((p) => ({ afterS: p.startS, currentA: p.limit })),
    schedule: JSON.stringify(schedule.steps.map((s, i) => [i === 0 ? 0 : s.atMs, s.limitA])),
  };
}

/** A transaction's limit over the window: the lower of the CSMS's and allowedA; flat, the lowest of it throughout. */
export function transactionLimitOf(csms: Steps, allowedA: number, flat: boolean): Steps<number> {
  const exact = capped(csms, allowedA);
  return flat ? constant(exact.window, Math.min(...exact.steps.map((s) => s.limitA))) : exact;
}

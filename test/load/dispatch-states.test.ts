import { describe, expect, it } from 'vitest';
import {
  acceptedOf,
  answered,
  booted,
  decided,
  failed,
  isDue,
  madeUncontrolled,
  transactionGone,
  UNSENT,
  type ConnectorDispatch,
  type LimitSent,
} from '../../src/load/dispatch-states.js';

/*
 * One connector's limit on its way, transition by transition (dispatch-states.ts); the rules over whole runs are
 * checked by the model test (limit-dispatch.model.test.ts).
 */

const VALIDITY_MS = 300_000;
const limit = (currentA: number, transactionId = 1): LimitSent => ({
  transactionId,
  currentA,
  schedule: `[[0,${currentA}]]`,
});

/** The limit sent from `from`, in flight. */
function sent(from: ConnectorDispatch, l: LimitSent): ConnectorDispatch {
  const { dispatch, send } = decided(from, l);
  expect(send).toBe(true);
  return dispatch;
}

describe("a connector's limit on its way (dispatch-states.ts)", () => {
  it('is due when the controller changed it, for a new transaction or schedule, and for renewal at half its validity', () => {
    const accepted = answered(sent(UNSENT, limit(10)), 'accepted', 1_000, VALIDITY_MS).dispatch;
    expect(acceptedOf(accepted)).toEqual({ ...limit(10), atMs: 1_000, validityMs: VALIDITY_MS });
    expect(isDue(UNSENT, limit(10), false, 0, VALIDITY_MS)).toBe(true);
    expect(isDue(accepted, limit(10), false, 2_000, VALIDITY_MS)).toBe(false);
    expect(isDue(accepted, limit(10), true, 2_000, VALIDITY_MS)).toBe(true);
    expect(isDue(accepted, limit(12), false, 2_000, VALIDITY_MS)).toBe(true);
    expect(isDue(accepted, limit(10, 2), false, 2_000, VALIDITY_MS)).toBe(true);
    expect(isDue(accepted, limit(10), false, 1_000 + VALIDITY_MS / 2, VALIDITY_MS)).toBe(true);
    // A reload that shortens the validity renews at half of the shorter one.
    expect(isDue(accepted, limit(10), false, 1_000 + 60_000, 100_000)).toBe(true);
    expect(isDue(madeUncontrolled(accepted), limit(10), true, 2_000, VALIDITY_MS)).toBe(false);
  });

  it('keeps one in flight: a different limit waits for its answer and goes at once after it; the same one is not sent twice', () => {
    const inFlight = sent(UNSENT, limit(16));
    const same = decided(inFlight, limit(16));
    expect(same).toEqual({ dispatch: inFlight, send: false });
    const lower = decided(inFlight, limit(6));
    expect(lower.send).toBe(false);
    expect(lower.dispatch).toMatchObject({ state: 'inFlight', newer: true });
    for (const outcome of ['accepted', 'offline', 'timeout'] as const)
      expect(answered(lower.dispatch, outcome, 0, VALIDITY_MS)).toMatchObject({ sendNewer: true, dispatch: UNSENT });
  });

  it('a rejection once for a transaction is sent again; a second in a row, or NotSupported, is a refusal', () => {
    const once = answered(sent(UNSENT, limit(16)), 'rejected', 0, VALIDITY_MS);
    expect(once).toEqual({ dispatch: { state: 'unsent', refusedFor: 1 }, accepted: false, sendNewer: false });
    // Offline in between keeps the count; a rejection for another transaction starts it again.
    const offline = answered(sent(once.dispatch, limit(16)), 'offline', 0, VALIDITY_MS);
    expect(offline.dispatch).toEqual({ state: 'unsent', refusedFor: 1 });
    expect(answered(sent(offline.dispatch, limit(16)), 'rejected', 0, VALIDITY_MS).refused).toBe('again');
    expect(answered(sent(once.dispatch, limit(16, 2)), 'rejected', 0, VALIDITY_MS).refused).toBeUndefined();
    expect(answered(sent(UNSENT, limit(16)), 'notSupported', 0, VALIDITY_MS).refused).toBe('again');
    // Accepted in between: the next rejection is a first one again.
    const accepted = answered(sent(once.dispatch, limit(16)), 'accepted', 0, VALIDITY_MS).dispatch;
    expect(answered(sent(accepted, limit(10)), 'rejected', 0, VALIDITY_MS).refused).toBeUndefined();
  });

  it('a boot leaves nothing of ours standing and controls a refusing connector again, its limit in flight kept', () => {
    const accepted = answered(sent(UNSENT, limit(10)), 'accepted', 0, VALIDITY_MS).dispatch;
    expect(booted(accepted)).toEqual(UNSENT);
    const inFlight = sent(accepted, limit(16));
    expect(acceptedOf(booted(inFlight))).toBeUndefined();
    expect(booted(inFlight)).toMatchObject({ state: 'inFlight', limit: limit(16) });
    // Uncontrolled while a limit was on its way: after the boot its answer is still awaited, and what the next
    // step decides follows it.
    const refusing = madeUncontrolled(inFlight);
    expect(refusing).toEqual({ state: 'uncontrolled', onItsWay: limit(16) });
    expect(decided(refusing, limit(6)).send).toBe(false);
    expect(booted(refusing)).toEqual({ state: 'inFlight', limit: limit(16), newer: true, from: UNSENT });
    expect(booted(madeUncontrolled(UNSENT))).toEqual(UNSENT);
  });

  it('a limit that never reached its station, or whose transaction ended, leaves it unsent', () => {
    const accepted = answered(sent(UNSENT, limit(10)), 'accepted', 0, VALIDITY_MS).dispatch;
    expect(failed(sent(accepted, limit(16)))).toEqual(UNSENT);
    expect(transactionGone(accepted)).toEqual(UNSENT);
    expect(acceptedOf(transactionGone(sent(accepted, limit(16))))).toBeUndefined();
  });
});

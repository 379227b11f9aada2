import type { LimitOutcome } from './charging-limits.js';

/**
 * The states of one connector's transaction limit on its way to its station (limit-dispatch.ts drives them) and the
 * transitions between them, in one place. The rules they keep (test/load/limit-dispatch.model.test.ts checks them):
 * at most one limit in flight per connector; a limit decided while one is in flight is sent once that one is
 * answered; a transaction's limit refused twice in a row makes its connector uncontrolled (or its station flat,
 * limit-dispatch.ts); an uncontrolled connector is sent nothing until its station boots.
 */

/** A limit as sent: for which transaction, the current it starts at, and its whole schedule as one key. */
export interface LimitSent {
  transactionId: number;
  currentA: number;
  schedule: string;
}

/** The last limit a transaction's station accepted, and when: renewed before its validTo lapses. */
export interface LimitAccepted extends LimitSent {
  atMs: number;
  /** The validity it was sent with: a reload that lengthens profileValidityS must not let it lapse. */
  validityMs: number;
}

/**
 * `unsent`: no limit of ours stands (none yet, lapsed, not taken); `refusedFor`, the transaction whose limit the
 * station rejected once. `accepted`: the station holds `limit`.
 */
export type Settled = { state: 'unsent'; refusedFor?: number } | { state: 'accepted'; limit: LimitAccepted };

/**
 * One connector's dispatch. `inFlight`: `limit` is on its way, `from` what stood when it left; `newer` when a step
 * decided another limit meanwhile. `uncontrolled`: its station refuses profiles; `onItsWay`, a limit sent before it
 * did whose answer is still due.
 */
export type ConnectorDispatch =
  | Settled
  | { state: 'inFlight'; limit: LimitSent; newer: boolean; from: Settled }
  | { state: 'uncontrolled'; onItsWay?: LimitSent };

export const UNSENT: Settled = { state: 'unsent' };

/** The limit the station holds, as far as chargegate knows. */
export function acceptedOf(dispatch: ConnectorDispatch): LimitAccepted | undefined {
  const settled = dispatch.state === 'inFlight' ? dispatch.from : dispatch;
  return settled.state === 'accepted' ? settled.limit : undefined;
}

/**
 * Whether a step's limit for the transaction is to be sent: a change the controller decided, a transaction not sent
 * its limit yet (it just started, or chargegate restarted under it), a schedule that changed, or a renewal due
 * (half of the validity it was sent with, or of today's if shorter).
 */
export function isDue(
  dispatch: ConnectorDispatch,
  limit: LimitSent,
  changed: boolean,
  atMs: number,
  validityMs: number,
): boolean {
  if (dispatch.state === 'uncontrolled') return false;
  const accepted = acceptedOf(dispatch);
  return (
    changed ||
    accepted?.transactionId !== limit.transactionId ||
    accepted.schedule !== limit.schedule ||
    atMs - accepted.atMs >= Math.min(accepted.validityMs, validityMs) / 2
  );
}

/**
 * A step decided `limit`: sent unless one is in flight, which it then waits for. Only a different limit waits: a
 * step deciding the same (it is not accepted yet, so it looks unsent) would have its answer step again, which marks
 * any other limit on its way, and so on, one round trip apart.
 */
export function decided(dispatch: ConnectorDispatch, limit: LimitSent): { dispatch: ConnectorDispatch; send: boolean } {
  if (dispatch.state === 'uncontrolled') return { dispatch, send: false };
  if (dispatch.state === 'inFlight') {
    const differs = dispatch.limit.transactionId !== limit.transactionId || dispatch.limit.schedule !== limit.schedule;
    return { dispatch: differs ? { ...dispatch, newer: true } : dispatch, send: false };
  }
  return { dispatch: { state: 'inFlight', limit, newer: false, from: dispatch }, send: true };
}

/**
 * What the in-flight limit's answer leads to. `sendNewer`: a limit decided meanwhile is to be sent now (the next
 * step), so a lowering waits for no timer. `refused`: `once` for a transaction's first rejection (sent again at the
 * next step: a station that ended the transaction as the limit came refuses it by name, and its stop follows);
 * `again` for a second rejection in a row or NotSupported.
 */
export interface Answered {
  dispatch: ConnectorDispatch;
  accepted: boolean;
  sendNewer: boolean;
  refused?: 'once' | 'again';
}

export function answered(
  dispatch: ConnectorDispatch,
  outcome: LimitOutcome,
  atMs: number,
  validityMs: number,
): Answered {
  if (dispatch.state === 'uncontrolled')
    return { dispatch: { state: 'uncontrolled' }, accepted: false, sendNewer: false };
  if (dispatch.state !== 'inFlight') return { dispatch, accepted: false, sendNewer: false };
  const { limit, newer, from } = dispatch;
  const refusedFor = from.state === 'unsent' ? from.refusedFor : undefined;
  if (outcome === 'accepted')
    return {
      // A newer limit goes out at the next step whatever it is: the one just accepted is not remembered.
      dispatch: newer ? UNSENT : { state: 'accepted', limit: { ...limit, atMs, validityMs } },
      accepted: true,
      sendNewer: newer,
    };
  if (outcome === 'rejected' && refusedFor !== limit.transactionId)
    return { dispatch: { state: 'unsent', refusedFor: limit.transactionId }, accepted: false, sendNewer: false };
  if (outcome === 'rejected' || outcome === 'notSupported')
    return { dispatch: UNSENT, accepted: false, sendNewer: false, refused: 'again' };
  // Offline or unanswered: sent again at the next step.
  return { dispatch: unsent(refusedFor), accepted: false, sendNewer: newer };
}

/** The in-flight limit never reached the station (a bug of ours, not its answer): sent again at the next step. */
export function failed(dispatch: ConnectorDispatch): ConnectorDispatch {
  if (dispatch.state === 'uncontrolled') return { state: 'uncontrolled' };
  if (dispatch.state !== 'inFlight') return dispatch;
  return unsent(dispatch.from.state === 'unsent' ? dispatch.from.refusedFor : undefined);
}

/** Its station refuses profiles: nothing more is sent until it boots. */
export function madeUncontrolled(dispatch: ConnectorDispatch): ConnectorDispatch {
  if (dispatch.state === 'uncontrolled') return dispatch;
  return dispatch.state === 'inFlight'
    ? { state: 'uncontrolled', onItsWay: dispatch.limit }
    : { state: 'uncontrolled' };
}

/**
 * Its station booted and may have lost its profiles: nothing of ours stands. A limit still in flight stays so, and
 * whatever the next step decides follows its answer.
 */
export function booted(dispatch: ConnectorDispatch): ConnectorDispatch {
  switch (dispatch.state) {
    case 'accepted':
      return UNSENT;
    case 'unsent':
      return dispatch;
    case 'inFlight':
      return { ...dispatch, from: dispatch.from.state === 'accepted' ? UNSENT : dispatch.from };
    case 'uncontrolled':
      return dispatch.onItsWay ? { state: 'inFlight', limit: dispatch.onItsWay, newer: true, from: UNSENT } : UNSENT;
  }
}

/** The connector's transaction ended: the limit it held is nobody's. */
export function transactionGone(dispatch: ConnectorDispatch): ConnectorDispatch {
  if (dispatch.state === 'accepted') return UNSENT;
  if (dispatch.state === 'inFlight' && dispatch.from.state === 'accepted') return { ...dispatch, from: UNSENT };
  return dispatch;
}

function unsent(refusedFor: number | undefined): Settled {
  return refusedFor === undefined ? UNSENT : { state: 'unsent', refusedFor };
}

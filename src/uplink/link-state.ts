/**
 * Where one station's link stands with the CSMS, as one value, and every way it moves (docs/design/uplink.md#uplink-what-the-csms-sees):
 * StationLink does what each state asks (connect, boot, send the queue) and tells this file what happened.
 */

/** The names `upstream status` and /health show; only `accepted` sends the queue. */
export type LinkStateName = 'connecting' | 'booting' | 'pending' | 'rejected' | 'accepted' | 'closed';

/** While a socket is open: when it opened (the back-off restarts only once it stayed up) and the failures before. */
interface Open {
  failures: number;
  openedAt: number;
}

export type LinkState =
  /** Connecting, or waiting to: `failures` connects failed or sockets closed early since the last that stayed up. */
  | { name: 'connecting'; failures: number }
  /** Open, BootNotification sent; or, `awaitingStation`, none to send until the station's own first one comes. */
  | ({ name: 'booting'; awaitingStation: boolean } & Open)
  /** The CSMS answered the boot Pending or Rejected: the queue is held and the boot asked again. */
  | ({ name: 'pending' | 'rejected' } & Open)
  /** Accepted: the queue goes, then the statuses (`caughtUp` once sent); live messages only after. */
  | ({ name: 'accepted'; caughtUp: boolean } & Open)
  | { name: 'closed' };

export type LinkEvent =
  | { type: 'connect-failed' }
  | { type: 'opened'; at: number; stationBooted: boolean }
  | { type: 'dropped'; at: number }
  | { type: 'station-booted' }
  | { type: 'boot-answered'; status: string }
  | { type: 'caught-up' }
  | { type: 'close' };

/**
 * A socket counts as a success for the reconnect back-off only once it stayed open this long: a CSMS that accepts and
 * closes at once (after the boot, say) is reconnected to as slowly as an unreachable one.
 */
export const STAYED_UP_MS = 30_000;

export const INITIAL_LINK_STATE: LinkState = { name: 'connecting', failures: 0 };

/** The state after `event`; the same object when the event changes nothing there (a late answer, say). */
export function nextLinkState(state: LinkState, event: LinkEvent): LinkState {
  if (state.name === 'closed') return state;
  if (event.type === 'close') return { name: 'closed' };
  if (state.name === 'connecting') {
    if (event.type === 'connect-failed') return { name: 'connecting', failures: state.failures + 1 };
    if (event.type === 'opened')
      return {
        name: 'booting',
        awaitingStation: !event.stationBooted,
        failures: state.failures,
        openedAt: event.at,
      };
    return state;
  }
  const open: Open = { failures: state.failures, openedAt: state.openedAt };
  switch (event.type) {
    case 'dropped': {
      const stayedUp = event.at - state.openedAt >= STAYED_UP_MS;
      return { name: 'connecting', failures: (stayedUp ? 0 : state.failures) + 1 };
    }
    case 'station-booted':
      return state.name === 'booting' && state.awaitingStation ? { ...state, awaitingStation: false } : state;
    case 'boot-answered':
      if (state.name === 'booting' && state.awaitingStation) return state;
      if (event.status === 'Accepted') return { name: 'accepted', caughtUp: false, ...open };
      return { name: event.status === 'Pending' ? 'pending' : 'rejected', ...open };
    case 'caught-up':
      return state.name === 'accepted' && !state.caughtUp ? { ...state, caughtUp: true } : state;
    case 'connect-failed':
    case 'opened':
      // Of a connect: an open socket has none under way.
      return state;
  }
}

/**
 * How long a link in `connecting` waits before it connects: at once the first time, then `initial` doubling per
 * failure up to `max` (docs/design/uplink.md#uplink-what-the-csms-sees: 1 s doubling to 10 s).
 */
export function reconnectWaitMs(failures: number, backOff: { initial: number; max: number }): number {
  if (failures === 0) return 0;
  return Math.min(backOff.max, backOff.initial * 2 ** Math.min(failures - 1, 30));
}

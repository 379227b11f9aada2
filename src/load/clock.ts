/**
 * The load manager's clock, injected so that its tests move time themselves instead of sleeping. Two readings:
 * damping, rotation, renewal and the draw estimate count on the monotonic one (a wall clock set back would hold a
 * pending raise for as long as it went back); only what a station or an operator reads (validTo, a schedule's start,
 * a temporary limit's `until`) is wall-clock time.
 */
export interface LoadClock {
  monotonicMs(): number;
  wallMs(): number;
  /** Runs `run` every intervalMs until cancelled. */
  every(intervalMs: number, run: () => void): Cancel;
  /** Runs `run` once after delayMs unless cancelled first. */
  after(delayMs: number, run: () => void): Cancel;
}

export type Cancel = () => void;

export const SYSTEM_CLOCK: LoadClock = {
  monotonicMs: () => performance.now(),
  wallMs: () => Date.now(),
  every(intervalMs, run) {
    const timer = setInterval(run, intervalMs);
    return () => clearInterval(timer);
  },
  after(delayMs, run) {
    const timer = setTimeout(run, delayMs);
    return () => clearTimeout(timer);
  },
};

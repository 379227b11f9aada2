import { expect } from 'vitest';
import { SYSTEM_CLOCK, type Cancel, type LoadClock } from '../../src/load/index.js';

/** How far short of a wait the clock is moved first, and how long (real time) `read` is then watched. */
const SHORT_OF_MS = 1000;
const WATCH_MS = 300;

/**
 * A LoadClock the test moves (the load manager's seam, passed as startDaemon's loadClock): the real clock plus what
 * the test advanced, so that raiseAfterS or the connected grace pass when the test says, not in real time. Steps and
 * timers still run on real time as well; advance() runs every step and the timers it makes due.
 */
export class MovableLoadClock implements LoadClock {
  private offsetMs = 0;
  private readonly steps = new Set<() => void>();
  private readonly timers = new Set<{ dueMs: number; run: () => void }>();

  monotonicMs(): number {
    return performance.now() + this.offsetMs;
  }

  wallMs(): number {
    return Date.now() + this.offsetMs;
  }

  /** The wall-clock instant on this clock: what a station that shares it reads its profiles at. */
  now(): Date {
    return new Date(this.wallMs());
  }

  every(intervalMs: number, run: () => void): Cancel {
    const cancel = SYSTEM_CLOCK.every(intervalMs, run);
    this.steps.add(run);
    return () => {
      cancel();
      this.steps.delete(run);
    };
  }

  after(delayMs: number, run: () => void): Cancel {
    const timer = { dueMs: this.monotonicMs() + delayMs, run };
    const cancel = SYSTEM_CLOCK.after(delayMs, () => this.timers.delete(timer) && run());
    this.timers.add(timer);
    return () => {
      cancel();
      this.timers.delete(timer);
    };
  }

  /**
   * `read` as a poll that moves this clock `moveMs` on each look: for a wait on load-management time (raiseAfterS, a
   * grace, a limit's end). A poll without it sees what happens at once.
   */
  meanwhile<T>(read: () => T, moveMs = 250): () => T {
    return () => {
      this.advance(moveMs);
      return read();
    };
  }

  advance(ms: number): void {
    this.offsetMs += ms;
    for (const timer of [...this.timers])
      if (timer.dueMs <= this.monotonicMs() && this.timers.delete(timer)) timer.run();
    for (const step of [...this.steps]) step();
  }
}

/**
 * Waits until `read` gives `expected` once `afterMs` of load-management time has passed from now, and checks it does
 * not before: the clock is moved to SHORT_OF_MS short of it and `read` watched for WATCH_MS of real time (a change at
 * once, say a raise that ignores raiseAfterS, shows there), then moved the rest of the way. Moving by polls instead
 * (meanwhile) runs the clock ahead of real time, and a change at once would then look late.
 */
export async function expectOnlyAfter<T>(
  clock: MovableLoadClock,
  afterMs: number,
  read: () => T,
  expected: T,
  timeoutMs: number,
): Promise<void> {
  clock.advance(afterMs - SHORT_OF_MS);
  await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
  expect(read()).not.toEqual(expected);
  clock.advance(SHORT_OF_MS);
  await expect.poll(read, { timeout: timeoutMs }).toEqual(expected);
}

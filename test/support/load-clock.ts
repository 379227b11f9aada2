import { SYSTEM_CLOCK, type Cancel, type LoadClock } from '../../src/load/index.js';

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

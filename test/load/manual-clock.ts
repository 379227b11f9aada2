import type { Cancel, LoadClock } from '../../src/load/index.js';

/** A wall-clock instant the manual clock starts at (any will do: nothing here reads the real one). */
const WALL_START_MS = Date.parse('2026-11-29T06:00:00.000Z');

interface Timer {
  dueMs: number;
  intervalMs?: number;
  run: () => void;
}

/**
 * The load manager's clock in a test's hands: time moves only by advance(), which runs every timer that falls due on
 * the way, at its instant, and lets the promises it started (a station's answer) settle before the next one.
 */
export class ManualClock implements LoadClock {
  private nowMs = 0;
  private readonly timers = new Set<Timer>();

  monotonicMs(): number {
    return this.nowMs;
  }

  wallMs(): number {
    return WALL_START_MS + this.nowMs;
  }

  every(intervalMs: number, run: () => void): Cancel {
    return this.add({ dueMs: this.nowMs + intervalMs, intervalMs, run });
  }

  after(delayMs: number, run: () => void): Cancel {
    return this.add({ dueMs: this.nowMs + delayMs, run });
  }

  /** Moves time on by ms, running the timers due on the way in order. */
  async advance(ms: number): Promise<void> {
    const untilMs = this.nowMs + ms;
    await settled();
    for (let next = this.nextDue(untilMs); next; next = this.nextDue(untilMs)) {
      this.nowMs = next.dueMs;
      if (next.intervalMs === undefined) this.timers.delete(next);
      else next.dueMs += next.intervalMs;
      next.run();
      await settled();
    }
    this.nowMs = untilMs;
  }

  private nextDue(untilMs: number): Timer | undefined {
    let next: Timer | undefined;
    for (const timer of this.timers) if (timer.dueMs <= untilMs && (!next || timer.dueMs < next.dueMs)) next = timer;
    return next;
  }

  private add(timer: Timer): Cancel {
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }
}

/** Lets the promises already resolved run their callbacks (a station answering at once). */
export function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

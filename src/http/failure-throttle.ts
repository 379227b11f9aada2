/**
 * Slows down an address that keeps failing client authentication: the first few failures cost nothing, then each
 * further request from it waits twice as long as the last (capped), until a success or a quiet period clears it.
 * In memory: a restart forgets, which only resets an attacker's penalty.
 */
export class FailureThrottle {
  private readonly failures = new Map<string, { count: number; lastAt: number }>();

  constructor(
    private readonly options: { freeFailures: number; baseDelayMs: number; maxDelayMs: number; forgetAfterMs: number; maxTracked: number; now?: () => number } = {
      freeFailures: 5,
      baseDelayMs: 250,
      maxDelayMs: 10_000,
      forgetAfterMs: 15 * 60_000,
      maxTracked: 10_000,
    },
  ) {}

  /** How long to hold this address's next request before looking at it. */
  delayMs(address: string): number {
    const entry = this.current(address);
    if (!entry || entry.count <= this.options.freeFailures) return 0;
    return Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (entry.count - this.options.freeFailures - 1));
  }

  recordFailure(address: string): void {
    const count = (this.current(address)?.count ?? 0) + 1;
    this.failures.delete(address);
    this.failures.set(address, { count, lastAt: this.now() });
    // Map order is insertion order: the first entry is the one that failed longest ago.
    if (this.failures.size > this.options.maxTracked) this.failures.delete(this.failures.keys().next().value!);
  }

  recordSuccess(address: string): void {
    this.failures.delete(address);
  }

  private current(address: string): { count: number; lastAt: number } | undefined {
    const entry = this.failures.get(address);
    if (entry && this.now() - entry.lastAt > this.options.forgetAfterMs) {
      this.failures.delete(address);
      return undefined;
    }
    return entry;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }
}

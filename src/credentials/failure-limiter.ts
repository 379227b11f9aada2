export interface FailureLimiterOptions {
  /** Failures from one address within the window after which it is refused without a secret check. */
  limit: number;
  windowMs: number;
  /** Addresses remembered at most (the longest quiet dropped first): a spoofed-address flood cannot grow the map. */
  maxTracked: number;
  now?: () => number;
}

/** A secret check the limiter let through: say how it ended (undefined: no secret was judged). */
export interface CheckTicket {
  /** True when this failure is the one that makes the address limited: worth one log line. */
  done(succeeded: boolean | undefined): boolean;
}

export type LimiterVerdict = { allowed: true; ticket: CheckTicket } | { allowed: false; retryAfterS: number };

/**
 * docs/operating/security.md#security: failed OCPP upgrades and token requests are counted per remote address; after `limit`
 * failures in a minute the address is answered at once, without hashing, until the oldest failure leaves the
 * window. Its checks still in flight count too, so a burst sent all at once gets at most `limit` hashes; stations
 * behind one NAT reconnecting all at once after a power cut get a 429 beyond that and come back on their retry.
 */
export class FailureLimiter {
  private readonly addresses = new Map<string, { failures: number[]; inFlight: number }>();

  constructor(private readonly options: FailureLimiterOptions = { limit: 10, windowMs: 60_000, maxTracked: 10_000 }) {}

  check(address: string): LimiterVerdict {
    const entry = this.entry(address);
    if (entry && entry.failures.length + entry.inFlight >= this.options.limit) {
      // With only checks in flight, the wait is until they end: a second is plenty.
      const oldest = entry.failures[0];
      return {
        allowed: false,
        retryAfterS:
          oldest === undefined ? 1 : Math.max(1, Math.ceil((oldest + this.options.windowMs - this.now()) / 1000)),
      };
    }
    const tracked = this.track(address);
    tracked.inFlight += 1;
    let settled = false;
    return {
      allowed: true,
      ticket: {
        done: (succeeded) => {
          if (settled) return false;
          settled = true;
          tracked.inFlight -= 1;
          if (succeeded === true) tracked.failures.length = 0;
          if (succeeded === false) tracked.failures.push(this.now());
          if (tracked.inFlight === 0 && tracked.failures.length === 0) this.addresses.delete(address);
          return succeeded === false && tracked.failures.length === this.options.limit;
        },
      },
    };
  }

  /** The address's entry with failures older than the window dropped. */
  private entry(address: string): { failures: number[]; inFlight: number } | undefined {
    const entry = this.addresses.get(address);
    if (!entry) return undefined;
    const since = this.now() - this.options.windowMs;
    while (entry.failures.length > 0 && entry.failures[0]! <= since) entry.failures.shift();
    return entry;
  }

  private track(address: string): { failures: number[]; inFlight: number } {
    let entry = this.addresses.get(address);
    if (entry) {
      // Map order is insertion order: move the address to the end, the most recently seen.
      this.addresses.delete(address);
    } else {
      entry = { failures: [], inFlight: 0 };
    }
    this.addresses.set(address, entry);
    if (this.addresses.size > this.options.maxTracked) this.addresses.delete(this.addresses.keys().next().value!);
    return entry;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }
}

/**
 * SignCertificate requests one station may send in a minute. A station asks for a certificate every few months
 * and repeats a request whose answer it lost once or twice; each request costs a signature check and a CA
 * signature on the thread pool that password and secret checks share, so a station sending them in a loop is
 * answered Rejected, unparsed, past this many.
 */
export const SIGN_CERTIFICATE_PER_STATION_PER_MINUTE = 3;

const MINUTE_MS = 60_000;

/** Whether a SignCertificate request goes ahead; the first one refused in a minute is worth one log line. */
export type SignCertificateTurn = 'allowed' | 'first refused' | 'refused';

/**
 * Counts each station's SignCertificate requests in a minute from its first one. Kept beside the connections, so a
 * station cannot reset its count by reconnecting; only the stations whose minute is running are remembered.
 */
export class SignCertificateThrottle {
  private readonly minutes = new Map<string, { startMs: number; requests: number }>();

  // A monotonic clock: a wall clock set back would keep a station refused until it caught up again.
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Stations whose minute is still running. */
  get size(): number {
    return this.minutes.size;
  }

  take(stationId: string): SignCertificateTurn {
    const now = this.now();
    this.forgetPastMinutes(now);
    let minute = this.minutes.get(stationId);
    if (!minute) {
      minute = { startMs: now, requests: 0 };
      this.minutes.set(stationId, minute);
    }
    minute.requests += 1;
    if (minute.requests <= SIGN_CERTIFICATE_PER_STATION_PER_MINUTE) return 'allowed';
    return minute.requests === SIGN_CERTIFICATE_PER_STATION_PER_MINUTE + 1 ? 'first refused' : 'refused';
  }

  /**
   * A Map keeps insertion order and a station's minute is set when it starts, so the oldest minutes come first: they
   * go as soon as they have passed (a station can make up a new identity per request when unknown ones are accepted).
   */
  private forgetPastMinutes(now: number): void {
    for (const [stationId, minute] of this.minutes) {
      if (now - minute.startMs < MINUTE_MS) return;
      this.minutes.delete(stationId);
    }
  }
}

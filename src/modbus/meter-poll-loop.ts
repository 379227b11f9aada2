import type { MeterConfig } from '../config/index.js';
import type { HealthLevel } from '../health/index.js';
import { messageOf, type Logger } from '../log/index.js';
import type { RegisterSource } from './bus.js';
import { BusError } from './errors.js';
import { meterLevel, type PolledMeterHealth } from './meter-health.js';
import { MeterReader } from './meter-reader.js';
import type { MeterMetrics } from './metrics.js';
import type { CurrentReading, ReadingProblem } from './reading.js';

export interface MeterPollLoopOptions<M extends MeterConfig> {
  meter: M;
  bus: RegisterSource;
  logger: Logger;
  metrics?: MeterMetrics;
  now?: () => Date;
}

/**
 * What every meter's poller shares, whatever it measures: the poll loop, failures counted and logged, and offline
 * by time, detection.offlineAfterS after the last good reading (docs/install/modbus-meters.md#modbus-meters). A session meter turns its
 * good readings into sessions (MeterPoller), a circuit meter hands them to load management (CircuitPoller).
 */
export abstract class MeterPollLoop<M extends MeterConfig, R extends CurrentReading> {
  readonly meter: M;
  protected readonly reader: MeterReader;
  protected readonly logger: Logger;
  protected readonly metrics: MeterMetrics | undefined;
  protected readonly now: () => Date;
  protected lastGoodAt: Date | undefined;
  protected lastReading: R | undefined;
  protected online = true;
  private readonly bus: RegisterSource;
  private readonly startedAt: Date;
  private readonly counts = { readings: 0, errors: 0, rejected: 0, consecutiveFailures: 0 };
  private lastError: string | undefined;
  private stopped = false;
  private readonly abort = new AbortController();
  private running: Promise<void> = Promise.resolve();
  private offlineDeadline: NodeJS.Timeout | undefined;

  constructor(options: MeterPollLoopOptions<M>) {
    this.meter = options.meter;
    this.bus = options.bus;
    this.metrics = options.metrics;
    this.now = options.now ?? (() => new Date());
    this.logger = options.logger.child({ meter: options.meter.id });
    this.reader = new MeterReader(options.bus, options.meter, this.now);
    this.startedAt = this.now();
  }

  /** One poll's values from the meter. */
  protected abstract read(): Promise<R>;
  /** Why a reading cannot be trusted; undefined when it is accepted. */
  protected abstract problemOf(reading: R): ReadingProblem | undefined;
  /** A good reading, already counted, after the meter came back if it was offline. */
  protected abstract accepted(reading: R): void;
  /** The meter is offline: on the poll or deadline that found it (`wentOffline`), and on every failed poll after. */
  protected abstract offline(reason: string, wentOffline: boolean): void;

  start(): void {
    this.running = this.run();
    this.armOfflineDeadline();
  }

  /** Stops polling; the caller closes the bus so a queued request fails at once. */
  halt(): void {
    this.stopped = true;
    this.abort.abort();
    clearTimeout(this.offlineDeadline);
  }

  /** Resolves once the poll loop has ended (after halt()). */
  finished(): Promise<void> {
    return this.running;
  }

  /** The health fields every meter has; `offlineLevel` is what an offline meter costs its owner. */
  protected pollHealth(offlineLevel: HealthLevel): PolledMeterHealth & { lastReading?: Omit<R, 'at'> } {
    const bus = this.bus.stats();
    const r = this.lastReading;
    return {
      status: meterLevel(this.online, this.counts.consecutiveFailures, offlineLevel),
      online: this.online,
      model: this.meter.model,
      bus: bus.key,
      unitId: this.meter.connection.unitId,
      ...(this.lastGoodAt && { lastGoodReadingAt: this.lastGoodAt.toISOString() }),
      ...(r && { lastReading: withoutTime(r) }),
      ...this.counts,
      ...(this.lastError !== undefined && { lastError: this.lastError }),
      ...((bus.lastLatencyMs !== undefined || bus.averageLatencyMs !== undefined) && {
        busLatencyMs: { last: bus.lastLatencyMs, average: bus.averageLatencyMs },
      }),
    };
  }

  /**
   * Offline comes by time, not by failed polls (docs/install/modbus-meters.md#modbus-meters): on a shared line in back-off a meter may not
   * be polled for many seconds. The timer fires when offlineAfterS of silence would have passed and re-arms
   * itself from the latest good reading, so a steady meter costs one timer per offlineAfterS, not one per poll.
   */
  private armOfflineDeadline(): void {
    clearTimeout(this.offlineDeadline);
    const dueInMs = this.meter.detection.offlineAfterS * 1000 - this.silentMs();
    this.offlineDeadline = setTimeout(
      () => {
        if (this.stopped) return;
        if (this.silentMs() >= this.meter.detection.offlineAfterS * 1000)
          this.goOffline(this.lastError ?? `no good reading for ${this.meter.detection.offlineAfterS} s`);
        if (this.online) this.armOfflineDeadline();
      },
      Math.max(0, dueInMs),
    );
    this.offlineDeadline.unref();
  }

  /** Since the last good reading, or since this poller started: downtime of the daemon itself does not count. */
  private silentMs(): number {
    return this.now().getTime() - Math.max(this.lastGoodAt?.getTime() ?? 0, this.startedAt.getTime());
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const began = Date.now();
      await this.pollOnce();
      const wait = this.meter.pollIntervalMs - (Date.now() - began);
      if (wait > 0 && !this.stopped) await this.pause(wait);
    }
  }

  /** Waits ms, or less if halt() comes first. */
  private pause(ms: number): Promise<void> {
    const { signal } = this.abort;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
    });
  }

  private async pollOnce(): Promise<void> {
    let reading: R;
    try {
      reading = await this.read();
    } catch (err) {
      if (this.stopped && err instanceof BusError && err.kind === 'closed') return;
      this.counts.errors += 1;
      this.failed(messageOf(err), 'meter read failed');
      this.metrics?.polled(this.meter.id, 'error');
      return;
    }
    const problem = this.problemOf(reading);
    if (problem) {
      this.counts.rejected += 1;
      this.failed(`bad reading: ${problem.message}`, 'bad meter reading rejected', reading);
      this.metrics?.polled(this.meter.id, 'rejected');
      return;
    }
    const wasOffline = !this.online;
    if (wasOffline) this.logger.info({ offlineSince: this.lastGoodAt?.toISOString() ?? null }, 'meter answering again');
    this.online = true;
    this.counts.readings += 1;
    this.counts.consecutiveFailures = 0;
    this.lastGoodAt = reading.at;
    this.lastReading = reading;
    // The deadline stopped re-arming while the meter was offline.
    if (wasOffline) this.armOfflineDeadline();
    this.accepted(reading);
    this.metrics?.polled(this.meter.id, 'ok', reading);
  }

  private failed(message: string, logMessage: string, reading?: R): void {
    this.counts.consecutiveFailures += 1;
    // A new problem at warn; the same one again (a meter that stays silent, or keeps sending NaN) only at debug.
    const level = this.counts.consecutiveFailures === 1 || message !== this.lastError ? 'warn' : 'debug';
    this.logger[level](
      { error: message, consecutiveFailures: this.counts.consecutiveFailures, ...(reading && { reading }) },
      logMessage,
    );
    this.lastError = message;
    if (this.silentMs() >= this.meter.detection.offlineAfterS * 1000) this.goOffline(message);
  }

  private goOffline(reason: string): void {
    const wentOffline = this.online;
    this.online = false;
    this.offline(reason, wentOffline);
  }
}

function withoutTime<R extends CurrentReading>(reading: R): Omit<R, 'at'> {
  const { at: _at, ...values } = reading;
  return values;
}

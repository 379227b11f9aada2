import type { SessionMeterConfig } from '../config/index.js';
import { messageOf, type Logger } from '../log/index.js';
import type { ConnectorRef, Site } from '../site/index.js';
import type { Database } from '../store/index.js';
import type { RegisterSource } from './bus.js';
import { detect, inSession, type DetectorState } from './detector.js';
import { BusError } from './errors.js';
import { meterLevel, type MeterHealth } from './meter-health.js';
import { MeterReader } from './meter-reader.js';
import { loadDetector, saveDetector, type StoredDetector } from './meter-store.js';
import type { MeterMetrics } from './metrics.js';
import { kWhToWh, readingProblem, type EnergyBaseline, type MeterReading } from './reading.js';

/**
 * OCPP 1.6 values a meter's connector reports when the meter stops answering: the charge point may still deliver
 * energy, but nothing can be measured or billed, which is what `PowerMeterFailure` means.
 */
const METER_OFFLINE_STATUS = { status: 'Faulted', errorCode: 'PowerMeterFailure' } as const;

/** Consecutive, mutually consistent readings that make an energy jump believable. */
const JUMP_CONFIRMATIONS = 3;

export interface MeterPollerOptions {
  meter: SessionMeterConfig;
  siteId: string;
  site: Site;
  db: Database;
  bus: RegisterSource;
  logger: Logger;
  metrics?: MeterMetrics;
  now?: () => Date;
}

/**
 * Polls one meter and turns its readings into sessions through the same domain calls an OCPP station causes:
 * Site.startTransaction / stopTransaction with source `modbus`, and Site.recordStatus for the connector.
 */
export class MeterPoller {
  readonly meter: SessionMeterConfig;
  private readonly ref: ConnectorRef;
  private readonly reader: MeterReader;
  private readonly logger: Logger;
  private readonly now: () => Date;
  private state: DetectorState;
  private baseline: EnergyBaseline | undefined;
  private lastGoodAt: Date | undefined;
  private lastReading: MeterReading | undefined;
  private pendingJump: { baseline: EnergyBaseline; count: number } | undefined;
  private readonly startedAt: Date;
  private online = true;
  private reportedStatus: string | undefined;
  private readonly counts = { readings: 0, errors: 0, rejected: 0, consecutiveFailures: 0 };
  private lastError: string | undefined;
  private stopped = false;
  private readonly abort = new AbortController();
  private running: Promise<void> = Promise.resolve();
  private offlineDeadline: NodeJS.Timeout | undefined;

  constructor(private readonly options: MeterPollerOptions) {
    const { meter, siteId } = options;
    this.meter = meter;
    this.ref = { siteId, stationId: meter.id, chargePointId: meter.chargePointId, connectorId: meter.connectorId };
    this.now = options.now ?? (() => new Date());
    this.logger = options.logger.child({ meter: meter.id });
    this.reader = new MeterReader(options.bus, meter, this.now);
    this.startedAt = this.now();
    const stored = loadDetector(options.db, meter.id);
    this.state = this.recoverState(stored?.state);
    this.baseline = stored?.baseline;
    this.lastGoodAt = stored?.lastGoodAt;
  }

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

  /**
   * Offline comes by time, not by failed polls (README "Modbus meters"): on a shared line in back-off a meter may not
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

  /** Resolves once the poll loop has ended (after halt()). */
  finished(): Promise<void> {
    return this.running;
  }

  /** What survives a restart: written on every phase change and by the service's periodic flush. */
  snapshot(): StoredDetector {
    return {
      state: this.state,
      ...(this.baseline && { baseline: this.baseline }),
      ...(this.lastGoodAt && { lastGoodAt: this.lastGoodAt }),
    };
  }

  health(): MeterHealth {
    const bus = this.options.bus.stats();
    const r = this.lastReading;
    return {
      status: meterLevel(this.online, this.counts.consecutiveFailures),
      online: this.online,
      model: this.meter.model,
      bus: bus.key,
      unitId: this.meter.connection.unitId,
      ...(this.lastGoodAt && { lastGoodReadingAt: this.lastGoodAt.toISOString() }),
      ...(r && {
        lastReading: {
          energyKWh: r.energyKWh,
          currentA: r.currentA,
          ...(r.powerW !== undefined && { powerW: r.powerW }),
        },
      }),
      ...this.counts,
      ...(this.lastError !== undefined && { lastError: this.lastError }),
      session: {
        phase: this.state.phase,
        ...(this.state.transactionId !== undefined && { transactionId: this.state.transactionId }),
      },
      ...((bus.lastLatencyMs !== undefined || bus.averageLatencyMs !== undefined) && {
        busLatencyMs: { last: bus.lastLatencyMs, average: bus.averageLatencyMs },
      }),
    };
  }

  /**
   * The transactions table is the truth about an open session (a crash can fall between the domain's commit and
   * ours); the stored detector adds what only it knows: a pending start or stop and since when.
   */
  private recoverState(stored: DetectorState | undefined): DetectorState {
    const open = this.options.site.transactions
      .open()
      .filter((t) => t.stationId === this.meter.id && t.source === 'modbus')
      .at(-1);
    if (open)
      return stored && inSession(stored.phase) && stored.transactionId === open.id
        ? stored
        : { phase: 'charging', transactionId: open.id };
    return stored && !inSession(stored.phase) ? stored : { phase: 'idle' };
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
    let reading: MeterReading;
    try {
      reading = await this.reader.read();
    } catch (err) {
      if (this.stopped && err instanceof BusError && err.kind === 'closed') return;
      this.counts.errors += 1;
      this.failed(messageOf(err), 'meter read failed');
      this.options.metrics?.polled(this.meter.id, 'error');
      return;
    }
    const problem = readingProblem(reading, this.baseline);
    if (problem?.kind === 'jump' && this.jumpConfirmed(reading)) {
      this.logger.warn(
        { from: this.baseline?.energyKWh, to: reading.energyKWh, readings: JUMP_CONFIRMATIONS },
        'energy jump confirmed by consistent readings; accepted',
      );
    } else if (problem) {
      this.counts.rejected += 1;
      this.failed(`bad reading: ${problem.message}`, 'bad meter reading rejected', reading);
      this.options.metrics?.polled(this.meter.id, 'rejected');
      return;
    }
    this.accepted(reading);
    this.options.metrics?.polled(this.meter.id, 'ok', reading);
  }

  /** Counts a run of jumped readings that agree with each other; true once the run is long enough to believe. */
  private jumpConfirmed(reading: MeterReading): boolean {
    const pending = this.pendingJump;
    const consistent = pending !== undefined && readingProblem(reading, pending.baseline) === undefined;
    this.pendingJump = {
      baseline: { energyKWh: reading.energyKWh, at: reading.at },
      count: consistent ? pending.count + 1 : 1,
    };
    return this.pendingJump.count >= JUMP_CONFIRMATIONS;
  }

  private failed(message: string, logMessage: string, reading?: MeterReading): void {
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
    if (this.online) {
      this.online = false;
      this.logger.error(
        {
          error: reason,
          lastGoodReadingAt: this.lastGoodAt?.toISOString() ?? null,
          session: this.state.transactionId ?? null,
        },
        'meter offline; an open session stays open',
      );
    }
    this.reportStatus(METER_OFFLINE_STATUS.status, METER_OFFLINE_STATUS.errorCode, { reason });
    this.options.metrics?.state(this.meter.id, this.online, inSession(this.state.phase));
  }

  private accepted(reading: MeterReading): void {
    const wasOffline = !this.online;
    if (wasOffline) this.logger.info({ offlineSince: this.lastGoodAt?.toISOString() ?? null }, 'meter answering again');
    this.online = true;
    this.counts.readings += 1;
    this.counts.consecutiveFailures = 0;
    this.pendingJump = undefined;
    this.baseline = { energyKWh: reading.energyKWh, at: reading.at };
    this.lastGoodAt = reading.at;
    this.lastReading = reading;
    // The deadline stopped re-arming while the meter was offline.
    if (wasOffline) this.armOfflineDeadline();
    const input = {
      at: reading.at,
      energyWh: kWhToWh(reading.energyKWh),
      currentA: reading.currentA,
      ...(reading.powerW !== undefined && { powerW: reading.powerW }),
    };
    const previous = this.state;
    const { state, action } = detect(previous, input, this.meter.detection, this.meter.pollIntervalMs);
    // The connector status changes in the same commit as the session it accompanies.
    const connectorStatus = { status: inSession(state.phase) ? 'Charging' : 'Available', errorCode: 'NoError' };
    const reportedBefore = this.reportedStatus;
    try {
      // The session change, its events and the detector state that knows of it are one transaction, durable before
      // the poller goes on: a session without its detector state would be started again by the next reading.
      const statusWritten = this.options.site.inOneCommit(() => {
        let next = state;
        let written = false;
        if (action?.type === 'start') {
          const idTag = this.meter.idTag ?? `MODBUS-${this.meter.id}`;
          const transaction = this.options.site.transactions.start({
            at: this.ref,
            idTag,
            meterStartWh: action.meterStartWh,
            startedAt: action.startedAt,
            source: 'modbus',
            connectorStatus,
          });
          next = { ...state, transactionId: transaction.id };
          written = true;
        } else if (action?.type === 'stop') {
          written =
            this.options.site.transactions.stop({
              stationId: this.ref.stationId,
              transactionId: action.transactionId,
              meterStopWh: action.meterStopWh,
              stoppedAt: action.stoppedAt,
              connectorStatus,
            }) !== undefined;
        }
        // snapshot() reads this.state; the catch below puts the previous one back if the transaction fails.
        this.state = next;
        if (next.phase !== previous.phase || action)
          saveDetector(this.options.db, this.meter.id, this.snapshot(), this.now());
        return written;
      });
      if (statusWritten) this.reportedStatus = statusKey(connectorStatus.status, connectorStatus.errorCode);
      if (action?.type === 'start')
        this.logger.info(
          {
            transactionId: this.state.transactionId,
            meterStartWh: action.meterStartWh,
            startedAt: action.startedAt.toISOString(),
          },
          'modbus session started',
        );
      if (action?.type === 'stop')
        this.logger.info(
          {
            transactionId: action.transactionId,
            meterStopWh: action.meterStopWh,
            stoppedAt: action.stoppedAt.toISOString(),
          },
          'modbus session stopped',
        );
    } catch (err) {
      // The detector keeps its previous state, so the next good reading tries the same change again.
      this.state = previous;
      this.reportedStatus = reportedBefore;
      this.logger.error({ err, action }, 'could not record the session change; retrying with the next reading');
      return;
    }
    this.reportStatus(connectorStatus.status, connectorStatus.errorCode);
    this.options.metrics?.state(this.meter.id, true, inSession(this.state.phase));
  }

  /**
   * Records the connector status when it differs from what this poller last reported (the domain dedups across
   * restarts).
   */
  private reportStatus(status: string, errorCode: string, info?: object): void {
    const key = statusKey(status, errorCode);
    if (this.reportedStatus === key) return;
    try {
      this.options.site.inOneCommit(() => this.options.site.connectors.recordStatus(this.ref, status, errorCode, info));
      this.reportedStatus = key;
    } catch (err) {
      this.logger.error(
        { err, status, errorCode },
        'could not record the connector status; retrying with the next poll',
      );
    }
  }
}

function statusKey(status: string, errorCode: string): string {
  return `${status}/${errorCode}`;
}

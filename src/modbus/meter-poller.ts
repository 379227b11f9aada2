import type { SessionMeterConfig } from '../config/index.js';
import type { ConnectorRef, Site } from '../site/index.js';
import type { Database } from '../store/index.js';
import { detect, inSession, type DetectorState } from './detector.js';
import type { MeterHealth } from './meter-health.js';
import { MeterPollLoop, type MeterPollLoopOptions } from './meter-poll-loop.js';
import { loadDetector, saveDetector, type StoredDetector } from './meter-store.js';
import { kWhToWh, readingProblem, type EnergyBaseline, type MeterReading, type ReadingProblem } from './reading.js';

/**
 * OCPP 1.6 values a meter's connector reports when the meter stops answering: the charge point may still deliver
 * energy, but nothing can be measured or billed, which is what `PowerMeterFailure` means.
 */
const METER_OFFLINE_STATUS = { status: 'Faulted', errorCode: 'PowerMeterFailure' } as const;

/** Consecutive, mutually consistent readings that make an energy jump believable. */
const JUMP_CONFIRMATIONS = 3;

export interface MeterPollerOptions extends MeterPollLoopOptions<SessionMeterConfig> {
  siteId: string;
  site: Site;
  db: Database;
}

/**
 * Polls one meter and turns its readings into sessions through the same domain calls an OCPP station causes:
 * Site.startTransaction / stopTransaction with source `modbus`, and Site.recordStatus for the connector.
 */
export class MeterPoller extends MeterPollLoop<SessionMeterConfig, MeterReading> {
  private readonly ref: ConnectorRef;
  private readonly site: Site;
  private readonly db: Database;
  private state: DetectorState;
  private baseline: EnergyBaseline | undefined;
  private pendingJump: { baseline: EnergyBaseline; count: number } | undefined;
  private reportedStatus: string | undefined;

  constructor(options: MeterPollerOptions) {
    super(options);
    const { meter, siteId } = options;
    this.site = options.site;
    this.db = options.db;
    this.ref = { siteId, stationId: meter.id, chargePointId: meter.chargePointId, connectorId: meter.connectorId };
    const stored = loadDetector(options.db, meter.id);
    this.state = this.recoverState(stored?.state);
    this.baseline = stored?.baseline;
    this.lastGoodAt = stored?.lastGoodAt;
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
    return {
      role: 'session',
      ...this.pollHealth('critical'),
      session: {
        phase: this.state.phase,
        ...(this.state.transactionId !== undefined && { transactionId: this.state.transactionId }),
      },
    };
  }

  /**
   * The transactions table is the truth about an open session (a crash can fall between the domain's commit and
   * ours); the stored detector adds what only it knows: a pending start or stop and since when.
   */
  private recoverState(stored: DetectorState | undefined): DetectorState {
    const open = this.site.transactions
      .open()
      .filter((t) => t.stationId === this.meter.id && t.source === 'modbus')
      .at(-1);
    if (open)
      return stored && inSession(stored.phase) && stored.transactionId === open.id
        ? stored
        : { phase: 'charging', transactionId: open.id };
    return stored && !inSession(stored.phase) ? stored : { phase: 'idle' };
  }

  protected read(): Promise<MeterReading> {
    return this.reader.read();
  }

  protected problemOf(reading: MeterReading): ReadingProblem | undefined {
    const problem = readingProblem(reading, this.baseline);
    if (problem?.kind !== 'jump' || !this.jumpConfirmed(reading)) return problem;
    this.logger.warn(
      { from: this.baseline?.energyKWh, to: reading.energyKWh, readings: JUMP_CONFIRMATIONS },
      'energy jump confirmed by consistent readings; accepted',
    );
    return undefined;
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

  protected offline(reason: string, wentOffline: boolean): void {
    if (wentOffline)
      this.logger.error(
        {
          error: reason,
          lastGoodReadingAt: this.lastGoodAt?.toISOString() ?? null,
          session: this.state.transactionId ?? null,
        },
        'meter offline; an open session stays open',
      );
    this.reportStatus(METER_OFFLINE_STATUS.status, METER_OFFLINE_STATUS.errorCode, { reason });
    this.metrics?.state(this.meter.id, this.online, inSession(this.state.phase));
  }

  protected accepted(reading: MeterReading): void {
    this.pendingJump = undefined;
    this.baseline = { energyKWh: reading.energyKWh, at: reading.at };
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
      const statusWritten = this.site.inOneCommit(() => {
        let next = state;
        let written = false;
        if (action?.type === 'start') {
          const idTag = this.meter.idTag ?? `MODBUS-${this.meter.id}`;
          const transaction = this.site.transactions.start({
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
            this.site.transactions.stop({
              stationId: this.ref.stationId,
              transactionId: action.transactionId,
              meterStopWh: action.meterStopWh,
              stoppedAt: action.stoppedAt,
              connectorStatus,
            }) !== undefined;
        }
        // snapshot() reads this.state; the catch below puts the previous one back if the transaction fails.
        this.state = next;
        if (next.phase !== previous.phase || action) saveDetector(this.db, this.meter.id, this.snapshot(), this.now());
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
    this.metrics?.state(this.meter.id, true, inSession(this.state.phase));
  }

  /**
   * Records the connector status when it differs from what this poller last reported (the domain dedups across
   * restarts).
   */
  private reportStatus(status: string, errorCode: string, info?: object): void {
    const key = statusKey(status, errorCode);
    if (this.reportedStatus === key) return;
    try {
      this.site.inOneCommit(() => this.site.connectors.recordStatus(this.ref, status, errorCode, info));
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

import { randomInt } from 'node:crypto';
import type { Config } from '../config/index.js';
import { ChargegateError, errorCodeOf, type ErrorCode } from '../errors/index.js';
import { safely, type Logger } from '../log/index.js';
import { InvalidOperationError, type OperationOutcome, type StationOperations } from '../stations/index.js';
import { randomLogId, type LogFiles, type StoredLog } from './log-files.js';
import type { UploadEvents } from './reception.js';
import { LogRecords, type LogRecord, type LogState } from './records.js';
import type { UploadGrant, UploadGrants } from './upload-grants.js';

/** The collections' clock, injected so that their tests move time instead of sleeping. */
export interface LogsClock {
  now(): number;
  /** Runs `run` once after `ms` unless the returned cancel is called first. */
  after(ms: number, run: () => void): () => void;
}

export const SYSTEM_LOGS_CLOCK: LogsClock = {
  now: () => Date.now(),
  after(ms, run) {
    const timer = setTimeout(run, ms);
    return () => clearTimeout(timer);
  },
};

/** A log collection already runs on the station: a station uploads one diagnostics file at a time. */
export class LogsInProgressError extends ChargegateError {
  override name = 'LogsInProgressError';
  readonly code = 'CHARGEGATE_LOGS_IN_PROGRESS';
  constructor(
    readonly stationId: string,
    readonly logId: string,
  ) {
    super(`station "${stationId}" is uploading log ${logId} already: wait for it to end`);
  }
}

/** Where stations are told to upload: the HTTP base URL, and the FTP listener when logs.ftp is configured. */
export interface UploadLocations {
  httpBase(): string;
  /** Host and port for `ftp://user:password@host:port/`; undefined while no FTP listener runs. */
  ftp(): { host: string; port: number } | undefined;
}

export interface LogCollectionsOptions {
  config: () => Config;
  records: LogRecords;
  files: LogFiles;
  grants: UploadGrants;
  operations: Pick<StationOperations, 'run'>;
  /** The OCPP subprotocol the station is connected with now (1.6 stations upload over FTP when it runs). */
  protocolOf(stationId: string): string | undefined;
  locations: UploadLocations;
  logger: Logger;
  clock: LogsClock;
}

/** What the station does with our request: the log collection, and the station's answer to GetDiagnostics/GetLog. */
export interface LogRequestOutcome {
  record: LogRecord;
  outcome: OperationOutcome;
}

/** A collection under way on a station. */
interface Open {
  logId: string;
  requestId: number;
  /** The station said Uploaded while the file was still coming: the file's end decides. */
  saidUploaded: boolean;
  cancelExpiry(): void;
}

/**
 * Station logs collected by the gateway (contract 11.3): GetDiagnostics / GetLog sent as a station operation with an
 * upload location of its own, then the station's status notifications and the upload followed until the file is here
 * and the station said Uploaded, or until it failed: the station said so, said Uploaded with nothing here, or sent
 * nothing for logs.uploadWindowS. Notifications nobody asked for change nothing. One collection per station at a time.
 */
export class LogCollections implements UploadEvents {
  private readonly open = new Map<string, Open>();
  private readonly log: Logger;

  constructor(private readonly options: LogCollectionsOptions) {
    this.log = options.logger.child({ component: 'station-logs' });
  }

  /** Fails the collections a stopped daemon left open: their upload locations ended with it. */
  recover(): void {
    for (const record of this.options.records.open()) {
      this.options.records.change(record.logId, 'failed', this.at(), {
        reason: 'chargegate restarted before the upload ended',
      });
      this.log.info({ logId: record.logId, stationId: record.stationId }, 'station log collection ended by a restart');
    }
  }

  /**
   * Asks the station for its diagnostics log. Rejects as station operations do (offline, timeout, busy, invalid) with
   * the collection recorded as failed, or with LogsInProgressError; resolves with the station's answer otherwise (a
   * refusal included, the collection then failed).
   */
  async request(
    stationId: string,
    who: string,
    ask: { since?: string; via?: 'http' | 'ftp' },
  ): Promise<LogRequestOutcome> {
    const { config, records, grants, clock } = this.options;
    const running = this.open.get(stationId);
    if (running) throw new LogsInProgressError(stationId, running.logId);
    const ftp = this.options.locations.ftp();
    const via = ask.via ?? (this.options.protocolOf(stationId) === 'ocpp1.6' && ftp ? 'ftp' : 'http');
    if (via === 'ftp' && !ftp)
      throw new InvalidOperationError('via: ftp needs logs.ftp in the config (FTP uploads are off without it)');
    const logId = randomLogId();
    const requestId = randomInt(2 ** 31 - 1);
    const windowMs = config().logs.uploadWindowS * 1000;
    const grant = grants.issue(logId, stationId, clock.now() + windowMs);
    const location =
      via === 'ftp' && ftp
        ? `ftp://${grant.ftp.user}:${grant.ftp.password}@${hostInUrl(ftp.host)}:${ftp.port}/`
        : `${this.options.locations.httpBase()}/uploads/${grant.http.token}/`;
    records.insert({ logId, stationId, who, via, since: ask.since ?? null, requestId, requestedAt: this.at() });
    const open: Open = {
      logId,
      requestId,
      saidUploaded: false,
      // A timer: a failed write (a full disk, a busy database) is logged; the next start fails the record then.
      cancelExpiry: clock.after(windowMs, () =>
        safely(
          this.log,
          'station log collection could not be ended at its window; the next start ends it',
          () => this.expired(stationId, logId),
          { stationId, logId },
        ),
      ),
    };
    this.open.set(stationId, open);
    const log = this.log.child({ stationId, logId, via });
    log.info({ who, since: ask.since }, 'station log requested');
    let outcome: OperationOutcome;
    try {
      outcome = await this.options.operations.run(stationId, who, {
        kind: 'logs',
        location,
        requestId,
        ...(ask.since !== undefined && { since: ask.since }),
      });
    } catch (err) {
      this.finish(stationId, open, 'failed', { reason: `not asked: ${(err as Error).message}` });
      // Refused before the station was asked (busy, invalid): no record, so a flood of them leaves nothing behind.
      const code = errorCodeOf(err);
      if (code !== undefined && NOT_SENT.has(code)) records.remove(logId);
      throw err;
    }
    const { answer, succeeded } = outcome;
    if (!succeeded)
      this.finish(stationId, open, 'failed', { reason: `the station refused ${answer.action}: ${answer.status}` });
    // A notification may have moved it on before the answer's continuation ran.
    else records.change(logId, 'accepted', this.at(), {}, ['requested']);
    return { record: this.get(logId)!, outcome };
  }

  get(logId: string): LogRecord | undefined {
    return this.options.records.get(logId);
  }

  /** The collection under way on the station, for the inventory's `operation`. */
  current(stationId: string): { kind: 'logs'; id: string; state: LogState } | null {
    const open = this.open.get(stationId);
    const record = open && this.get(open.logId);
    return record ? { kind: 'logs', id: record.logId, state: record.state } : null;
  }

  /** A DiagnosticsStatusNotification or LogStatusNotification from the station. */
  statusNotification(stationId: string, { status, requestId }: { status: string; requestId?: number }): void {
    const open = this.open.get(stationId);
    const log = this.log.child({ stationId, status, requestId });
    // 1.6 diagnostics carry no id; a 2.0.1 station names the GetLog it answers.
    const speaks201 = this.options.protocolOf(stationId) === 'ocpp2.0.1';
    const asked = open !== undefined && (requestId === undefined ? !speaks201 : requestId === open.requestId);
    if (!asked) {
      log.info('log status notification nobody asked for: changes nothing');
      return;
    }
    const record = this.get(open.logId);
    if (!record) return;
    switch (status) {
      case 'Idle':
        log.info({ logId: open.logId }, 'log status Idle: nothing changes');
        return;
      case 'Uploading':
        this.options.records.change(open.logId, 'uploading', this.at(), {}, BEFORE_UPLOAD);
        return;
      case 'Uploaded':
        if (record.state === 'received') return this.finish(stationId, open, 'uploaded');
        if (this.options.grants.of(open.logId)?.receiving) {
          open.saidUploaded = true;
          return;
        }
        return this.finish(stationId, open, 'failed', { reason: 'the station said Uploaded, but no file arrived' });
      default:
        return this.finish(stationId, open, 'failed', { reason: `the station said ${status}` });
    }
  }

  receiving(grant: UploadGrant): void {
    const open = this.openFor(grant);
    if (open) this.options.records.change(open.logId, 'uploading', this.at(), {}, BEFORE_UPLOAD);
  }

  arrived(grant: UploadGrant, stored: StoredLog): void {
    const open = this.openFor(grant);
    const file = { name: stored.name, bytes: stored.bytes };
    if (open?.saidUploaded) this.finish(grant.stationId, open, 'uploaded', { file });
    else if (open) this.options.records.change(open.logId, 'received', this.at(), { file });
    this.keepWithinTotal(grant.logId);
  }

  broken(grant: UploadGrant, reason: string): void {
    const open = this.openFor(grant);
    // Without the station's word the upload may come again: the window decides.
    if (open?.saidUploaded) this.finish(grant.stationId, open, 'failed', { reason: `the upload broke off: ${reason}` });
  }

  /**
   * Removes the files and records older than logs.retainDays; writes nothing when there are none. Run from a timer: a
   * failure (a full disk, a busy database, a folder it may not remove) is logged, and the next prune tries again.
   */
  prune(): void {
    safely(this.log, 'station logs older than logs.retainDays could not be removed; the next prune tries again', () => {
      const { files, records, config, clock } = this.options;
      const before = clock.now() - config().logs.retainDays * 86_400_000;
      const removed = files.removeOlderThan(before);
      records.fileRemoved(removed, 'older than logs.retainDays', this.at());
      const deleted = records.deleteFinishedBefore(new Date(before).toISOString());
      if (removed.length > 0 || deleted > 0)
        this.log.info({ files: removed.length, records: deleted }, 'station logs older than logs.retainDays removed');
    });
  }

  /** Ends every collection's wait (the daemon stops; the next start fails what was open). */
  stop(): void {
    for (const open of this.open.values()) open.cancelExpiry();
    this.open.clear();
  }

  private keepWithinTotal(keep: string): void {
    const removed = this.options.files.keepWithin(this.options.config().logs.maxTotalBytes, keep);
    if (removed.length === 0) return;
    this.options.records.fileRemoved(removed, 'the oldest removed to keep logs.maxTotalBytes', this.at());
    this.log.info({ removed }, 'oldest station logs removed to keep logs.maxTotalBytes');
  }

  private expired(stationId: string, logId: string): void {
    const open = this.open.get(stationId);
    if (open?.logId !== logId) return;
    const record = this.get(logId);
    const windowS = this.options.config().logs.uploadWindowS;
    this.finish(stationId, open, 'failed', {
      reason:
        record?.state === 'received'
          ? `the file arrived, but the station did not say Uploaded within logs.uploadWindowS (${windowS} s)`
          : record?.state === 'uploading'
            ? `the upload did not end within logs.uploadWindowS (${windowS} s)`
            : `nothing from the station within logs.uploadWindowS (${windowS} s)`,
    });
  }

  private openFor(grant: UploadGrant): Open | undefined {
    const open = this.open.get(grant.stationId);
    return open?.logId === grant.logId ? open : undefined;
  }

  private finish(
    stationId: string,
    open: Open,
    state: 'uploaded' | 'failed',
    detail: { reason?: string; file?: { name: string; bytes: number } } = {},
  ): void {
    open.cancelExpiry();
    this.open.delete(stationId);
    this.options.grants.revoke(open.logId);
    this.options.records.change(open.logId, state, this.at(), detail);
    const log = this.log.child({ stationId, logId: open.logId });
    if (state === 'uploaded') log.info('station log collected');
    else log.warn({ reason: detail.reason }, 'station log collection failed');
  }

  private at(): string {
    return new Date(this.options.clock.now()).toISOString();
  }
}

const NOT_SENT = new Set<ErrorCode>(['CHARGEGATE_STATION_BUSY', 'CHARGEGATE_INVALID_OPERATION']);

/** Before any byte or word of an upload: where Uploading (said or seen) moves a collection from. */
const BEFORE_UPLOAD: readonly LogState[] = ['requested', 'accepted'];

/** An IPv6 address in a URL is bracketed. */
function hostInUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

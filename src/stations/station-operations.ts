import type { Config } from '../config/index.js';
import { errorCodeOf, type ErrorCode } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { OCPP201, StationCallError, type Ocpp201Actions, type StationCommands } from '../ocpp/index.js';
import type { Site } from '../site/index.js';
import type { Writer } from '../store/index.js';
import { OperationAudit, type OperationAnswer, type OperationRecord } from './audit.js';
import { BaseReports, type BaseReport } from './base-reports.js';
import {
  longOperationOf,
  stationInventory,
  type LongOperation,
  type LongOperationSource,
  type StationInventory,
} from './inventory.js';
import { OPERATIONS_WAITING, OperationQueues } from './operation-queue.js';
import { actionOf, isSuccess, perform, type OperationContext, type StationOperation } from './operations.js';

export interface StationOperationsOptions {
  commands: Pick<StationCommands, 'speaks201' | 'operate16' | 'operate201' | 'protocolOf'>;
  site: Site;
  config: () => Config;
  writer: Writer;
  logger: Logger;
  now?: () => Date;
}

/** An operation's outcome: the station's answer, and whether it did what it was asked (HTTP 200) or refused (409). */
export interface OperationOutcome {
  answer: OperationAnswer;
  succeeded: boolean;
}

/** An operation on its way: its OCPP action, who asked (`cli` or the API client id), since when it runs (RFC 3339). */
export interface OperationInProgress {
  action: string;
  who: string;
  since: string;
}

/** A station in full: what it is, its last operations (newest first), and its last base report (2.0.1). */
export interface StationDetail extends StationInventory {
  operations: OperationRecord[];
  baseReport: BaseReport | null;
}

/**
 * Operating the stations (contract 11.1): each operation waits its turn on the station (one at a time, at most
 * OPERATIONS_WAITING behind it), goes to the station's call lane behind load management's and the CSMS's calls, and
 * is recorded with who asked and what the station answered (the last 50 per station) and logged.
 */
export class StationOperations {
  private readonly baseReports = new BaseReports();
  /** The operation each station is being sent or answering now, for the status page. */
  private readonly running = new Map<string, OperationInProgress>();
  private readonly audit: OperationAudit;
  private readonly queues: OperationQueues;
  private readonly log: Logger;
  private readonly now: () => Date;
  private readonly context: OperationContext;
  private readonly longOperations: LongOperationSource[] = [];

  constructor(private readonly options: StationOperationsOptions) {
    this.audit = new OperationAudit(options.writer);
    // Contract 11.1: answered within 2 x ocpp.callTimeoutMs of the request, waiting included.
    this.queues = new OperationQueues({
      waiting: OPERATIONS_WAITING,
      deadlineMs: () => 2 * options.config().ocpp.callTimeoutMs,
    });
    this.log = options.logger.child({ component: 'stations' });
    this.now = options.now ?? (() => new Date());
    this.context = {
      commands: options.commands,
      baseReports: this.baseReports,
      connectorsOf: (id) => this.connectorsOf(id),
      now: this.now,
    };
  }

  /** The operation the station is being sent or answering now; undefined when none is. */
  inProgress(stationId: string): OperationInProgress | undefined {
    return this.running.get(stationId);
  }

  /** Firmware rollouts and log collections say through this which station they occupy (inventory's `operation`). */
  addLongOperations(source: LongOperationSource): void {
    this.longOperations.push(source);
  }

  /** The firmware update or log collection the station is part of now (the status page's row); null when none. */
  longOperationOf(stationId: string): LongOperation | null {
    return longOperationOf(this.longOperations, stationId);
  }

  /** Every station the site knows, as GET /stations lists them. */
  list(): StationInventory[] {
    return stationInventory(this.options.site, this.options.commands, this.longOperations);
  }

  /** One station with its operations; undefined when the site does not know it. */
  detail(stationId: string): StationDetail | undefined {
    const [station] = stationInventory(this.options.site, this.options.commands, this.longOperations, stationId);
    if (!station) return undefined;
    return { ...station, operations: this.audit.last(stationId), baseReport: this.baseReports.of(stationId) ?? null };
  }

  /** A part of a report a 2.0.1 station sent (the central system's onReport). */
  reportReceived(stationId: string, part: Ocpp201Actions['NotifyReport'][0]): void {
    this.baseReports.received(stationId, part);
  }

  /**
   * Runs the operation on the station for `who` (`cli` or an API client id). A CALLERROR is the station's refusal,
   * its code the status; rejects with StationBusyError, StationOfflineError, StationTimeoutError, or
   * InvalidOperationError / NoBaseReportError (nothing sent). With `ready`, asked when the operation's turn on the
   * station comes, just before it is sent: false leaves it unsent (null, nothing recorded). A caller whose reason to
   * send can lapse while it waits behind other operations (a firmware update and a transaction starting) checks here.
   */
  async run(stationId: string, who: string, operation: StationOperation): Promise<OperationOutcome>;
  async run(
    stationId: string,
    who: string,
    operation: StationOperation,
    ready: () => boolean,
  ): Promise<OperationOutcome | null>;
  async run(
    stationId: string,
    who: string,
    operation: StationOperation,
    ready: () => boolean = () => true,
  ): Promise<OperationOutcome | null> {
    const { commands } = this.options;
    const action = actionOf(operation, commands.protocolOf(stationId) === OCPP201);
    const request = requestOf(operation);
    const at = this.now().toISOString();
    const log = this.log.child({ stationId, who, action });
    let answer: OperationAnswer | null;
    try {
      // async: a throwing `ready` rejects this turn and frees the station's queue.
      answer = await this.queues.run(stationId, action, async () => {
        if (!ready()) return null;
        this.running.set(stationId, { action, who, since: this.now().toISOString() });
        return perform(this.context, stationId, operation)
          .catch(asRefusal)
          .finally(() => this.running.delete(stationId));
      });
    } catch (err) {
      const kind = errorKind(err);
      if (kind === undefined) {
        log.info({ request, reason: (err as Error).message }, 'station operation not sent');
      } else {
        const message = (err as Error).message;
        this.keep(stationId, { at, who, action, request, answer: null, error: { kind, message } }, log);
        log.warn({ request, outcome: kind, reason: message }, 'station operation failed');
      }
      throw err;
    }
    if (answer === null) {
      log.info({ request }, 'station operation not sent: its caller withdrew it when its turn came');
      return null;
    }
    // A read's result (up to a whole configuration) is the caller's; the record keeps what the station said.
    const { status, statusInfo } = answer;
    const answered = { status, ...(statusInfo && { statusInfo }) };
    this.keep(stationId, { at, who, action: answer.action, request, answer: answered, error: null }, log);
    const succeeded = isSuccess(answer);
    log.info(
      { request, status: answer.status, ...(answer.statusInfo && { statusInfo: answer.statusInfo }) },
      succeeded ? 'station operation done' : 'station operation refused by the station',
    );
    return { answer, succeeded };

    function asRefusal(err: unknown): OperationAnswer {
      if (!(err instanceof StationCallError)) throw err;
      // A CALLERROR (NotImplemented, NotSupported, ...) is how a station says it will not do this.
      return {
        stationId,
        action,
        status: err.ocppErrorCode,
        statusInfo: { reasonCode: err.ocppErrorCode, ...(err.description && { additionalInfo: err.description }) },
      };
    }
  }

  /** Records the operation; a database failure is logged and leaves the station's answer to its caller. */
  private keep(stationId: string, record: OperationRecord, log: Logger): void {
    try {
      this.audit.record(stationId, record);
    } catch (err) {
      log.error({ err }, 'could not record the station operation');
    }
  }

  private connectorsOf(stationId: string): number[] {
    const station = this.options
      .config()
      .sites.flatMap((s) => s.stations)
      .find((s) => s.id === stationId);
    return station ? station.chargePoints.flatMap((cp) => cp.connectors).sort((a, b) => a - b) : [];
  }
}

/**
 * What the audit and the log keep of a request: the operation as asked, without its kind (the action says it), and
 * without the value of a key that holds a credential (1.6 AuthorizationKey, 2.0.1 SecurityCtrlr.BasicAuthPassword).
 */
function requestOf(operation: StationOperation): object {
  const { kind: _, ...request } = operation;
  if (operation.kind === 'config-set' && SECRET_KEY.test(operation.key)) return { ...request, value: '(hidden)' };
  // The download token is the image's only key while the update runs: kept out of the audit and the logs.
  if (operation.kind === 'firmware-update')
    return { ...request, location: operation.location.replace(/\/firmware\/[^/]+\//, '/firmware/(token)/') };
  // An upload location holds its token or FTP password until it is spent.
  if (operation.kind === 'logs') return { ...request, location: '(hidden)' };
  return request;
}

const SECRET_KEY = /password|secret|passphrase|authorizationkey/i;

/** How a failed operation is recorded; undefined for one refused before it was queued or sent. */
function errorKind(err: unknown): 'offline' | 'timeout' | 'error' | undefined {
  const code = errorCodeOf(err);
  if (code === 'CHARGEGATE_STATION_OFFLINE') return 'offline';
  if (code === 'CHARGEGATE_STATION_TIMEOUT') return 'timeout';
  return code !== undefined && NOT_SENT.has(code) ? undefined : 'error';
}

/** Refused before the station was asked: nothing to record (a flood of them would push real operations out). */
const NOT_SENT = new Set<ErrorCode>([
  'CHARGEGATE_STATION_BUSY',
  'CHARGEGATE_INVALID_OPERATION',
  'CHARGEGATE_NO_BASE_REPORT',
]);

import type { Config } from '../config/index.js';
import type { Authorizer } from '../authorization/index.js';
import type { Logger } from '../log/index.js';
import type { CallLanes } from './call-lane.js';
import { checkInstant, OutOfBoundsError, type Site, type Transaction } from '../site/index.js';
import type { StationClient } from './connections.js';
import type { SignCertificateThrottle } from './sign-certificate-throttle.js';
import { rpcError, type ActionMap } from './rpc.js';
import { isAdmitted } from './station-access.js';
import type { Ocpp201Actions } from './v201/messages.js';

/**
 * A station's DiagnosticsStatusNotification (1.6) or LogStatusNotification (1.6 security extension, 2.0.1): its
 * status, and the GetLog requestId it names (none in 1.6 diagnostics).
 */
export type LogStatusListener = (stationId: string, notification: { status: string; requestId?: number }) => void;

export interface StationHandlerDeps {
  site: Site;
  authorizer: Authorizer;
  config: () => Config;
  logger: Logger;
  /**
   * Warnings about what the station sent: a station repeating one mistake is logged a few times a minute, the rest
   * counted.
   */
  warn: (fields: object, message: string) => void;
  /** Counts each handled call by action and outcome (ok or the CALLERROR code). */
  countCall: (action: string, outcome: string) => void;
  /** Issues a station's client certificate from its CSR (the station CA); absent, SignCertificate is refused. */
  issueStationCertificate?: (csrPem: string, stationId: string) => Promise<string>;
  /** How many SignCertificate requests each station has sent lately: one for the central system, across connections. */
  signCertificateThrottle: SignCertificateThrottle;
  /** Where the calls chargegate sends a station on its own go, behind load management's limits. */
  lanes: CallLanes;
  /** Told once a BootNotification answered Accepted is on its way (load management sends the fail-safe then). */
  booted?: (stationId: string) => void;
  /** Told of each part of a 2.0.1 station's report (NotifyReport): an asked-for base report is kept (src/stations). */
  reported?: (stationId: string, part: Ocpp201Actions['NotifyReport'][0]) => void;
  /** Told of each diagnostics or log upload status a station sends (src/station-logs follows its collections). */
  logStatus?: LogStatusListener;
  /** Where what a station sent goes after chargegate handled it: the uplink to the operator's CSMS, when configured. */
  forwarder?: StationMessageForwarder;
  /** Told of a station's firmware progress inside the write of its call: a firmware rollout follows it (src/firmware). */
  firmware?: FirmwareProgressListener;
}

/** What a firmware rollout hears of its stations, each inside the write of the call that said it. */
export interface FirmwareProgressListener {
  /** A FirmwareStatusNotification (1.6, or 2.0.1 with its requestId). */
  status(stationId: string, status: string, requestId?: number): void;
  /** A BootNotification, with the firmwareVersion it names. */
  booted(stationId: string, firmwareVersion: string | undefined): void;
}

/** docs/design/uplink.md#uplink-what-the-csms-sees: a station's messages, after chargegate handled them, for the operator's CSMS. */
export interface StationMessageForwarder {
  /**
   * A transaction message or security event, into the station's durable queue. Called inside the write of the change
   * it caused (Site.together), so both commit before the station hears the answer, or neither does.
   */
  queue(stationId: string, message: ForwardedMessage): void;
  /** Any other message: sent now if the station's uplink is up, dropped otherwise. */
  live(stationId: string, action: string, payload: object): void;
  /**
   * A 2.0.1 station's BootNotification as it sent it, kept inside the write of its boot: the uplink introduces the
   * station with it on every connect (the station registry keeps it in 1.6's names; a 1.6 station's is kept as sent).
   */
  keepBootNotification(stationId: string, payload: object): void;
}

export interface ForwardedMessage {
  action: string;
  /** As the station sent it; a 1.6 transactionId in it is chargegate's, mapped to the CSMS's when sent. */
  payload: object;
  /** chargegate's id of the transaction it belongs to. */
  transactionId?: number;
}

/**
 * For a connector (1.6) or EVSE (2.0.1) of a configured station that the config does not list: logs what the
 * installer should add and returns true; the caller answers and changes nothing (events would name a charge
 * point nobody configured).
 */
export function unconfiguredConnectorCheck(
  stationId: string,
  deps: Pick<StationHandlerDeps, 'site' | 'warn'>,
): (action: string, connectorId: number) => boolean {
  return (action, connectorId) => {
    const fix = deps.site.connectors.unconfigured(stationId, connectorId);
    if (fix) deps.warn({ action, connectorId, fix }, 'connector not in the config: answered, no event');
    return fix !== undefined;
  };
}

export type CallHandler<Actions extends ActionMap<Actions>, A extends keyof Actions> = (
  params: Actions[A][0],
) => Actions[A][1] | Promise<Actions[A][1]>;

/**
 * How every station call is handled, whatever the protocol version: a station that is not accepted gets
 * SecurityError (BootNotification aside); the answer goes out only once the call's own writes are durable; a
 * failure that is not a deliberate CALLERROR is logged and answered InternalError.
 */
export function callRegistrar<Actions extends ActionMap<Actions>>(client: StationClient, deps: StationHandlerDeps) {
  const { site, config, logger: log, warn } = deps;
  const stationId = client.session.stationId;
  const admitted = (): boolean =>
    isAdmitted(site.stations.admission(stationId).verdict, config().ocpp.acceptUnknownStations);

  return <A extends keyof Actions & string>(
    action: A,
    handler: CallHandler<Actions, A>,
    options: { beforeAcceptance?: boolean; answered?: (result: Actions[A][1]) => void } = {},
  ): void => {
    client.handle(action, async ({ params }) => {
      site.stations.touch(stationId);
      if (!options.beforeAcceptance && !admitted()) {
        warn({ action }, 'call from a station that is not accepted; refused with SecurityError');
        deps.countCall(action, 'SecurityError');
        throw rpcError(
          'SecurityError',
          `${stationId} is not accepted by this central system; send BootNotification and wait for Accepted`,
        );
      }
      try {
        // The station hears of a change only once its own writes are durable (the domain commits a turn's changes
        // together, and a handler may write, await the authorizer, and write again).
        // Strict mode validated params against this action's schema, the one its type was generated from.
        const result = await site.durable(() => handler(params as Actions[A][0]));
        deps.countCall(action, 'ok');
        // After the answer leaves: OCPP 1.6 section 4.2 lets the central system call a station only once it is Accepted.
        if (options.answered) setImmediate(options.answered, result);
        return result;
      } catch (err) {
        const code = (err as { rpcErrorCode?: string }).rpcErrorCode;
        if (code) {
          deps.countCall(action, code);
          throw err;
        }
        if (err instanceof OutOfBoundsError) {
          warn({ action, reason: err.message }, 'station call refused: a value out of bounds');
          deps.countCall(action, 'PropertyConstraintViolation');
          throw rpcError('PropertyConstraintViolation', err.message);
        }
        log.error({ action, err }, 'station call failed');
        deps.countCall(action, 'InternalError');
        throw rpcError('InternalError', `${action} could not be processed`);
      }
    });
  };
}

/** A station's timestamp as the domain takes it: refused (PropertyConstraintViolation) when it cannot round-trip. */
export function stationTime(timestamp: string): Date {
  return checkInstant('timestamp', new Date(timestamp));
}

/**
 * A value of a stop, never refused for being out of bounds: a refused stop leaves the session open until the next
 * start on its connector closes it with that session's reading. Out of bounds, it falls back, with a warning.
 */
export function stopValue<T>(field: string, read: () => T, fallback: () => T, warn: StationHandlerDeps['warn']): T {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof OutOfBoundsError)) throw err;
    warn({ field, reason: err.message }, 'stop with a value out of bounds: closed with a fallback value');
    return fallback();
  }
}

/** The domain took a stop time before the start as the start (a station clock set back): the installer should know. */
export function warnIfStoppedBeforeStart(
  stopped: Transaction,
  stoppedAt: Date,
  warn: StationHandlerDeps['warn'],
): void {
  if (stopped.stoppedAt === stoppedAt.toISOString()) return;
  warn(
    { transactionId: stopped.id, stationTimestamp: stoppedAt.toISOString(), startedAt: stopped.startedAt },
    'transaction stopped before it started: its stop time is taken as its start time',
  );
}

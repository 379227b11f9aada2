import { ChargegateError } from '../errors/index.js';

/** The station is not connected: the command was not sent (the API answers 503). */
export class StationOfflineError extends ChargegateError {
  override name = 'StationOfflineError';
  readonly code = 'CHARGEGATE_STATION_OFFLINE';
  constructor(readonly stationId: string) {
    super(`station "${stationId}" is not connected`);
  }
}

/** The station did not answer within ocpp.callTimeoutMs (the API answers 504). */
export class StationTimeoutError extends ChargegateError {
  override name = 'StationTimeoutError';
  readonly code = 'CHARGEGATE_STATION_TIMEOUT';
  constructor(
    readonly stationId: string,
    readonly action: string,
    message = `station "${stationId}" did not answer ${action} in time`,
  ) {
    super(message);
  }
}

/**
 * The station had not answered a relayed call or an operation when a load limit had to go out: chargegate stopped
 * waiting for it (docs/operating/security.md#security). The station may still act on it.
 */
export class StationCallGivenUpError extends StationTimeoutError {
  override name = 'StationCallGivenUpError';
  constructor(stationId: string, action: string, giveUpMs: number) {
    super(
      stationId,
      action,
      `station "${stationId}" did not answer ${action} within ${giveUpMs} ms while a load limit waited: given up`,
    );
  }
}

/** The station answered with a CALLERROR (e.g. NotImplemented), or the connection dropped mid-call. */
export class StationCallError extends ChargegateError {
  override name = 'StationCallError';
  readonly code = 'CHARGEGATE_STATION_CALL';
  constructor(
    readonly stationId: string,
    readonly action: string,
    readonly ocppErrorCode: string,
    /** The CALLERROR's own description, as the station wrote it (may be empty). */
    readonly description: string,
    message = `station "${stationId}" refused ${action}: ${ocppErrorCode}${description ? ` (${description})` : ''}`,
  ) {
    super(message);
  }
}

/**
 * A CSMS call refused before it was sent: as many as chargegate queues already wait for the station
 * (docs/operating/security.md#security). GenericError, so the uplink answers the CSMS with that CALLERROR.
 */
export class RelayQueueFullError extends StationCallError {
  override name = 'RelayQueueFullError';
  constructor(stationId: string, action: string, queued: number) {
    super(
      stationId,
      action,
      'GenericError',
      '',
      `${action} not sent to station "${stationId}": ${queued} CSMS calls already wait for it`,
    );
  }
}

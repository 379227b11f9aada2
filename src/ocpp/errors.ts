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
  ) {
    super(`station "${stationId}" did not answer ${action} in time`);
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
    description: string,
  ) {
    super(`station "${stationId}" refused ${action}: ${ocppErrorCode}${description ? ` (${description})` : ''}`);
  }
}

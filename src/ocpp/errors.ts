/** The station is not connected: the command was not sent (the API answers 503). */
export class StationOfflineError extends Error {
  override name = 'StationOfflineError';
  constructor(readonly stationId: string) {
    super(`station "${stationId}" is not connected`);
  }
}

/** The station did not answer within ocpp.callTimeoutMs (the API answers 504). */
export class StationTimeoutError extends Error {
  override name = 'StationTimeoutError';
  constructor(
    readonly stationId: string,
    readonly action: string,
  ) {
    super(`station "${stationId}" did not answer ${action} in time`);
  }
}

/** The station answered with a CALLERROR (e.g. NotImplemented), or the connection dropped mid-call. */
export class StationCallError extends Error {
  override name = 'StationCallError';
  constructor(
    readonly stationId: string,
    readonly action: string,
    readonly code: string,
    description: string,
  ) {
    super(`station "${stationId}" refused ${action}: ${code}${description ? ` (${description})` : ''}`);
  }
}

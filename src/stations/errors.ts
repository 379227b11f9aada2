import { ChargegateError } from '../errors/index.js';

/** As many operations as a station's queue holds already wait for it (the API answers 429 station_busy). */
export class StationBusyError extends ChargegateError {
  override name = 'StationBusyError';
  readonly code = 'CHARGEGATE_STATION_BUSY';
  constructor(
    readonly stationId: string,
    readonly waiting: number,
  ) {
    super(`station "${stationId}" is busy: ${waiting} operations already wait for it; try again when they are done`);
  }
}

/** An operation that cannot be sent as asked: an unknown connector, a malformed key, a message the protocol lacks. */
export class InvalidOperationError extends ChargegateError {
  override name = 'InvalidOperationError';
  readonly code = 'CHARGEGATE_INVALID_OPERATION';
}

/** `config get` without keys on a 2.0.1 station that has sent no base report yet (`station report` first). */
export class NoBaseReportError extends ChargegateError {
  override name = 'NoBaseReportError';
  readonly code = 'CHARGEGATE_NO_BASE_REPORT';
  constructor(readonly stationId: string) {
    super(`station "${stationId}" has sent no base report yet: ask for one first (station report / POST .../report)`);
  }
}

import { ChargegateError } from '../errors/index.js';

/**
 * Why a Modbus request failed. `exception`: the device answered with a Modbus exception (it is there, the request
 * is wrong); `timeout`: no answer in time; `transport`: the socket or serial port failed; `closed`: we are stopping.
 */
export type BusErrorKind = 'exception' | 'timeout' | 'transport' | 'closed';

export class BusError extends ChargegateError {
  override name = 'BusError';
  readonly code = 'CHARGEGATE_MODBUS_BUS';
  constructor(
    readonly kind: BusErrorKind,
    message: string,
  ) {
    super(message);
  }
}

import { ChargegateError } from '../errors/index.js';

/** Why a firmware request was refused: an image over its bounds or already stored, one in use, a rollout's conflict. */
export class FirmwareError extends ChargegateError {
  override name = 'FirmwareError';
  readonly code = 'CHARGEGATE_FIRMWARE';
  constructor(
    message: string,
    /** invalid: the request itself is wrong (HTTP 400, exit 2); conflict: it collides with what is (409, exit 1). */
    readonly kind: 'invalid' | 'conflict' | 'not-found',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

import { ChargegateError } from '../errors/index.js';

/** A request the domain refuses (unknown site, conflicting pairing): the message is meant for the installer. */
export class DomainError extends ChargegateError {
  override name = 'DomainError';
  readonly code = 'CHARGEGATE_DOMAIN_REFUSED';
}

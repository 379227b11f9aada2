import { ChargegateError } from '../errors/index.js';

/**
 * What the domain takes from a station or meter before it stores or sends it: a value outside these bounds would
 * reach partners as `null`, `Infinity` or a five-digit year, and be billed from.
 */

/** Far beyond any charger's energy register (1 TWh); the Modbus readings' own bound is the same. */
export const MAX_ENERGY_WH = 1e12;

// Before the Unix epoch no station clock has a meaning; past the upper bound a time may format as year 10000 in
// some zone, which no ISO 8601 reader of a partner's takes back.
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 30);

/** A value from a station or meter the domain refuses: nothing is changed, the caller answers with the message. */
export class OutOfBoundsError extends ChargegateError {
  override name = 'OutOfBoundsError';
  readonly code = 'CHARGEGATE_OUT_OF_BOUNDS';
}

/** An energy register reading in Wh: finite, not negative, within MAX_ENERGY_WH. */
export function checkEnergyWh(field: string, wh: number): number {
  if (!Number.isFinite(wh) || wh < 0 || wh > MAX_ENERGY_WH)
    throw new OutOfBoundsError(`${field}: ${wh} Wh is not an energy register reading (0 to ${MAX_ENERGY_WH} Wh)`);
  return wh;
}

/** Far beyond any charger's current per phase. */
export const MAX_CURRENT_A = 10_000;

/** A current per phase in A: finite, not negative, within MAX_CURRENT_A. */
export function checkCurrentA(field: string, a: number): number {
  if (!Number.isFinite(a) || a < 0 || a > MAX_CURRENT_A)
    throw new OutOfBoundsError(`${field}: ${a} A is not a current (0 to ${MAX_CURRENT_A} A)`);
  return a;
}

/** A station's time: a real instant between 1970 and 9999 (a leap second, which no Date holds, is refused too). */
export function checkInstant(field: string, at: Date): Date {
  const ms = at.getTime();
  if (!(ms >= EARLIEST && ms < LATEST))
    throw new OutOfBoundsError(`${field}: not a time between 1970 and 9999 that can be stored and sent back`);
  return at;
}

/** A station's time if it is one the domain can store, else `fallback` (a reading is kept either way). */
export function instantOr(at: Date, fallback: Date): Date {
  try {
    return checkInstant('timestamp', at);
  } catch {
    return fallback;
  }
}

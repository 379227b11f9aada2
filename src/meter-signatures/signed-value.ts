import type { KeyObject } from 'node:crypto';
import { isOcmfText, OcmfFormatError, parseOcmf, type OcmfRecord } from './ocmf.js';
import { MeterKeyError, parseMeterPublicKey } from './public-key.js';
import { verifyOcmfRecord } from './verify.js';

/**
 * A signed reading in the four fields OCPP 2.0.1 names (and the 1.6 whitepaper's JSON form), each exactly as the
 * station sent it; null where the station's value had none.
 */
export interface SignedMeterValue {
  signedMeterData: string;
  signingMethod: string | null;
  encodingMethod: string | null;
  publicKey: string | null;
}

/**
 * An OCPP 1.6 SampledValue with format SignedData: the Signed Meter Values whitepaper's JSON object, or a bare OCMF
 * record. Anything else is kept whole as its data, with no method: it verifies as false.
 */
export function signedValueFromV16(value: string): SignedMeterValue {
  if (isOcmfText(value))
    return { signedMeterData: value, signingMethod: null, encodingMethod: 'OCMF', publicKey: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const text = (name: string): string | null => (typeof fields[name] === 'string' ? fields[name] : null);
  const signedMeterData = text('signedMeterData');
  if (signedMeterData === null)
    return { signedMeterData: value, signingMethod: null, encodingMethod: null, publicKey: null };
  return {
    signedMeterData,
    signingMethod: text('signingMethod'),
    encodingMethod: text('encodingMethod'),
    publicKey: text('publicKey'),
  };
}

/**
 * The OCMF record a signed value carries: its data as it is, or base64 of it (OCPP 2.0.1 says signedMeterData is
 * base64); undefined when it carries none.
 */
export function ocmfTextOf(value: Pick<SignedMeterValue, 'signedMeterData'>): string | undefined {
  const data = value.signedMeterData;
  if (isOcmfText(data)) return data;
  const decoded = Buffer.from(data, 'base64').toString('utf8');
  return isOcmfText(decoded) && Buffer.from(decoded, 'utf8').toString('base64') === data.replace(/\s/g, '')
    ? decoded
    : undefined;
}

/** How a signed value checks out, and what was wrong with it when it does not. */
export interface SignedValueVerdict {
  verified: boolean | null;
  /** Why it is false, or why it cannot be told when the station's key is unreadable. */
  problem?: string;
  /** The record was read and its signature checked against installer-pinned keys. */
  againstPinnedKey?: true;
}

/**
 * Verifies a signed value (docs/partners/signed-meter-values.md#signed-meter-values): against `keys` when given (installer-pinned keys), else
 * against the key the station sent with it (or `fallbackKey`, one it sent earlier in the transaction). A value whose
 * encoding is not OCMF, or whose station key is in no form read, cannot be told (null); one that claims OCMF or names
 * no encoding and is no readable record is false.
 */
export function verifySignedValue(
  value: SignedMeterValue,
  keys: { pinned: readonly KeyObject[]; fallbackKey?: string | null },
): SignedValueVerdict {
  const text = ocmfTextOf(value);
  if (text === undefined) {
    const encoding = value.encodingMethod;
    if (encoding !== null && encoding.toUpperCase() !== 'OCMF') return { verified: null };
    return { verified: false, problem: encoding === null ? 'neither signed-value form' : 'no OCMF record in it' };
  }
  let record: OcmfRecord;
  try {
    record = parseOcmf(text);
  } catch (err) {
    if (err instanceof OcmfFormatError) return { verified: false, problem: err.message };
    throw err;
  }
  const pinned = keys.pinned.length > 0;
  let stationKeys: KeyObject[] = [];
  const sent = value.publicKey || keys.fallbackKey;
  if (!pinned && sent)
    try {
      stationKeys = [parseMeterPublicKey(sent)];
    } catch (err) {
      // A key in no form we read says nothing about the record: cannot tell, never forged.
      if (err instanceof MeterKeyError) return { verified: null, problem: `the station's key: ${err.message}` };
      throw err;
    }
  const verified = verifyOcmfRecord(record, pinned ? keys.pinned : stationKeys);
  return {
    verified,
    ...(verified === false && { problem: 'signature does not verify' }),
    ...(pinned && { againstPinnedKey: true }),
  };
}

/**
 * The imported energy (Wh) a signed value's OCMF record states for a reading of type `tx` (B begin, E end), or its
 * only reading: the register (OBIS 1.8.0) first, in kWh or Wh; with the half step the value is written to, so a
 * comparison allows for the meter's rounding. Undefined when the record states none.
 */
export function signedEnergyWh(
  value: Pick<SignedMeterValue, 'signedMeterData'>,
  tx: 'B' | 'E',
): { wh: number; toleranceWh: number } | undefined {
  const text = ocmfTextOf(value);
  if (text === undefined) return undefined;
  let readings;
  try {
    readings = parseOcmf(text).readings;
  } catch {
    return undefined;
  }
  const energy = readings.filter((r) => r.value !== undefined && (r.unit === 'kWh' || r.unit === 'Wh'));
  const ofType = energy.filter((r) => r.type === tx || r.type === undefined);
  const candidates = ofType.length > 0 ? ofType : energy.length === 1 ? energy : [];
  const reading = candidates.find((r) => /(^|[:.-])0?1\.0?8\.0/.test(r.id ?? '')) ?? candidates[0];
  if (reading?.value === undefined) return undefined;
  const scale = reading.unit === 'kWh' ? 1000 : 1;
  const decimals = decimalsWritten(reading.valueText ?? String(reading.value));
  return { wh: reading.value * scale, toleranceWh: Math.max(0.5, (scale * 10 ** -decimals) / 2) };
}

/** The decimals a number token is written to: "12.000" 3, "12" 0, "1.25e1" 1 (its exponent shifts them). */
function decimalsWritten(token: string): number {
  const [mantissa = '', exponent = '0'] = token.toLowerCase().split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}

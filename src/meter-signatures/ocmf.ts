import { ChargegateError } from '../errors/index.js';

/**
 * The Open Charge Metering Format (OCMF, S.A.F.E. e.V.): `OCMF|{payload}|{signature}`. The signature covers the
 * payload section exactly as it stands in the record, so the record is kept as text and only read, never rebuilt.
 */

/** A record that is no OCMF record, with what is wrong with it. */
export class OcmfFormatError extends ChargegateError {
  override name = 'OcmfFormatError';
  readonly code = 'CHARGEGATE_OCMF_MALFORMED';
}

/** One reading of a record's `RD` list, the fields chargegate reads (the others stay in the record's text). */
export interface OcmfReading {
  /** `TM`: the meter's time of the reading, as written. */
  time?: string;
  /** `TX`: B(egin), C(harging), X, E(nd), L, R, A, P, S, T. */
  type?: string;
  /** `RV`: the value. */
  value?: number;
  /** `RV` as the record writes it ("12.000"): its precision, which the number has lost. */
  valueText?: string;
  /** `RU`: its unit (kWh, Wh, ...). */
  unit?: string;
  /** `RI`: its OBIS identifier (1-b:1.8.0 is imported active energy). */
  id?: string;
}

export interface OcmfSignature {
  /** `SA`: ECDSA-secp256r1-SHA256 when the record names none. */
  algorithm: string;
  /** `SE`: how SD is written. */
  encoding: 'hex' | 'base64';
  /** `SM`: application/x-der, the only one the format lists. */
  mimeType: string;
  /** `SD` decoded. */
  data: Buffer;
}

export interface OcmfRecord {
  /** The payload section exactly as in the record: the bytes the signature covers (UTF-8). */
  payloadText: string;
  readings: OcmfReading[];
  signature: OcmfSignature;
}

const HEADER = 'OCMF|';
const HEX = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** True when text looks like an OCMF record (it may still be a broken one). */
export function isOcmfText(text: string): boolean {
  return text.startsWith(HEADER);
}

/**
 * Reads an OCMF record. The signature section is the text after the last `|` (its fields are hex, base64 and
 * names, none of which holds a `|`), the payload everything between: a `|` inside a payload string stays in it.
 */
export function parseOcmf(text: string): OcmfRecord {
  if (!isOcmfText(text)) throw new OcmfFormatError('not an OCMF record: it does not begin with "OCMF|"');
  const last = text.lastIndexOf('|');
  if (last < HEADER.length) throw new OcmfFormatError('not an OCMF record: it has no signature section');
  const payloadText = text.slice(HEADER.length, last);
  const rvText = new WeakMap<object, string>();
  const payload = jsonObject(payloadText, 'payload', function (this: object, key, value, context) {
    if (key === 'RV' && typeof value === 'number' && context?.source !== undefined) rvText.set(this, context.source);
    return value;
  });
  const signature = jsonObject(text.slice(last + 1), 'signature');
  return { payloadText, readings: readingsOf(payload.RD, rvText), signature: signatureOf(signature) };
}

/** JSON.parse's reviver with the source text of each primitive (Node 21 and later). */
type Reviver = (this: object, key: string, value: unknown, context?: { source?: string }) => unknown;

function jsonObject(text: string, section: string, reviver?: Reviver): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]);
  } catch {
    throw new OcmfFormatError(`OCMF ${section} section is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new OcmfFormatError(`OCMF ${section} section is not a JSON object`);
  return value as Record<string, unknown>;
}

function readingsOf(rd: unknown, rvText: WeakMap<object, string>): OcmfReading[] {
  if (rd === undefined) return [];
  if (!Array.isArray(rd)) throw new OcmfFormatError('OCMF payload RD is not a list');
  return rd.map((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw new OcmfFormatError(`OCMF payload RD[${i}] is not an object`);
    const { TM, TX, RV, RU, RI } = entry as Record<string, unknown>;
    const field = <T>(name: string, value: unknown, type: 'string' | 'number'): T | undefined => {
      if (value === undefined) return undefined;
      if (typeof value !== type || (type === 'number' && !Number.isFinite(value)))
        throw new OcmfFormatError(`OCMF payload RD[${i}].${name} is not a ${type}`);
      return value as T;
    };
    const reading: OcmfReading = {};
    const time = field<string>('TM', TM, 'string');
    const type = field<string>('TX', TX, 'string');
    const value = field<number>('RV', RV, 'number');
    const unit = field<string>('RU', RU, 'string');
    const id = field<string>('RI', RI, 'string');
    if (time !== undefined) reading.time = time;
    if (type !== undefined) reading.type = type;
    if (value !== undefined) reading.value = value;
    const valueText = rvText.get(entry);
    if (value !== undefined && valueText !== undefined) reading.valueText = valueText;
    if (unit !== undefined) reading.unit = unit;
    if (id !== undefined) reading.id = id;
    return reading;
  });
}

function signatureOf(section: Record<string, unknown>): OcmfSignature {
  const text = (name: string, fallback?: string): string => {
    const value = section[name] ?? fallback;
    if (typeof value !== 'string') throw new OcmfFormatError(`OCMF signature ${name} is missing or not a string`);
    return value;
  };
  const encoding = text('SE', 'hex');
  if (encoding !== 'hex' && encoding !== 'base64')
    throw new OcmfFormatError(`OCMF signature SE "${encoding}" is neither hex nor base64`);
  const sd = text('SD');
  if (!(encoding === 'hex' ? HEX : BASE64).test(sd)) throw new OcmfFormatError(`OCMF signature SD is not ${encoding}`);
  return {
    algorithm: text('SA', 'ECDSA-secp256r1-SHA256'),
    encoding,
    mimeType: text('SM', 'application/x-der'),
    data: Buffer.from(sd, encoding),
  };
}

/** True for a DER ECDSA signature: SEQUENCE { INTEGER r, INTEGER s } and nothing after it (a hash is not one). */
export function isDerEcdsaSignature(der: Buffer): boolean {
  let at = 0;
  const length = (): number | undefined => {
    const first = der[at++];
    if (first === undefined) return undefined;
    if (first < 0x80) return first;
    if (first !== 0x81) return undefined; // an ECDSA signature is shorter than 256 bytes
    const next = der[at++];
    return next !== undefined && next >= 0x80 ? next : undefined;
  };
  if (der[at++] !== 0x30) return false;
  const sequence = length();
  if (sequence === undefined || at + sequence !== der.length) return false;
  for (let i = 0; i < 2; i++) {
    if (der[at++] !== 0x02) return false;
    const integer = length();
    if (integer === undefined || integer === 0 || at + integer > der.length) return false;
    at += integer;
  }
  return at === der.length;
}

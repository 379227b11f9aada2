import { createPublicKey, type KeyObject } from 'node:crypto';
import { ChargegateError } from '../errors/index.js';

/** A meter public key that cannot be read, with why. */
export class MeterKeyError extends ChargegateError {
  override name = 'MeterKeyError';
  readonly code = 'CHARGEGATE_METER_KEY';
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A meter's EC public key as stations and installers write it (README "Signed meter values"): PEM, or the hex or
 * base64 of its DER SubjectPublicKeyInfo. Some stations base64 the PEM or the hex again: one such wrapping is undone.
 */
export function parseMeterPublicKey(text: string): KeyObject {
  return parse(text.trim(), true);
}

function parse(text: string, unwrap: boolean): KeyObject {
  let key: KeyObject;
  try {
    if (text.startsWith('-----BEGIN')) key = createPublicKey(text);
    else if (HEX.test(text)) key = der(Buffer.from(text, 'hex'));
    else if (BASE64.test(text) && text.length > 0) {
      const bytes = Buffer.from(text, 'base64');
      const inner = bytes.toString('latin1').trim();
      key = unwrap && (inner.startsWith('-----BEGIN') || HEX.test(inner)) ? parse(inner, false) : der(bytes);
    } else throw new MeterKeyError('a meter public key is PEM, or the hex or base64 of its DER SubjectPublicKeyInfo');
  } catch (err) {
    if (err instanceof MeterKeyError) throw err;
    throw new MeterKeyError(`not a public key: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ec') throw new MeterKeyError(`a ${key.asymmetricKeyType} key: meters sign with EC`);
  return key;
}

function der(bytes: Buffer): KeyObject {
  return createPublicKey({ key: bytes, format: 'der', type: 'spki' });
}

/** One spelling of a key, whatever form it came in: the hex of its DER SubjectPublicKeyInfo. */
export function meterKeyHex(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'der' }).toString('hex');
}

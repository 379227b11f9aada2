import { createPublicKey, type KeyObject } from 'node:crypto';
import { ChargegateError } from '../errors/index.js';

/** A meter public key that cannot be read, with why. */
export class MeterKeyError extends ChargegateError {
  override name = 'MeterKeyError';
  readonly code = 'CHARGEGATE_METER_KEY';
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The OCA note's envelope (section 3.2.2): `oca:<encoding>:asn1:<the DER SubjectPublicKeyInfo so encoded>`. */
const ENVELOPE = /^(?:oca:)?(base16|base64):asn1:([\s\S]*)$/i;

const FORMS =
  'a meter public key is PEM, or the hex or base64 of its DER SubjectPublicKeyInfo, or the OCA note\'s "oca:base16:asn1:<hex>" or "oca:base64:asn1:<base64>"';

/**
 * A meter's EC public key as stations and installers write it (docs/partners/signed-meter-values.md#signed-meter-values): PEM, the hex or base64
 * of its DER SubjectPublicKeyInfo, or the OCA note's envelope `oca:base16:asn1:<hex>` / `oca:base64:asn1:<base64>`
 * (with or without `oca:`). Stations base64 the PEM, the hex or the envelope again (the note prescribes base64 of the
 * envelope; its example message sends base64 of the hex): one such wrapping is undone.
 */
export function parseMeterPublicKey(text: string): KeyObject {
  return parse(text.trim(), true);
}

function parse(text: string, unwrap: boolean): KeyObject {
  let key: KeyObject;
  try {
    const envelope = ENVELOPE.exec(text);
    if (envelope) key = der(enveloped(envelope[1]!.toLowerCase(), envelope[2]!));
    else if (text.startsWith('-----BEGIN')) key = createPublicKey(text);
    else if (HEX.test(text)) key = der(Buffer.from(text, 'hex'));
    else if (BASE64.test(text) && text.length > 0) {
      const bytes = Buffer.from(text, 'base64');
      const inner = bytes.toString('latin1').trim();
      const wrapped = inner.startsWith('-----BEGIN') || HEX.test(inner) || ENVELOPE.test(inner);
      key = unwrap && wrapped ? parse(inner, false) : der(bytes);
    } else throw new MeterKeyError(FORMS);
  } catch (err) {
    if (err instanceof MeterKeyError) throw err;
    throw new MeterKeyError(`not a public key: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ec') throw new MeterKeyError(`a ${key.asymmetricKeyType} key: meters sign with EC`);
  return key;
}

/** The DER an envelope carries. The note lets base16 carry other characters (the key as printed): they are ignored. */
function enveloped(encoding: string, body: string): Buffer {
  if (encoding === 'base16') {
    const hex = body.replace(/[^0-9a-fA-F]/g, '');
    if (!HEX.test(hex)) throw new MeterKeyError(`"${encoding}:asn1:" carries no whole bytes of hex`);
    return Buffer.from(hex, 'hex');
  }
  const base64 = body.replace(/\s/g, '');
  if (!BASE64.test(base64) || base64.length === 0) throw new MeterKeyError(`"${encoding}:asn1:" carries no base64`);
  return Buffer.from(base64, 'base64');
}

function der(bytes: Buffer): KeyObject {
  return createPublicKey({ key: bytes, format: 'der', type: 'spki' });
}

/** One spelling of a key, whatever form it came in: the hex of its DER SubjectPublicKeyInfo. */
export function meterKeyHex(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'der' }).toString('hex');
}

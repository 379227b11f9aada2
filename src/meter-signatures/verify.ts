import { getCurves, verify, type KeyObject } from 'node:crypto';
import { isDerEcdsaSignature, type OcmfRecord } from './ocmf.js';

/** The OCMF signature algorithms (all SHA-256 over the payload section) and the curve each names, as OpenSSL calls it. */
const CURVE_OF: Readonly<Record<string, string>> = {
  'ECDSA-secp192k1-SHA256': 'secp192k1',
  'ECDSA-secp192r1-SHA256': 'prime192v1',
  'ECDSA-secp256k1-SHA256': 'secp256k1',
  'ECDSA-secp256r1-SHA256': 'prime256v1',
  'ECDSA-secp384r1-SHA256': 'secp384r1',
  'ECDSA-brainpool256r1-SHA256': 'brainpoolP256r1',
};

/** The OCMF algorithms this node:crypto can check. */
export const CHECKABLE_ALGORITHMS: readonly string[] = Object.keys(CURVE_OF).filter((sa) =>
  getCurves().includes(CURVE_OF[sa]!),
);

/**
 * Checks a record's signature: true when one of `keys` (of the record's curve) verifies it, false when none does or
 * the signature is no DER ECDSA signature at all (a simulator's hash), null when it cannot be told (no key, an
 * algorithm node:crypto lacks).
 */
export function verifyOcmfRecord(record: OcmfRecord, keys: readonly KeyObject[]): boolean | null {
  const { signature } = record;
  const curve = CURVE_OF[signature.algorithm];
  if (!curve || !CHECKABLE_ALGORITHMS.includes(signature.algorithm) || signature.mimeType !== 'application/x-der')
    return null;
  if (!isDerEcdsaSignature(signature.data)) return false;
  if (keys.length === 0) return null;
  const payload = Buffer.from(record.payloadText, 'utf8');
  return keys.some(
    (key) =>
      key.asymmetricKeyDetails?.namedCurve === curve &&
      verify('sha256', payload, { key, dsaEncoding: 'der' }, signature.data),
  );
}

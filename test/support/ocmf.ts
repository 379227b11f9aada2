import { generateKeyPairSync, sign, verify, createPublicKey, type KeyObject } from 'node:crypto';

/**
 * OCMF records made the way a calibrated meter makes them (docs/partners/signed-meter-values.md#signed-meter-values), with keys made here by
 * node:crypto: chargegate's own code makes none of them, so its checks are tested against readings it did not make.
 */
export interface MeterKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** Hex of the DER SubjectPublicKeyInfo, as meters print it. */
  publicKeyHex: string;
  /** The record's `SA`. */
  algorithm: string;
}

/** OCMF's signature algorithms and the curve each names, as OpenSSL calls it. */
export const OCMF_CURVES: Readonly<Record<string, string>> = {
  'ECDSA-secp192k1-SHA256': 'secp192k1',
  'ECDSA-secp192r1-SHA256': 'prime192v1',
  'ECDSA-secp256k1-SHA256': 'secp256k1',
  'ECDSA-secp256r1-SHA256': 'prime256v1',
  'ECDSA-secp384r1-SHA256': 'secp384r1',
  'ECDSA-brainpool256r1-SHA256': 'brainpoolP256r1',
};

/** A meter's key pair: P-256, P-384, or the curve of any OCMF algorithm named. */
export function meterKey(curve: 'P-256' | 'P-384' | keyof typeof OCMF_CURVES = 'P-256'): MeterKey {
  const algorithm = curve === 'P-256' ? 'ECDSA-secp256r1-SHA256' : curve === 'P-384' ? 'ECDSA-secp384r1-SHA256' : curve;
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: OCMF_CURVES[algorithm]! });
  return {
    privateKey,
    publicKey,
    publicKeyHex: publicKey.export({ type: 'spki', format: 'der' }).toString('hex'),
    algorithm,
  };
}

/**
 * A meter key in every form a station may send it in (docs/partners/signed-meter-values.md#signed-meter-values), by name: the OCA note's
 * envelope base64'd as it prescribes, with and without `oca:` and base16 or base64 inside, the envelope bare, the
 * note's example message's base64 of the hex, and the hex, base64 and PEM read before.
 */
export function meterKeyForms(key: MeterKey): Record<string, string> {
  const hex = key.publicKeyHex;
  const base64 = Buffer.from(hex, 'hex').toString('base64');
  const pem = key.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return {
    'base64 of oca:base16:asn1 (the note)': b64(`oca:base16:asn1:${hex}`),
    'base64 of oca:base64:asn1': b64(`oca:base64:asn1:${base64}`),
    'base64 of base16:asn1': b64(`base16:asn1:${hex.toUpperCase()}`),
    'base64 of base64:asn1': b64(`base64:asn1:${base64}`),
    'oca:base16:asn1, spaced as printed': `oca:base16:asn1:${hex.replace(/(.{4})/g, '$1 ')}`,
    'oca:base64:asn1': `oca:base64:asn1:${base64}`,
    'base16:asn1': `base16:asn1:${hex}`,
    'base64:asn1': `base64:asn1:${base64}`,
    "base64 of the hex (the note's example message)": b64(hex),
    hex,
    base64,
    pem,
    'base64 of the PEM': b64(pem),
  };
}

/**
 * An OCMF record of one energy reading, TX B or E, signed by key (SD hex DER unless base64 is asked). A kWh given as
 * text is written as that number token, as a meter writes it ("12.000").
 */
export function ocmfRecord(
  key: MeterKey,
  reading: { tx: 'B' | 'E' | 'T'; kWh: number | string; at?: Date; serial?: string },
  options: { encoding?: 'hex' | 'base64' } = {},
): string {
  const written = JSON.stringify({
    FV: '1.0',
    GI: 'ACME Meter',
    GS: reading.serial ?? 'MTR-0001',
    GV: '1.2.3',
    PG: `T${reading.tx === 'B' ? 1 : 2}`,
    MV: 'ACME',
    MS: reading.serial ?? 'MTR-0001',
    IS: true,
    IT: 'ISO14443',
    ID: '04A2B3C4',
    RD: [
      {
        TM: `${(reading.at ?? new Date()).toISOString().replace('Z', '+0000').replace('.', ',')} S`,
        TX: reading.tx,
        RV: reading.kWh,
        RI: '1-b:1.8.0',
        RU: 'kWh',
        RT: 'AC',
        ST: 'G',
      },
    ],
  });
  const payload =
    typeof reading.kWh === 'string' ? written.replace(`"RV":"${reading.kWh}"`, `"RV":${reading.kWh}`) : written;
  const encoding = options.encoding ?? 'hex';
  const sd = sign('sha256', Buffer.from(payload, 'utf8'), { key: key.privateKey, dsaEncoding: 'der' }).toString(
    encoding,
  );
  return `OCMF|${payload}|${JSON.stringify({ SA: key.algorithm, ...(encoding === 'base64' && { SE: 'base64' }), SD: sd })}`;
}

/** The record with its payload changed after signing (a forged reading): the value says more energy. */
export function forged(record: string): string {
  return record.replace(/"RV":([0-9.]+)/, (_m, v: string) => `"RV":${Number(v) + 10}`);
}

/** A simulator's record: the "signature" is a SHA-256 hash in hex, no ECDSA signature at all. */
export function simulatedRecord(kWh: number, tx: 'B' | 'E'): string {
  const payload = JSON.stringify({
    FV: '1.0',
    PG: 'T1',
    MS: 'SIM',
    IS: false,
    IT: 'NONE',
    RD: [{ TX: tx, RV: kWh, RU: 'kWh' }],
  });
  return `OCMF|${payload}|{"SA":"ECDSA-secp256r1-SHA256","SD":"${'ab'.repeat(32)}"}`;
}

/**
 * The test's own OCMF check, independent of chargegate's: split at the last `|`, verify the payload text with the
 * key; P-256 or P-384 by the key, SHA-256 as OCMF's algorithms all are.
 */
export function independentlyVerified(record: string, publicKeyHex: string): boolean {
  const last = record.lastIndexOf('|');
  const payload = record.slice('OCMF|'.length, last);
  const signature = JSON.parse(record.slice(last + 1)) as { SD: string; SE?: string };
  const key = createPublicKey({ key: Buffer.from(publicKeyHex, 'hex'), format: 'der', type: 'spki' });
  return verify(
    'sha256',
    Buffer.from(payload, 'utf8'),
    { key, dsaEncoding: 'der' },
    Buffer.from(signature.SD, signature.SE === 'base64' ? 'base64' : 'hex'),
  );
}

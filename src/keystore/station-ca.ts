import { createPublicKey, sign, verify, X509Certificate, type KeyObject } from 'node:crypto';
import type forgeModule from 'node-forge';
import { ChargegateError } from '../errors/index.js';
import { newSerialNumber, selfSignedCertificate } from './self-signed.js';

/** The station CA's certificate (PEM) and its private key. */
export interface StationCaMaterial {
  certificate: string;
  privateKey: KeyObject;
}

/** A certificate signing request chargegate refuses to sign: the message says why. */
export class StationCsrError extends ChargegateError {
  override name = 'StationCsrError';
  readonly code = 'CHARGEGATE_STATION_CSR';
}

/** How long the station CA is valid (20 years); no certificate it or a command issues should outlive it. */
export const STATION_CA_DAYS = 20 * 365;

/** How long a station's client certificate from SignCertificate or `station cert` is valid, by default. */
export const STATION_CERTIFICATE_DAYS = 825;

/**
 * A new CA for security profile 3: it signs the client certificates stations present, and the OCPP listener trusts only
 * it.
 */
export function createStationCa(
  name: string,
  now = new Date(),
): Promise<{ certificate: string; privateKeyPem: string }> {
  return selfSignedCertificate({
    modulusLength: 3072,
    subject: [
      { name: 'commonName', value: `${name} station CA` },
      { name: 'organizationName', value: 'chargegate gateway' },
    ],
    extensions: [
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ],
    validDays: STATION_CA_DAYS,
    now,
  });
}

/**
 * RSA station keys: smaller ones are breakable, larger ones add nothing a station needs and only cost the gateway time.
 */
const RSA_MODULUS_BITS = { min: 2048, max: 4096 };
/** The one exponent keys are made with; any other (a huge one above all) only makes checking a signature slow. */
const RSA_PUBLIC_EXPONENT = 65537n;
/** The curves of ECDSA station keys (OCPP 2.0.1 stations commonly use P-256), by Node's name for them. */
const EC_CURVES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384' };

/** The CSR signature algorithms accepted, by OID: the key type each implies and its digest. */
const SIGNATURE_ALGORITHMS: Record<string, { keyType: 'rsa' | 'ec'; digest: string }> = {
  '1.2.840.113549.1.1.11': { keyType: 'rsa', digest: 'sha256' }, // sha256WithRSAEncryption
  '1.2.840.113549.1.1.12': { keyType: 'rsa', digest: 'sha384' },
  '1.2.840.113549.1.1.13': { keyType: 'rsa', digest: 'sha512' },
  '1.2.840.10045.4.3.2': { keyType: 'ec', digest: 'sha256' }, // ecdsa-with-SHA256
  '1.2.840.10045.4.3.3': { keyType: 'ec', digest: 'sha384' },
  '1.2.840.10045.4.3.4': { keyType: 'ec', digest: 'sha512' },
};

/** node-forge functions its type declarations leave out. */
interface ForgeUndeclared {
  asn1: {
    validate(obj: forgeModule.asn1.Asn1, shape: object, capture: Record<string, unknown>, errors: string[]): boolean;
  };
  pki: {
    RDNAttributesAsArray(name: forgeModule.asn1.Asn1): Array<{ shortName?: string; value: unknown }>;
    getTBSCertificate(cert: forgeModule.pki.Certificate): forgeModule.asn1.Asn1;
  };
}

/**
 * The parts of a PKCS#10 CertificationRequest (RFC 2986) a CSR is checked by, as forge's asn1.validate captures them.
 */
function certificationRequestShape(forge: typeof forgeModule): object {
  const { UNIVERSAL } = forge.asn1.Class;
  const { SEQUENCE, INTEGER, OID, BITSTRING } = forge.asn1.Type;
  return {
    name: 'CertificationRequest',
    tagClass: UNIVERSAL,
    type: SEQUENCE,
    constructed: true,
    value: [
      {
        name: 'certificationRequestInfo',
        tagClass: UNIVERSAL,
        type: SEQUENCE,
        constructed: true,
        captureAsn1: 'info',
        value: [
          { name: 'version', tagClass: UNIVERSAL, type: INTEGER, constructed: false },
          { name: 'subject', tagClass: UNIVERSAL, type: SEQUENCE, constructed: true, captureAsn1: 'subject' },
          {
            name: 'subjectPKInfo',
            tagClass: UNIVERSAL,
            type: SEQUENCE,
            constructed: true,
            captureAsn1: 'subjectPublicKeyInfo',
          },
        ],
      },
      {
        name: 'signatureAlgorithm',
        tagClass: UNIVERSAL,
        type: SEQUENCE,
        constructed: true,
        value: [{ name: 'algorithm', tagClass: UNIVERSAL, type: OID, constructed: false, capture: 'signatureOid' }],
      },
      {
        name: 'signature',
        tagClass: UNIVERSAL,
        type: BITSTRING,
        constructed: false,
        captureBitStringValue: 'signature',
      },
    ],
  };
}

/**
 * A station's CSR that passed every check: the station it names and its public key (SubjectPublicKeyInfo DER, as sent).
 */
export interface StationCsr {
  stationId: string;
  keyType: 'rsa' | 'ec';
  subjectPublicKeyInfo: Buffer;
}

/**
 * Reads and checks a station's CSR: it must name that station (docs/install/connecting-stations.md#connecting-a-station, "Profile 3
 * certificates"), carry an RSA or EC key within the limits above, and be signed by that key. Everything cheap comes
 * first; the signature is checked last, natively on the thread pool, so no request can hold the event loop. Any refusal
 * is a StationCsrError.
 */
export async function readStationCsr(csrPem: string, stationId: string): Promise<StationCsr> {
  const { default: forge } = await import('node-forge');
  const request = requestParts(forge, csrPem);
  const { commonName } = request;
  if (commonName !== stationId)
    throw new StationCsrError(
      `the request names "${typeof commonName === 'string' ? commonName : '(no common name)'}", not station "${stationId}"`,
    );

  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: request.subjectPublicKeyInfo, format: 'der', type: 'spki' });
  } catch (err) {
    throw new StationCsrError(`unreadable public key (${(err as Error).message})`, { cause: err });
  }
  const keyType = acceptedKeyType(publicKey);

  const algorithm = SIGNATURE_ALGORITHMS[request.signatureOid];
  if (!algorithm)
    throw new StationCsrError(
      `signature algorithm ${request.signatureOid} not supported: only SHA-256, SHA-384 or SHA-512 with RSA or ECDSA`,
    );
  if (algorithm.keyType !== keyType)
    throw new StationCsrError(
      `signature algorithm ${request.signatureOid} does not fit the request's ${keyType.toUpperCase()} key`,
    );
  const valid = await new Promise<boolean>((resolve) =>
    // With a callback, OpenSSL checks it on the thread pool; an error is a signature that could not be checked.
    verify(algorithm.digest, request.certificationRequestInfo, publicKey, request.signature, (err, result) =>
      resolve(!err && result),
    ),
  );
  if (!valid) throw new StationCsrError('the certificate signing request is not signed by its own key');
  return { stationId, keyType, subjectPublicKeyInfo: request.subjectPublicKeyInfo };
}

/**
 * The parts of a PEM PKCS#10 request that are checked, read with forge's ASN.1 parser (no key arithmetic: cheap
 * whatever the key); anything forge cannot read is a StationCsrError.
 */
function requestParts(
  forge: typeof forgeModule,
  csrPem: string,
): {
  commonName: unknown;
  subjectPublicKeyInfo: Buffer;
  signatureOid: string;
  certificationRequestInfo: Buffer;
  signature: Buffer;
} {
  const undeclared = forge as unknown as ForgeUndeclared;
  const derOf = (node: forgeModule.asn1.Asn1): Buffer => Buffer.from(forge.asn1.toDer(node).getBytes(), 'binary');
  try {
    const block = forge.pem
      .decode(csrPem)
      .find((b) => b.type === 'CERTIFICATE REQUEST' || b.type === 'NEW CERTIFICATE REQUEST');
    if (!block) throw new StationCsrError('not a PEM certificate signing request');
    const capture: Record<string, unknown> = {};
    const errors: string[] = [];
    if (!undeclared.asn1.validate(forge.asn1.fromDer(block.body), certificationRequestShape(forge), capture, errors))
      throw new StationCsrError(`not a PKCS#10 certificate signing request (${errors[0] ?? 'unexpected structure'})`);
    const parts = capture as {
      info: forgeModule.asn1.Asn1;
      subject: forgeModule.asn1.Asn1;
      subjectPublicKeyInfo: forgeModule.asn1.Asn1;
      signatureOid: string;
      signature: string;
    };
    return {
      commonName: undeclared.pki.RDNAttributesAsArray(parts.subject).find((attribute) => attribute.shortName === 'CN')
        ?.value,
      subjectPublicKeyInfo: derOf(parts.subjectPublicKeyInfo),
      signatureOid: forge.asn1.derToOid(parts.signatureOid),
      certificationRequestInfo: derOf(parts.info),
      signature: Buffer.from(parts.signature, 'binary'),
    };
  } catch (err) {
    if (err instanceof StationCsrError) throw err;
    throw new StationCsrError(`not a PEM certificate signing request (${(err as Error).message})`, { cause: err });
  }
}

/** The key's type if it is within the limits for station keys, else a StationCsrError saying which limit. */
function acceptedKeyType(key: KeyObject): 'rsa' | 'ec' {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') {
    const bits = details.modulusLength ?? 0;
    if (bits < RSA_MODULUS_BITS.min || bits > RSA_MODULUS_BITS.max)
      throw new StationCsrError(`an RSA key of ${bits} bits: only ${RSA_MODULUS_BITS.min} to ${RSA_MODULUS_BITS.max}`);
    const exponent = details.publicExponent ?? 0n;
    if (exponent !== RSA_PUBLIC_EXPONENT)
      throw new StationCsrError(
        `an RSA public exponent ${exponent <= 0xffffffffn ? exponent : `of ${exponent.toString(2).length} bits`}: only ${RSA_PUBLIC_EXPONENT}`,
      );
    return 'rsa';
  }
  if (key.asymmetricKeyType === 'ec') {
    if (!EC_CURVES[details.namedCurve ?? ''])
      throw new StationCsrError(
        `an EC key on curve ${details.namedCurve ?? '(unnamed)'}: only ${Object.values(EC_CURVES).join(' and ')}`,
      );
    return 'ec';
  }
  throw new StationCsrError(
    `a key of type ${key.asymmetricKeyType ?? 'unknown'}: only RSA or EC (${Object.values(EC_CURVES).join(', ')})`,
  );
}

/**
 * Issues the station's client certificate for a checked CSR: its common name is the station id, valid
 * `validDays` (at most until the CA's own end), signed by the station CA natively on the thread pool.
 */
export async function signStationCsr(
  ca: StationCaMaterial,
  csr: StationCsr,
  validDays: number,
  now = new Date(),
): Promise<string> {
  const { default: forge } = await import('node-forge');
  const caCert = forge.pki.certificateFromPem(ca.certificate);
  const cert = forge.pki.createCertificate();
  // forge holds only RSA keys: the TBSCertificate is made with the CA's key, then given the station's as it sent it.
  cert.publicKey = caCert.publicKey;
  cert.serialNumber = newSerialNumber();
  cert.validity.notBefore = new Date(now.getTime() - 3600_000);
  // Never past the CA's own end: a TLS stack refuses a chain whose issuer has expired anyway.
  cert.validity.notAfter = new Date(
    Math.min(now.getTime() + validDays * 86_400_000, caCert.validity.notAfter.getTime()),
  );
  cert.setSubject([{ name: 'commonName', value: csr.stationId }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    // An EC key signs in the TLS handshake; an RSA one may also encipher (RSA key exchange).
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: csr.keyType === 'rsa', critical: true },
    { name: 'extKeyUsage', clientAuth: true },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.siginfo.algorithmOid = cert.signatureOid = forge.pki.oids.sha256WithRSAEncryption!;
  const tbs = (forge as unknown as ForgeUndeclared).pki.getTBSCertificate(cert);
  const SUBJECT_PUBLIC_KEY_INFO = 6; // version, serialNumber, signature, issuer, validity, subject, then the key
  (tbs.value as forgeModule.asn1.Asn1[])[SUBJECT_PUBLIC_KEY_INFO] = forge.asn1.fromDer(
    csr.subjectPublicKeyInfo.toString('binary'),
  );
  cert.tbsCertificate = tbs;
  const tbsDer = Buffer.from(forge.asn1.toDer(tbs).getBytes(), 'binary');
  const signature = await new Promise<Buffer>((resolve, reject) =>
    sign('sha256', tbsDer, ca.privateKey, (err, result) => (err ? reject(err) : resolve(result))),
  );
  cert.signature = signature.toString('binary');
  const pem = forge.pki.certificateToPem(cert);
  // What a TLS stack will check, checked once here with Node's own X.509 code.
  if (!new X509Certificate(pem).checkIssued(new X509Certificate(ca.certificate)))
    throw new Error('issued certificate does not chain to the station CA');
  return pem;
}

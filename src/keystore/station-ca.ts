import { X509Certificate } from 'node:crypto';
import { newSerialNumber, selfSignedCertificate } from './self-signed.js';

/** The station CA's certificate (PEM) and its private key (PKCS#8 PEM, as the keystore stores keys). */
export interface StationCaMaterial {
  certificate: string;
  privateKey: string;
}

/** A certificate signing request chargegate refuses to sign: the message says why. */
export class StationCsrError extends Error {
  override name = 'StationCsrError';
  readonly code = 'CHARGEGATE_STATION_CSR';
}

const CA_VALID_YEARS = 20;

/** How long a station's client certificate from SignCertificate or `station cert` is valid, by default. */
export const STATION_CERTIFICATE_DAYS = 825;

/** A new CA for security profile 3: it signs the client certificates stations present, and the OCPP listener trusts only it. */
export function createStationCa(name: string, now = new Date()): Promise<{ certificate: string; privateKeyPem: string }> {
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
    validDays: CA_VALID_YEARS * 365,
    now,
  });
}

/**
 * Signs a station's CSR: a client certificate whose common name is the station id (contract section 9), valid
 * `validDays`. The CSR must carry its own valid signature and name that station; anything else is refused.
 */
export async function signStationCsr(ca: { certificate: string; privateKeyPem: string }, csrPem: string, stationId: string, validDays: number, now = new Date()): Promise<string> {
  const { default: forge } = await import('node-forge');
  let csr: ReturnType<typeof forge.pki.certificationRequestFromPem>;
  try {
    csr = forge.pki.certificationRequestFromPem(csrPem);
  } catch (err) {
    throw new StationCsrError(`not a PEM certificate signing request (${(err as Error).message})`, { cause: err });
  }
  if (!csr.verify()) throw new StationCsrError('the certificate signing request is not signed by its own key');
  const commonName = csr.subject.getField('CN')?.value as string | undefined;
  if (commonName !== stationId) throw new StationCsrError(`the request names "${commonName ?? '(no common name)'}", not station "${stationId}"`);
  if (!csr.publicKey) throw new StationCsrError('the certificate signing request has no RSA public key');
  const caCert = forge.pki.certificateFromPem(ca.certificate);
  const caKey = forge.pki.privateKeyFromPem(ca.privateKeyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = csr.publicKey;
  cert.serialNumber = newSerialNumber();
  cert.validity.notBefore = new Date(now.getTime() - 3600_000);
  cert.validity.notAfter = new Date(now.getTime() + validDays * 86_400_000);
  cert.setSubject([{ name: 'commonName', value: stationId }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', clientAuth: true },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  const pem = forge.pki.certificateToPem(cert);
  // What a TLS stack will check, checked once here with Node's own X.509 code.
  if (!new X509Certificate(pem).checkIssued(new X509Certificate(ca.certificate))) throw new Error('issued certificate does not chain to the station CA');
  return pem;
}

import { X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { selfSignedCertificate } from './self-signed.js';

export interface GatewayCertificate {
  /** PEM; stations under security profile 2 install it as their trusted CA. */
  certificate: string;
  /** PKCS#1 PEM, for the listener only. */
  privateKey: string;
  fingerprintSha256: string;
  notAfter: string;
}

/**
 * A self-signed TLS certificate for the OCPP listener (security profile 2), for sites without their own PKI.
 * It is its own CA, so a station that trusts it needs nothing else; the names are the host names and addresses
 * stations dial (an IP address becomes an IP subject alternative name).
 */
export async function createGatewayCertificate(options: {
  names: string[];
  validDays: number;
  now?: Date;
}): Promise<GatewayCertificate> {
  if (options.names.length === 0) throw new Error('a certificate needs at least one host name or address');
  const { certificate, privateKeyPem } = await selfSignedCertificate({
    modulusLength: 2048,
    subject: [
      { name: 'commonName', value: options.names[0]! },
      { name: 'organizationName', value: 'chargegate gateway' },
    ],
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: options.names.map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n })),
      },
      { name: 'subjectKeyIdentifier' },
    ],
    validDays: options.validDays,
    now: options.now ?? new Date(),
  });
  const x509 = new X509Certificate(certificate);
  return {
    certificate,
    privateKey: privateKeyPem,
    fingerprintSha256: x509.fingerprint256,
    notAfter: new Date(x509.validTo).toISOString(),
  };
}

/** Where `keys tls-cert` puts the files ocpp.tls then names. */
function gatewayCertificatePaths(dir: string): { cert: string; key: string } {
  return { cert: path.join(dir, 'ocpp-cert.pem'), key: path.join(dir, 'ocpp-key.pem') };
}

/** Writes the certificate (0644) and its key (0600); refuses to replace existing files unless told to. */
export function saveGatewayCertificate(
  dir: string,
  certificate: GatewayCertificate,
  overwrite: boolean,
): { cert: string; key: string } {
  const paths = gatewayCertificatePaths(dir);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const flag = overwrite ? 'w' : 'wx';
  writeFileSync(paths.key, certificate.privateKey, { mode: 0o600, flag });
  writeFileSync(paths.cert, certificate.certificate, { mode: 0o644, flag });
  return paths;
}

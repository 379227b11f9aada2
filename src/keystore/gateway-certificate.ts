import { generateKeyPair, randomBytes, X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const generateRsaKeyPair = promisify(generateKeyPair);

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
export async function createGatewayCertificate(options: { names: string[]; validDays: number; now?: Date }): Promise<GatewayCertificate> {
  if (options.names.length === 0) throw new Error('a certificate needs at least one host name or address');
  const now = options.now ?? new Date();
  // Node generates the RSA key natively (fast); node-forge builds and signs the X.509 structure. node-forge is
  // loaded here only: the daemon never needs it, and loading it costs a process ~60 ms and a few MB.
  const [{ default: forge }, { privateKey: keyPem }] = await Promise.all([
    import('node-forge'),
    generateRsaKeyPair('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }),
  ]);
  const key = forge.pki.privateKeyFromPem(keyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  // Random, and positive in DER thanks to the leading 01 byte.
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(now.getTime() - 3600_000);
  cert.validity.notAfter = new Date(now.getTime() + options.validDays * 86_400_000);
  const subject = [
    { name: 'commonName', value: options.names[0]! },
    { name: 'organizationName', value: 'chargegate gateway' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: options.names.map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n })) },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key, forge.md.sha256.create());
  const certificate = forge.pki.certificateToPem(cert);
  const x509 = new X509Certificate(certificate);
  return { certificate, privateKey: keyPem, fingerprintSha256: x509.fingerprint256, notAfter: new Date(x509.validTo).toISOString() };
}

/** Where `keys tls-cert` puts the files ocpp.tls then names. */
function gatewayCertificatePaths(dir: string): { cert: string; key: string } {
  return { cert: path.join(dir, 'ocpp-cert.pem'), key: path.join(dir, 'ocpp-key.pem') };
}

/** Writes the certificate (0644) and its key (0600); refuses to replace existing files unless told to. */
export function saveGatewayCertificate(dir: string, certificate: GatewayCertificate, overwrite: boolean): { cert: string; key: string } {
  const paths = gatewayCertificatePaths(dir);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const flag = overwrite ? 'w' : 'wx';
  writeFileSync(paths.key, certificate.privateKey, { mode: 0o600, flag });
  writeFileSync(paths.cert, certificate.certificate, { mode: 0o644, flag });
  return paths;
}

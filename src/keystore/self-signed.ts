import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const generateRsaKeyPair = promisify(generateKeyPair);

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** A certificate serial number: random, and positive in DER thanks to the leading 01 byte. */
export function newSerialNumber(): string {
  return `01${randomBytes(15).toString('hex')}`;
}

/**
 * A new RSA key and a self-signed certificate for it (the gateway's TLS certificate, the station CA). Node
 * generates the key natively (fast); node-forge builds and signs the X.509 structure. node-forge is loaded here
 * only: the daemon rarely needs it, and loading it costs a process ~60 ms and a few MB. Valid from an hour
 * before `now` (clocks differ) for `validDays`.
 */
export async function selfSignedCertificate(options: {
  modulusLength: number;
  subject: Array<{ name: string; value: string }>;
  extensions: object[];
  validDays: number;
  now: Date;
}): Promise<{ certificate: string; privateKeyPem: string }> {
  const [{ default: forge }, { privateKey: privateKeyPem }] = await Promise.all([
    import('node-forge'),
    generateRsaKeyPair('rsa', {
      modulusLength: options.modulusLength,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    }),
  ]);
  const key = forge.pki.privateKeyFromPem(privateKeyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = newSerialNumber();
  cert.validity.notBefore = new Date(options.now.getTime() - HOUR_MS);
  cert.validity.notAfter = new Date(options.now.getTime() + options.validDays * DAY_MS);
  cert.setSubject(options.subject);
  cert.setIssuer(options.subject);
  cert.setExtensions(options.extensions);
  cert.sign(key, forge.md.sha256.create());
  return { certificate: forge.pki.certificateToPem(cert), privateKeyPem };
}

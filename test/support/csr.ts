import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import forge from 'node-forge';

/**
 * A new key and a CSR naming `commonName`, both made by the openssl command (not our code). `newKey` is openssl
 * req's `-newkey` argument (default `rsa:2048`; `ec`, `ed25519`), `keyOptions` its `-pkeyopt` settings
 * (`ec_paramgen_curve:P-256`), `digest` the signature's (`sha1`; default openssl's, SHA-256).
 */
export function opensslKeyAndCsr(
  dir: string,
  name: string,
  commonName: string,
  options: { newKey?: string; keyOptions?: readonly string[]; digest?: string } = {},
): { key: string; csr: string } {
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const pkeyopts = (options.keyOptions ?? []).flatMap((option) => ['-pkeyopt', option]);
  const digest = options.digest ? [`-${options.digest}`] : [];
  execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      options.newKey ?? 'rsa:2048',
      ...pkeyopts,
      ...digest,
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      `/CN=${commonName}`,
    ],
    {
      stdio: 'ignore',
    },
  );
  return { key: readFileSync(key, 'utf8'), csr: readFileSync(csr, 'utf8') };
}

const { asn1 } = forge;
const { UNIVERSAL } = asn1.Class;

/** A positive DER INTEGER of these bytes, its top bit set so it has exactly that many bits. */
function fullLengthInteger(bytes: Buffer): forge.asn1.Asn1 {
  bytes[0]! |= 0x80;
  return asn1.create(UNIVERSAL, asn1.Type.INTEGER, false, `\x00${bytes.toString('binary')}`);
}

/**
 * The probe of issue 35: a syntactically valid PKCS#10 request (an openssl one with its key and signature
 * replaced) whose RSA key has a random `bits`-bit modulus and an exponent as long, with a random signature of the
 * modulus' length. Checking that signature in JavaScript takes seconds of modular exponentiation; at 8192 bits
 * the PEM is about 4.4 KB, within SignCertificate's 5,500 characters.
 */
export function oversizedRsaCsr(csrPem: string, bits = 8192, exponent: 'huge' | 'F4' = 'huge'): string {
  const request = asn1.fromDer(forge.pem.decode(csrPem)[0]!.body);
  const [info, , signature] = request.value as forge.asn1.Asn1[];
  const requestInfo = info!.value as forge.asn1.Asn1[];
  const spki = requestInfo[2]!;
  const rsaPublicKey = asn1.create(UNIVERSAL, asn1.Type.SEQUENCE, true, [
    fullLengthInteger(randomBytes(bits / 8)),
    exponent === 'huge'
      ? fullLengthInteger(randomBytes(bits / 8))
      : asn1.create(UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(65537).getBytes()),
  ]);
  const algorithm = (spki.value as forge.asn1.Asn1[])[0]!;
  requestInfo[2] = asn1.create(UNIVERSAL, asn1.Type.SEQUENCE, true, [
    algorithm,
    asn1.create(UNIVERSAL, asn1.Type.BITSTRING, false, `\x00${asn1.toDer(rsaPublicKey).getBytes()}`),
  ]);
  // Below the modulus (whose top bit is set), as a signature must be, so a verifier gets to the exponentiation.
  const randomSignature = randomBytes(bits / 8);
  randomSignature[0] = 0x01;
  signature!.value = `\x00${randomSignature.toString('binary')}`;
  return forge.pem.encode({ type: 'CERTIFICATE REQUEST', body: asn1.toDer(request).getBytes() });
}

/** A self-signed certificate and its key for `commonName`, made by openssl (a CA that is not the gateway's). */
export function opensslSelfSigned(dir: string, commonName: string, days = 30): { key: string; cert: string } {
  const key = path.join(dir, `self-signed-${commonName}.key`);
  const cert = path.join(dir, `self-signed-${commonName}.crt`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      String(days),
      '-subj',
      `/CN=${commonName}`,
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

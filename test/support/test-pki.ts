import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** A certificate and its private key, PEM. */
export interface Issued {
  cert: string;
  key: string;
}

const DAY_MS = 86_400_000;

function newKey(): { key: string; forgeKey: forge.pki.rsa.PrivateKey } {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { key: privateKey, forgeKey: forge.pki.privateKeyFromPem(privateKey) };
}

function certificate(
  subject: string,
  publicOf: forge.pki.rsa.PrivateKey,
  issuer: { name: string; key: forge.pki.rsa.PrivateKey },
  extensions: object[],
): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(publicOf.n, publicOf.e);
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - DAY_MS);
  cert.validity.notAfter = new Date(Date.now() + DAY_MS);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  cert.setIssuer([{ name: 'commonName', value: issuer.name }]);
  cert.setExtensions(extensions);
  cert.sign(issuer.key, forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

/**
 * A private CA for tests, made with node-forge (not the gateway's own CA code): it issues server certificates (for host
 * names and addresses) and client certificates, as an operator's PKI would for its CSMS and for the gateway.
 */
export class TestCa {
  readonly cert: string;
  private readonly forgeKey: forge.pki.rsa.PrivateKey;

  constructor(readonly name: string) {
    const { forgeKey } = newKey();
    this.forgeKey = forgeKey;
    this.cert = certificate(name, forgeKey, { name, key: forgeKey }, [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ]);
  }

  /** A TLS server certificate for these names (an IP address becomes an IP subject alternative name). */
  server(names: string[]): Issued {
    return this.issue(names[0]!, [
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: names.map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n })) },
    ]);
  }

  /** A TLS client certificate naming commonName. */
  client(commonName: string): Issued {
    return this.issue(commonName, [{ name: 'extKeyUsage', clientAuth: true }]);
  }

  private issue(commonName: string, extensions: object[]): Issued {
    const { key, forgeKey } = newKey();
    const cert = certificate(commonName, forgeKey, { name: this.name, key: this.forgeKey }, [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      ...extensions,
    ]);
    return { cert, key };
  }
}

import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KEYSTORE_FILE, Keystore, STATION_CA_DAYS, STATION_CERTIFICATE_DAYS } from '../../src/keystore/index.js';
import { createStationCa, readStationCsr, signStationCsr } from '../../src/keystore/station-ca.js';
import { opensslKeyAndCsr, opensslSelfSigned, oversizedRsaCsr } from '../support/csr.js';
import { tempDirForTest } from '../support/for-test.js';
import { externalTool } from '../support/meter-simulator.js';

const derOf = (csrPem: string): Buffer => Buffer.from(csrPem.replace(/-----[A-Z ]+-----/g, ''), 'base64');
const pemOf = (der: Buffer): string =>
  `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;

/** The same PEM request with one byte of its signature (the end of the DER) changed. */
function withSignatureByteFlipped(csrPem: string): string {
  const der = derOf(csrPem);
  der[der.length - 5]! ^= 0x01;
  return pemOf(der);
}

/**
 * What the station CA signs (`station cert`, SignCertificate): the requests come from the openssl command (not our
 * code) or are openssl ones with a hostile key put in. Each test opens its own keystore (real RSA keys, about a
 * second of CPU).
 */
describe.skipIf(!externalTool('openssl', ['version']))('station CSRs', () => {
  it('signs an openssl RSA 2048, EC P-256 and EC P-384 request: a client certificate for the station id and the key it sent, that openssl verifies', async () => {
    const dir = tempDirForTest('station-csr');
    const keystore = await Keystore.open({ dataDir: dir, retiredKeyGraceS: 60 });
    const caFile = path.join(dir, 'station-ca.pem');
    for (const [name, options, keyDetails] of [
      ['rsa', {}, { modulusLength: 2048, publicExponent: 65537n }],
      ['p256', { newKey: 'ec', keyOptions: ['ec_paramgen_curve:P-256'] }, { namedCurve: 'prime256v1' }],
      ['p384', { newKey: 'ec', keyOptions: ['ec_paramgen_curve:P-384'] }, { namedCurve: 'secp384r1' }],
    ] as const) {
      const { key, csr } = opensslKeyAndCsr(dir, name, 'EV201', options);
      const pem = await keystore.issueStationCertificate(csr, 'EV201', 30);
      writeFileSync(caFile, await keystore.ensureStationCa());
      writeFileSync(path.join(dir, `${name}.crt`), pem);

      const issued = new X509Certificate(pem);
      expect(issued.subject).toBe('CN=EV201');
      expect(issued.publicKey.asymmetricKeyDetails).toEqual(keyDetails);
      expect(issued.publicKey.export({ type: 'spki', format: 'der' })).toEqual(
        createPublicKey(key).export({ type: 'spki', format: 'der' }),
      );
      expect(issued.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']); // clientAuth
      expect(
        execFileSync('openssl', ['verify', '-purpose', 'sslclient', '-CAfile', caFile, path.join(dir, `${name}.crt`)], {
          encoding: 'utf8',
        }),
      ).toContain(': OK');
    }
  });

  it("a certificate never outlives the CA that signed it: a CA near its end signs one valid until the CA's own end", async () => {
    const dir = tempDirForTest('station-csr-ca-end');
    const dayMs = 86_400_000;
    const caMadeAt = new Date(Date.now() - (STATION_CA_DAYS - 10) * dayMs);
    const { certificate, privateKeyPem } = await createStationCa('site', caMadeAt);
    const ca = { certificate, privateKey: createPrivateKey(privateKeyPem) };
    const { csr } = opensslKeyAndCsr(dir, 'late', 'EV201');
    const pem = await signStationCsr(ca, await readStationCsr(csr, 'EV201'), STATION_CERTIFICATE_DAYS);
    const [issued, issuer] = [new X509Certificate(pem), new X509Certificate(certificate)];
    expect(Date.parse(issued.validTo)).toBe(Date.parse(issuer.validTo));
    expect(issued.checkIssued(issuer)).toBe(true);
    // One from a young CA keeps the days asked.
    const young = await createStationCa('site');
    const fresh = new X509Certificate(
      await signStationCsr(
        { certificate: young.certificate, privateKey: createPrivateKey(young.privateKeyPem) },
        await readStationCsr(csr, 'EV201'),
        30,
      ),
    );
    expect(Date.parse(fresh.validTo) - Date.now()).toBeGreaterThan(29 * dayMs);
    expect(Date.parse(fresh.validTo) - Date.now()).toBeLessThanOrEqual(30 * dayMs);
  });

  it('refuses, with the reason, before making a station CA: key sizes, exponents, curves and key types out of bounds, garbage, another station id, a bad signature', async () => {
    const dir = tempDirForTest('station-csr');
    const keystore = await Keystore.open({ dataDir: dir, retiredKeyGraceS: 60 });
    const rsa = opensslKeyAndCsr(dir, 'rsa', 'EV201').csr;
    const refusals: Array<[what: string, csr: string, reason: string | RegExp]> = [
      ['8192 bits, huge exponent (issue 35)', oversizedRsaCsr(rsa), 'an RSA key of 8192 bits: only 2048 to 4096'],
      [
        '1024 bits',
        opensslKeyAndCsr(dir, 'rsa1024', 'EV201', { newKey: 'rsa:1024' }).csr,
        'an RSA key of 1024 bits: only 2048 to 4096',
      ],
      ['4096 bits, huge exponent', oversizedRsaCsr(rsa, 4096), 'an RSA public exponent of 4096 bits: only 65537'],
      [
        'exponent 3',
        opensslKeyAndCsr(dir, 'e3', 'EV201', { keyOptions: ['rsa_keygen_pubexp:3'] }).csr,
        'an RSA public exponent 3: only 65537',
      ],
      [
        'secp256k1',
        opensslKeyAndCsr(dir, 'k1', 'EV201', { newKey: 'ec', keyOptions: ['ec_paramgen_curve:secp256k1'] }).csr,
        'an EC key on curve secp256k1: only P-256 and P-384',
      ],
      [
        'Ed25519',
        opensslKeyAndCsr(dir, 'ed', 'EV201', { newKey: 'ed25519' }).csr,
        'a key of type ed25519: only RSA or EC (P-256, P-384)',
      ],
      [
        'SHA-1',
        opensslKeyAndCsr(dir, 'sha1', 'EV201', { digest: 'sha1' }).csr,
        /^signature algorithm 1\.2\.840\.113549\.1\.1\.5 not supported/,
      ],
      ['not PEM', 'hello', 'not a PEM certificate signing request (Invalid PEM formatted message.)'],
      [
        'a PEM header only',
        '-----BEGIN CERTIFICATE REQUEST-----',
        'not a PEM certificate signing request (Invalid PEM formatted message.)',
      ],
      ['a certificate', opensslSelfSigned(dir, 'EV201').cert, 'not a PEM certificate signing request'],
      [
        'random bytes',
        `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.from('0\x82\x01\x00garbage').toString('base64')}\n-----END CERTIFICATE REQUEST-----`,
        /^not a PEM certificate signing request \(.+\)$/,
      ],
      [
        'another station id',
        opensslKeyAndCsr(dir, 'cp001', 'CP001').csr,
        'the request names "CP001", not station "EV201"',
      ],
      [
        'RSA signature changed',
        withSignatureByteFlipped(rsa),
        'the certificate signing request is not signed by its own key',
      ],
      [
        'ECDSA signature changed',
        withSignatureByteFlipped(
          opensslKeyAndCsr(dir, 'p256', 'EV201', { newKey: 'ec', keyOptions: ['ec_paramgen_curve:P-256'] }).csr,
        ),
        'the certificate signing request is not signed by its own key',
      ],
      [
        'another 2048-bit key than the one that signed',
        oversizedRsaCsr(rsa, 2048, 'F4'),
        'the certificate signing request is not signed by its own key',
      ],
    ];
    for (const [what, csr, reason] of refusals) {
      const refused = await keystore.issueStationCertificate(csr, 'EV201', 30).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused, what).toMatchObject({ name: 'StationCsrError', code: 'CHARGEGATE_STATION_CSR', message: reason });
    }
    expect(JSON.parse(readFileSync(path.join(dir, KEYSTORE_FILE), 'utf8'))).not.toHaveProperty('stationCa');
  });

  it('a real request with bytes changed or cut short is signed or refused as a StationCsrError, never another error', async () => {
    const dir = tempDirForTest('station-csr');
    const keystore = await Keystore.open({ dataDir: dir, retiredKeyGraceS: 60 });
    const requests = [
      opensslKeyAndCsr(dir, 'rsa', 'EV201').csr,
      opensslKeyAndCsr(dir, 'p256', 'EV201', { newKey: 'ec', keyOptions: ['ec_paramgen_curve:P-256'] }).csr,
    ].map(derOf);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...requests),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
        fc.option(fc.nat()),
        async (request, changes, cutAt) => {
          const changed = Buffer.from(request);
          for (const [at, mask] of changes) changed[at % changed.length]! ^= mask;
          const input = cutAt === null ? changed : changed.subarray(0, cutAt % changed.length);
          const outcome = await keystore.issueStationCertificate(pemOf(input), 'EV201', 30).then(
            () => 'signed',
            (err: unknown) => err,
          );
          // Signed: a change outside what the signature covers and what is checked (the signature algorithm's NULL
          // parameter, say).
          if (outcome !== 'signed')
            expect(outcome).toMatchObject({ name: 'StationCsrError', code: 'CHARGEGATE_STATION_CSR' });
        },
      ),
      { numRuns: 300 },
    );
  });
});

import {
  constants,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import forge from 'node-forge';
import { beforeEach, describe, expect, it } from 'vitest';
import { Keystore, KeystoreError, keystorePassphrase, type PublicJwk } from '../../src/keystore/index.js';
import { capturedLogger } from '../support/captured-log.js';
import { tempDirForTest } from '../support/for-test.js';
import { previousReleaseKeystore } from '../support/previous-release.js';
import { calculateJwkThumbprint } from 'jose';

function pssVerify(jwk: PublicJwk, data: Buffer, signature: Buffer): boolean {
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  return verify('sha256', data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, signature);
}

/** A station's certificate signing request for `commonName`, made with node-forge as a station's firmware might. */
function stationCsr(commonName: string, privateKey: KeyObject): string {
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  csr.setSubject([{ name: 'commonName', value: commonName }]);
  csr.sign(key, forge.md.sha256.create());
  return forge.pki.certificationRequestToPem(csr);
}

function edSign(keystore: Keystore, data: string): Buffer {
  return sign(null, Buffer.from(data), keystore.webhookSigningKeys().ed25519.privateKey);
}

function pssSign(keystore: Keystore, data: Buffer): Buffer {
  return sign('sha256', data, {
    key: keystore.webhookSigningKey().privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: 32,
  });
}

// Every keystore made here generates real RSA 3072/2048 keys: the tests share keystores to keep the CPU cost down.
describe('keystore', () => {
  let dataDir: string;
  let clock: Date;
  const now = () => clock;
  const file = () => path.join(dataDir, 'keystore.json');

  beforeEach(() => {
    dataDir = tempDirForTest('keystore');
    clock = new Date('2026-01-01T00:00:00Z');
  });

  it('creates a 0600 file on first open with a PS256 `sign` key, an RS256 token key and an EdDSA webhook key, public parts only in the JWKS; a second open finds them', async () => {
    const keystore = await Keystore.open({ dataDir, retiredKeyGraceS: 86_400, now });
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    const { keys } = keystore.jwks();
    // The webhook key twice: under `sign` (interface document 4.2) and under its own stable kid (contract section 8).
    expect(keys.map((k) => [k.kid === 'sign' ? 'sign' : k.kid.split('-')[0], k.alg, k.use])).toEqual([
      ['sign', 'PS256', 'sig'],
      ['webhook', 'PS256', 'sig'],
      ['token', 'RS256', 'sig'],
      ['ed25519', 'EdDSA', 'sig'],
    ]);
    expect(keys[1]).toEqual({ ...keys[0], kid: keystore.webhookSigningKey().id });
    for (const k of keys.slice(0, 3)) expect(Object.keys(k).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    // The Ed25519 key under its own kid only (not `sign`): an OKP JWK whose kid is named after its RFC 7638 thumbprint.
    const ed25519 = keys[3]!;
    expect(Object.keys(ed25519).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    expect(ed25519).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid: keystore.webhookSigningKeys().ed25519.id });
    expect(ed25519.kid).toBe(`ed25519-${(await calculateJwkThumbprint(ed25519)).slice(0, 16)}`);
    expect(
      verify(null, Buffer.from('base'), createPublicKey({ key: ed25519, format: 'jwk' }), edSign(keystore, 'base')),
    ).toBe(true);
    expect(createPublicKey({ key: keys[0]!, format: 'jwk' }).asymmetricKeyDetails?.modulusLength).toBe(3072);
    const data = Buffer.from('signature base');
    expect(pssVerify(keys[0]!, data, pssSign(keystore, data))).toBe(true);
    expect(keystore.accessTokenSigningKey().kid).toBe(keys[2]!.kid);
    expect((await Keystore.open({ dataDir, retiredKeyGraceS: 86_400, now })).jwks()).toEqual(keystore.jwks());
  });

  it('two opens at once on a new data dir (a daemon and a CLI command on a fresh gateway) both use the keys written first', async () => {
    const [a, b] = await Promise.all([
      Keystore.open({ dataDir, retiredKeyGraceS: 60, now }),
      Keystore.open({ dataDir, retiredKeyGraceS: 60, now }),
    ]);
    expect(a.jwks().keys).toHaveLength(4);
    expect(b.jwks()).toEqual(a.jwks());
    expect(JSON.parse(readFileSync(file(), 'utf8')).keys.map((k: { id: string }) => k.id)).toEqual(
      a.list().map((k) => k.id),
    );
  });

  it('rotation: the next key is published before it signs, `sign` switches at activation, each old key stays for its grace', async () => {
    // 300 s of grace: the webhook key goes then; the token key stays until every token it signed (900 s) has expired.
    const daemon = await Keystore.open({ dataDir, retiredKeyGraceS: 300, nextKeyLeadS: 600, now });
    const cli = await Keystore.open({ dataDir, retiredKeyGraceS: 300, nextKeyLeadS: 600, now });
    const oldSign = daemon.jwks().keys.find((k) => k.kid === 'sign')!;
    const oldId = daemon.webhookSigningKey().id;
    const oldTokenKid = daemon.accessTokenSigningKey().kid;
    const oldEd25519 = daemon.webhookSigningKeys().ed25519.id;
    const data = Buffer.from('in flight');
    const signedBefore = pssSign(daemon, data);

    const rotation = await cli.rotate();
    expect(rotation.activatesAt).toBe('2026-01-01T00:10:00.000Z');
    expect(rotation.keys.map((k) => [k.purpose, k.state])).toEqual([
      ['webhook', 'next'],
      ['token', 'next'],
      ['webhook-ed25519', 'next'],
    ]);
    const nextEd25519 = rotation.keys[2]!.id;
    // The daemon sees the other instance's rotation without reopening; the old key still signs during the lead.
    const during = daemon.jwks().keys;
    expect(during.find((k) => k.kid === 'sign')!.n).toBe(oldSign.n);
    const nextWebhook = during.find((k) => k.kid === rotation.keys[0]!.id)!;
    expect(nextWebhook).toMatchObject({ alg: 'PS256', use: 'sig' });
    expect(daemon.webhookSigningKey().id).toBe(oldId);
    expect(daemon.accessTokenSigningKey().kid).toBe(oldTokenKid);
    // The Ed25519 key has the same life: its successor published under its own kid, the old one still signing.
    expect(during.find((k) => k.kid === nextEd25519)).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
    expect(daemon.webhookSigningKeys().ed25519.id).toBe(oldEd25519);
    await expect(cli.rotate()).rejects.toThrow(KeystoreError);

    clock = new Date('2026-01-01T00:10:00Z');
    const after = daemon.jwks().keys;
    expect(after.find((k) => k.kid === 'sign')!.n).toBe(nextWebhook.n);
    expect(after.find((k) => k.kid === oldId)!.n).toBe(oldSign.n);
    expect(
      pssVerify(
        after.find((k) => k.kid === 'sign')!,
        data,
        pssSign(daemon, data),
      ),
    ).toBe(true);
    // A webhook signed before the switch and arriving after still verifies with some published PS256 key.
    expect(after.filter((k) => k.alg === 'PS256').some((k) => pssVerify(k, data, signedBefore))).toBe(true);
    expect(daemon.accessTokenSigningKey().kid).toBe(rotation.keys[1]!.id);
    expect(after.some((k) => k.kid === oldTokenKid)).toBe(true);
    expect(daemon.webhookSigningKeys().ed25519.id).toBe(nextEd25519);
    const edJwk = (kid: string) => createPublicKey({ key: after.find((k) => k.kid === kid)!, format: 'jwk' });
    expect(verify(null, Buffer.from('new'), edJwk(nextEd25519), edSign(daemon, 'new'))).toBe(true);
    expect(edJwk(oldEd25519).asymmetricKeyType).toBe('ed25519');
    expect(daemon.list().find((k) => k.id === oldEd25519)).toMatchObject({
      purpose: 'webhook-ed25519',
      alg: 'EdDSA',
      state: 'retired',
      jwksKid: oldEd25519,
    });

    const kids = () => daemon.jwks().keys.map((k) => k.kid);
    clock = new Date('2026-01-01T00:14:59Z');
    expect(kids()).toContain(oldId);
    clock = new Date('2026-01-01T00:15:00Z');
    expect(kids()).not.toContain(oldId);
    expect(kids()).not.toContain(oldEd25519);
    expect(kids()).toContain(oldTokenKid);
    expect(daemon.list().find((k) => k.id === oldId)).toMatchObject({
      state: 'expired',
      jwksKid: null,
      retiresAt: '2026-01-01T00:10:00.000Z',
      expiresAt: '2026-01-01T00:15:00.000Z',
    });
    clock = new Date('2026-01-01T00:26:00Z');
    expect(kids()).not.toContain(oldTokenKid);

    // The next rotation drops the expired keys' private material from the file.
    await cli.rotate();
    expect(readFileSync(file(), 'utf8')).not.toContain(oldId);
  });

  it('adds the Ed25519 key once to a keystore the previous release wrote, keeping its keys, logged; encrypted like them', async () => {
    const { logger, lines } = capturedLogger();
    const old = JSON.parse(previousReleaseKeystore(dataDir, 'correct horse')) as {
      keys: Array<{ id: string; privateKey: string }>;
    };
    const upgraded = () =>
      lines.filter((l) => l.msg === 'keystore upgraded: key added for a purpose this release introduced');
    // A daemon and a CLI command opening it at once: one key is added, by whichever takes the lock first.
    const [daemon, cli] = await Promise.all([
      Keystore.open({ dataDir, passphrase: 'correct horse', retiredKeyGraceS: 60, now, logger }),
      Keystore.open({ dataDir, passphrase: 'correct horse', retiredKeyGraceS: 60, now, logger }),
    ]);
    const stored = JSON.parse(readFileSync(file(), 'utf8')) as {
      keys: Array<{ id: string; purpose: string; alg: string; activatesAt: string; privateKey: string }>;
    };
    expect(stored.keys.slice(0, 2)).toEqual(old.keys);
    expect(stored.keys.slice(2)).toMatchObject([
      { purpose: 'webhook-ed25519', alg: 'EdDSA', activatesAt: clock.toISOString() },
    ]);
    expect(stored.keys[2]!.privateKey).toContain('BEGIN ENCRYPTED PRIVATE KEY');
    expect(upgraded()).toHaveLength(1);
    expect(upgraded()[0]!.keys).toEqual([{ id: stored.keys[2]!.id, purpose: 'webhook-ed25519' }]);
    expect(cli.jwks()).toEqual(daemon.jwks());
    expect(daemon.webhookSigningKey().id).toBe(old.keys[0]!.id);
    expect(daemon.webhookSigningKeys().ed25519.id).toBe(stored.keys[2]!.id);
    expect(daemon.list().map((k) => [k.purpose, k.state])).toEqual([
      ['webhook', 'signing'],
      ['token', 'signing'],
      ['webhook-ed25519', 'signing'],
    ]);
    // Opened again (the next start): nothing more is added.
    await Keystore.open({ dataDir, passphrase: 'correct horse', retiredKeyGraceS: 60, now, logger });
    expect(upgraded()).toHaveLength(1);
    expect(JSON.parse(readFileSync(file(), 'utf8'))).toEqual(stored);
  });

  it('encrypts an existing plain keystore once a passphrase is given, keeping its keys; refuses to open it without or with a wrong one', async () => {
    const plain = (await Keystore.open({ dataDir, retiredKeyGraceS: 60, now })).jwks();
    expect(readFileSync(file(), 'utf8')).toContain('BEGIN PRIVATE KEY');
    expect((await Keystore.open({ dataDir, passphrase: 'correct horse', retiredKeyGraceS: 60, now })).jwks()).toEqual(
      plain,
    );
    const text = readFileSync(file(), 'utf8');
    expect(text).toContain('ENCRYPTED PRIVATE KEY');
    expect(text).not.toContain('BEGIN PRIVATE KEY');
    await expect(Keystore.open({ dataDir, retiredKeyGraceS: 60, now })).rejects.toThrow(
      /encrypted: provide the keystore passphrase/,
    );
    await expect(Keystore.open({ dataDir, passphrase: 'wrong', retiredKeyGraceS: 60, now })).rejects.toThrow(
      /wrong keystore passphrase/,
    );
  });

  it('encrypts the station CA key too when a passphrase comes later, and still issues certificates with it', async () => {
    const caCertificate = await (await Keystore.open({ dataDir, retiredKeyGraceS: 60, now })).ensureStationCa();
    const stored = () =>
      (JSON.parse(readFileSync(file(), 'utf8')) as { stationCa: { privateKey: string } }).stationCa.privateKey;
    expect(stored()).toContain('BEGIN PRIVATE KEY');
    const encrypted = await Keystore.open({ dataDir, passphrase: 'correct horse', retiredKeyGraceS: 60, now });
    expect(stored()).toContain('ENCRYPTED PRIVATE KEY');
    expect(await encrypted.ensureStationCa()).toBe(caCertificate);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const csr = stationCsr('CP001', privateKey);
    const issued = new X509Certificate(await encrypted.issueStationCertificate(csr, 'CP001', 30));
    expect(issued.checkIssued(new X509Certificate(caCertificate))).toBe(true);
  });

  it('refuses a damaged keystore file with a message naming it; an open keystore keeps its keys through one', async () => {
    const running = await Keystore.open({ dataDir, retiredKeyGraceS: 60, now });
    const before = running.jwks();
    writeFileSync(`${file()}.new`, '{"format":"something else"}', { mode: 0o600 });
    renameSync(`${file()}.new`, file());
    await expect(Keystore.open({ dataDir, retiredKeyGraceS: 60, now })).rejects.toThrow(
      /keystore\.json: not a chargegate keystore \(format/,
    );
    expect(running.jwks()).toEqual(before);
    expect(running.webhookSigningKey().kid).toBe('sign');
  });

  it('reads the passphrase from the environment variable, else the systemd credential', () => {
    const source = { passphraseEnv: 'PASS', passphraseCredential: 'keystore-passphrase' };
    writeFileSync(path.join(dataDir, 'keystore-passphrase'), 'from-credential\n');
    expect(keystorePassphrase(source, { PASS: 'from-env', CREDENTIALS_DIRECTORY: dataDir })).toBe('from-env');
    expect(keystorePassphrase(source, { CREDENTIALS_DIRECTORY: dataDir })).toBe('from-credential');
    expect(keystorePassphrase(source, {})).toBeUndefined();
  });
});

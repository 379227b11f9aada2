import { createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenVerifier, issueAccessToken, type Application } from '../../src/applications/index.js';
import { KEYSTORE_FILE, Keystore } from '../../src/keystore/index.js';

const ISSUER = 'http://127.0.0.1:8080';
const APPLICATION: Application = {
  clientId: 'app-test',
  name: 'test',
  description: null,
  groupIds: ['ops'],
  createdAt: '2026-01-01T00:00:00.000Z',
  revokedAt: null,
};

/**
 * The daemon's verifier against a real keystore file that another Keystore instance rotates, as `chargegate keys
 * rotate` does from its own process: what the file publishes decides, at once, whatever the verifier saw before.
 */
describe('AccessTokenVerifier', () => {
  let dataDir: string;
  let clockMs = Date.parse('2026-11-21T10:00:00.000Z');
  const now = () => new Date(clockMs);
  const options = () => ({ dataDir, retiredKeyGraceS: 60, nextKeyLeadS: 30, now });
  let daemonKeystore: Keystore;
  let cliKeystore: Keystore;
  let verifier: AccessTokenVerifier;

  const issue = async (keystore: Keystore) =>
    (
      await issueAccessToken({
        keystore,
        issuer: ISSUER,
        application: APPLICATION,
        scope: 'charge-points:read',
        now: now(),
      })
    ).token;
  const kid = (token: string) => decodeProtectedHeader(token).kid;
  /** A token with valid claims for now, signed with a key the keystore no longer lets anyone sign with. */
  const signWith = (privateKey: KeyObject, keyId: string) =>
    new SignJWT({ client_id: 'app-test', scope: 'charge-points:read' })
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: keyId })
      .setIssuer(ISSUER)
      .setAudience(ISSUER)
      .setSubject('app-test')
      .setIssuedAt(Math.floor(clockMs / 1000))
      .setExpirationTime(Math.floor(clockMs / 1000) + 900)
      .setJti(randomUUID())
      .sign(privateKey);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'chargegate-verifier-'));
    daemonKeystore = await Keystore.open(options());
    cliKeystore = await Keystore.open(options());
    verifier = new AccessTokenVerifier({ keystore: daemonKeystore, issuer: () => ISSUER, now });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('honours a rotation written by another process at once, keeps the retired key until it expires, then refuses it', async () => {
    const oldKey = daemonKeystore.accessTokenSigningKey();
    const before = await issue(daemonKeystore);
    expect(await verifier.verify(before)).toMatchObject({ client_id: 'app-test' });

    await cliKeystore.rotate();
    clockMs += 31_000;
    const after = await issue(cliKeystore);
    expect(kid(after)).not.toBe(kid(before));
    // The daemon's verifier never saw this kid; the keystore file has it now.
    expect(await verifier.verify(after)).toMatchObject({ client_id: 'app-test' });
    expect(await verifier.verify(before)).toMatchObject({ client_id: 'app-test' });

    // A token key is retained for a token lifetime plus clock skew (960 s) after its successor took over.
    clockMs += 961_000;
    const lateWithOldKey = await signWith(oldKey.privateKey, oldKey.kid);
    await expect(verifier.verify(lateWithOldKey)).rejects.toThrow('token not signed by a published access-token key');
    expect(await verifier.verify(await issue(cliKeystore))).toMatchObject({ client_id: 'app-test' });
  });

  it('refuses at once a retired key removed from the keystore file by hand', async () => {
    clockMs += 3_600_000;
    await cliKeystore.rotate();
    clockMs += 31_000;
    const current = await issue(cliKeystore);
    const retiredKid = daemonKeystore.list().find((k) => k.purpose === 'token' && k.state === 'retired')!.id;
    const retired = await signWith(retiredPrivateKey(retiredKid), retiredKid);
    expect(await verifier.verify(retired)).toMatchObject({ client_id: 'app-test' });
    expect(await verifier.verify(current)).toMatchObject({ client_id: 'app-test' });

    // An installer drops the retired key (say it leaked); the running daemon must stop accepting it.
    const file = path.join(dataDir, KEYSTORE_FILE);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { keys: Array<{ id: string }> };
    const edited = `${file}.edit`;
    writeFileSync(edited, JSON.stringify({ ...doc, keys: doc.keys.filter((k) => k.id !== retiredKid) }), {
      mode: 0o600,
    });
    renameSync(edited, file);
    await expect(verifier.verify(retired)).rejects.toThrow('token not signed by a published access-token key');
    expect(await verifier.verify(current)).toMatchObject({ client_id: 'app-test' });
  });

  /**
   * A key's private half as the keystore file holds it (no passphrase here, so plain PKCS#8): the keystore only hands
   * out signing keys.
   */
  function retiredPrivateKey(id: string): KeyObject {
    const doc = JSON.parse(readFileSync(path.join(dataDir, KEYSTORE_FILE), 'utf8')) as {
      keys: Array<{ id: string; privateKey: string }>;
    };
    return createPrivateKey(doc.keys.find((k) => k.id === id)!.privateKey);
  }
});

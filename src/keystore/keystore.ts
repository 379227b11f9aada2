import { existsSync, mkdirSync, chmodSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import type { KeyObject } from 'node:crypto';
import type { Logger } from '../log/index.js';
import {
  createKeystoreDocument,
  fileStamp,
  keystorePath,
  KEY_PURPOSES,
  KeystoreError,
  readKeystoreDocument,
  sameStamp,
  withKeystoreLock,
  writeKeystoreDocument,
  type FileStamp,
  type KeyPurpose,
  type KeystoreDocument,
  type StoredKey,
} from './keystore-file.js';
import {
  exportPrivateKey,
  generateKeys,
  importPrivateKey,
  isEncryptedPem,
  publicJwk,
  scheduledKey,
  type PublicJwk,
} from './signing-keys.js';
import { isSealedEncrypted, openSecret, sealSecret } from './sealed-secret.js';
import { createStationCa, readStationCsr, signStationCsr } from './station-ca.js';

/**
 * The JWKS kid partners verify webhooks with (docs/partners/webhooks.md#checking-the-signature): always the webhook key that signs now.
 */
export const WEBHOOK_SIGNING_KID = 'sign';

/**
 * Access tokens live this long (docs/partners/tokens.md#getting-a-token-partners); a retired token key outlives every token it
 * signed.
 */
export const ACCESS_TOKEN_LIFETIME_S = 900;

/**
 * Purposes a keystore written by an earlier release lacks: opening it adds their key once. Any other missing purpose
 * is a damaged keystore, since a new webhook or token key would silently replace the one partners know.
 */
const LATER_PURPOSES: readonly KeyPurpose[] = ['webhook-ed25519'];

/** Clocks of the gateway and of a partner's verifier may differ by this much. */
const CLOCK_SKEW_S = 60;

export interface KeystoreOptions {
  dataDir: string;
  /** Encrypts the private keys (PKCS#8, AES-256-CBC); see keystorePassphrase(). */
  passphrase?: string;
  /**
   * How long a retired key stays in the JWKS after its successor started signing (config keystore.retiredKeyGraceS).
   */
  retiredKeyGraceS: number;
  /** How long `keys rotate` publishes the next key before it signs (config keystore.nextKeyLeadS). */
  nextKeyLeadS?: number;
  now?: () => Date;
  logger?: Logger;
}

export interface SigningKey {
  /** The kid a verifier finds the public key under in the JWKS right now. */
  kid: string;
  /** The key's own stable name; its kid once it no longer signs. */
  id: string;
  alg: StoredKey['alg'];
  privateKey: KeyObject;
}

/** The webhook keys that sign now: RSA for the documented profile and rfc9421's rsa-pss-sha512, and Ed25519. */
export interface WebhookSigningKeys {
  rsa: SigningKey;
  ed25519: SigningKey;
}

export type KeyState = 'next' | 'signing' | 'retired' | 'expired';

/** A key as `keys list` shows it: never private material. */
export interface KeyInfo {
  id: string;
  purpose: KeyPurpose;
  alg: string;
  state: KeyState;
  /** The kid it is published under in the JWKS now, null once expired. */
  jwksKid: string | null;
  createdAt: string;
  activatesAt: string;
  retiresAt: string | null;
  expiresAt: string | null;
}

export interface RotationResult {
  /** The instant the new keys start signing. */
  activatesAt: string;
  keys: KeyInfo[];
}

interface LoadedKey {
  stored: StoredKey;
  privateKey: KeyObject;
  jwk: PublicJwk;
}

/**
 * The gateway's signing keys, in one file under dataDir. Every use re-checks the file, so a rotation written by
 * the CLI reaches a running daemon at once, and the timestamps in the file decide which key signs, so all
 * processes agree without coordination.
 *
 * Rotation: the next key is published (under its own kid) `nextKeyLeadS` before it signs; at that instant it
 * becomes `sign` and the previous key stays published under its own kid for retiredKeyGraceS (token keys also
 * for at least a token lifetime). A verifier that re-fetches the JWKS and tries every PS256 key on a failure
 * therefore never rejects a genuine signature.
 */
export class Keystore {
  private readonly file: string;
  private readonly now: () => Date;
  private stamp: FileStamp | undefined;
  private loaded: LoadedKey[] = [];
  private signingIds = new Map<KeyPurpose, string>();
  /** Per station, the upstream password last opened and the sealed text it came from: scrypt runs once per change. */
  private readonly openedPasswords = new Map<string, { sealed: string; password: string }>();

  private constructor(private readonly options: KeystoreOptions) {
    this.file = keystorePath(options.dataDir);
    this.now = options.now ?? (() => new Date());
  }

  /** Opens the keystore, creating it with one key per purpose on first start. */
  static async open(options: KeystoreOptions): Promise<Keystore> {
    const keystore = new Keystore(options);
    mkdirSync(options.dataDir, { recursive: true, mode: 0o750 });
    await keystore.initialise();
    return keystore;
  }

  webhookSigningKey(): SigningKey {
    const key = this.signing('webhook');
    return { kid: WEBHOOK_SIGNING_KID, id: key.stored.id, alg: 'PS256', privateKey: key.privateKey };
  }

  /** The Ed25519 key signs under its own id only: `sign` stays the RSA key the documented profile promises. */
  webhookSigningKeys(): WebhookSigningKeys {
    const ed25519 = this.signing('webhook-ed25519');
    return {
      rsa: this.webhookSigningKey(),
      ed25519: { kid: ed25519.stored.id, id: ed25519.stored.id, alg: 'EdDSA', privateKey: ed25519.privateKey },
    };
  }

  accessTokenSigningKey(): SigningKey {
    const key = this.signing('token');
    return { kid: key.stored.id, id: key.stored.id, alg: 'RS256', privateKey: key.privateKey };
  }

  /**
   * Public keys only: every key that is next, signing, or retired within its grace period, each under its own stable
   * kid; the signing webhook key also under `sign`, first (docs/partners/key-rotation.md#verifying-through-a-key-rotation-partners). Of
   * one purpose if given.
   */
  jwks(purpose?: KeyPurpose): { keys: PublicJwk[] } {
    this.refresh();
    const now = this.now();
    const order: Record<KeyState, number> = { signing: 0, next: 1, retired: 2, expired: 3 };
    const published = this.loaded
      .filter((key) => purpose === undefined || key.stored.purpose === purpose)
      .map((key) => ({ key, state: stateOf(this.stored(), key.stored, now) }))
      .filter(({ state }) => state !== 'expired')
      .sort(
        (a, b) =>
          KEY_PURPOSES.indexOf(a.key.stored.purpose) - KEY_PURPOSES.indexOf(b.key.stored.purpose) ||
          order[a.state] - order[b.state],
      );
    return {
      keys: published.flatMap(({ key, state }) => {
        const own = { ...key.jwk, kid: key.stored.id };
        const kid = kidOf(key.stored, state);
        return kid === own.kid ? [own] : [{ ...key.jwk, kid }, own];
      }),
    };
  }

  list(): KeyInfo[] {
    this.refresh();
    const now = this.now();
    return this.loaded.map(({ stored }) => keyInfo(this.stored(), stored, now));
  }

  /**
   * Starts a rotation of every purpose: new keys published now, signing after nextKeyLeadS; the current keys
   * retire at that instant. Refused while a previous rotation has not switched yet.
   */
  async rotate(): Promise<RotationResult> {
    // Refused before generating keys that would be thrown away; checked again under the lock, which is not held
    // while the keys generate.
    refuseWhileRotating(readKeystoreDocument(this.file), this.now());
    const generated = await generateKeys(this.options.passphrase);
    const result = withKeystoreLock(this.file, () => {
      const doc = readKeystoreDocument(this.file);
      const now = this.now();
      refuseWhileRotating(doc, now);
      const activatesAt = new Date(now.getTime() + (this.options.nextKeyLeadS ?? 0) * 1000);
      const kept = doc.keys.filter((k) => k.expiresAt === null || new Date(k.expiresAt) > now);
      for (const purpose of KEY_PURPOSES) {
        const current = signingKeyOf(kept, purpose, now);
        if (current) {
          current.retiresAt = activatesAt.toISOString();
          current.expiresAt = new Date(activatesAt.getTime() + this.retentionS(purpose) * 1000).toISOString();
        }
      }
      const added = generated.map((key) => scheduledKey(key, now, activatesAt));
      writeKeystoreDocument(this.file, { ...doc, keys: [...kept, ...added] });
      return { activatesAt: activatesAt.toISOString(), ids: added.map((k) => k.id) };
    });
    this.refresh();
    this.options.logger?.info({ keys: result.ids, activatesAt: result.activatesAt }, 'keystore rotation started');
    const now = this.now();
    return {
      activatesAt: result.activatesAt,
      keys: this.loaded
        .filter((k) => result.ids.includes(k.stored.id))
        .map((k) => keyInfo(this.stored(), k.stored, now)),
    };
  }

  /** The station CA's certificate, made now (once, under the keystore lock) if there is none yet. */
  async ensureStationCa(): Promise<string> {
    const existing = readKeystoreDocument(this.file).stationCa?.certificate;
    if (existing) return existing;
    const made = await createStationCa(hostname());
    const privateKey = exportPrivateKey(
      importPrivateKey(made.privateKeyPem, undefined, 'station CA key'),
      this.options.passphrase,
    );
    const certificate = withKeystoreLock(this.file, () => {
      const doc = readKeystoreDocument(this.file);
      // Another process may have made one meanwhile: the first one stays, so certificates it issued stay valid.
      if (doc.stationCa) return doc.stationCa.certificate;
      writeKeystoreDocument(this.file, {
        ...doc,
        stationCa: { certificate: made.certificate, privateKey, createdAt: this.now().toISOString() },
      });
      this.options.logger?.info({ file: this.file }, 'station CA created (security profile 3)');
      return made.certificate;
    });
    return certificate;
  }

  /** Keeps the password `stationId` presents to the CSMS (docs/design/uplink.md#uplink-what-the-csms-sees), encrypted like the keys. */
  setUpstreamPassword(stationId: string, password: string): void {
    const sealed = sealSecret(password, this.options.passphrase);
    withKeystoreLock(this.file, () => {
      const doc = readKeystoreDocument(this.file);
      writeKeystoreDocument(this.file, {
        ...doc,
        upstreamPasswords: { ...doc.upstreamPasswords, [stationId]: sealed },
      });
    });
  }

  /**
   * The password `stationId` presents to the CSMS, read from the file at each call (the CLI may have changed it) and
   * decrypted only when its entry changed: every link asks at every connect attempt, and scrypt blocks the event loop.
   */
  upstreamPassword(stationId: string): string | undefined {
    const sealed = readKeystoreDocument(this.file).upstreamPasswords?.[stationId];
    if (sealed === undefined) return undefined;
    const opened = this.openedPasswords.get(stationId);
    if (opened?.sealed === sealed) return opened.password;
    const password = openSecret(sealed, this.options.passphrase, `${this.file}: upstream password of ${stationId}`);
    this.openedPasswords.set(stationId, { sealed, password });
    return password;
  }

  /**
   * A client certificate for the station from its CSR, signed by the station CA (made first if needed: a refused CSR
   * makes none).
   */
  async issueStationCertificate(csrPem: string, stationId: string, validDays: number): Promise<string> {
    const csr = await readStationCsr(csrPem, stationId);
    const certificate = await this.ensureStationCa();
    const stored = readKeystoreDocument(this.file).stationCa!;
    const privateKey = importPrivateKey(stored.privateKey, this.options.passphrase, `${this.file}: station CA key`);
    return signStationCsr({ certificate, privateKey }, csr, validDays, this.now());
  }

  private retentionS(purpose: KeyPurpose): number {
    const grace = this.options.retiredKeyGraceS;
    return purpose === 'token' ? Math.max(grace, ACCESS_TOKEN_LIFETIME_S + CLOCK_SKEW_S) : grace;
  }

  private async initialise(): Promise<void> {
    if (!fileStamp(this.file)) {
      const generated = await generateKeys(this.options.passphrase);
      const now = this.now();
      const doc: KeystoreDocument = {
        format: 'chargegate-keystore/1',
        keys: generated.map((key) => scheduledKey(key, now, now)),
      };
      if (createKeystoreDocument(this.file, doc))
        this.options.logger?.info(
          { file: this.file, keys: doc.keys.map((k) => k.id), encrypted: Boolean(this.options.passphrase) },
          'keystore created',
        );
    }
    this.tightenMode();
    this.refresh();
    const doc = readKeystoreDocument(this.file);
    if (
      this.options.passphrase &&
      !(privateKeysOf(doc).every(isEncryptedPem) && Object.values(doc.upstreamPasswords ?? {}).every(isSealedEncrypted))
    )
      this.encryptExisting();
    await this.addLaterPurposes();
    const missing = KEY_PURPOSES.filter((p) => !this.loaded.some((k) => k.stored.purpose === p));
    if (missing.length > 0) throw new KeystoreError(`${this.file}: no ${missing.join(' or ')} signing key`);
  }

  /**
   * A keystore from a release before a purpose existed gets that purpose's key, signing at once (no partner relies on
   * it yet). Made outside the lock, written under it only if no other process added one meanwhile.
   */
  private async addLaterPurposes(): Promise<void> {
    const lacking = (doc: KeystoreDocument) => LATER_PURPOSES.filter((p) => !doc.keys.some((k) => k.purpose === p));
    const wanted = lacking(readKeystoreDocument(this.file));
    if (wanted.length === 0) return;
    const generated = await generateKeys(this.options.passphrase, wanted);
    const added = withKeystoreLock(this.file, () => {
      const doc = readKeystoreDocument(this.file);
      const now = this.now();
      const keys = generated.filter((k) => lacking(doc).includes(k.purpose)).map((k) => scheduledKey(k, now, now));
      if (keys.length > 0) writeKeystoreDocument(this.file, { ...doc, keys: [...doc.keys, ...keys] });
      return keys;
    });
    this.refresh();
    if (added.length > 0)
      this.options.logger?.info(
        { file: this.file, keys: added.map((k) => ({ id: k.id, purpose: k.purpose })) },
        'keystore upgraded: key added for a purpose this release introduced',
      );
  }

  /**
   * A passphrase configured after the keystore was created: encrypt the keys that are still plain (the station CA's
   * too).
   */
  private encryptExisting(): void {
    const passphrase = this.options.passphrase;
    const encrypt = (pem: string, what: string): string =>
      isEncryptedPem(pem) ? pem : exportPrivateKey(importPrivateKey(pem, undefined, what), passphrase);
    withKeystoreLock(this.file, () => {
      const doc = readKeystoreDocument(this.file);
      const keys = doc.keys.map((k) => ({ ...k, privateKey: encrypt(k.privateKey, `${this.file}: key ${k.id}`) }));
      const stationCa = doc.stationCa && {
        ...doc.stationCa,
        privateKey: encrypt(doc.stationCa.privateKey, `${this.file}: station CA key`),
      };
      const upstreamPasswords =
        doc.upstreamPasswords &&
        Object.fromEntries(
          Object.entries(doc.upstreamPasswords).map(([stationId, sealed]) => [
            stationId,
            isSealedEncrypted(sealed)
              ? sealed
              : sealSecret(
                  openSecret(sealed, undefined, `${this.file}: upstream password of ${stationId}`),
                  passphrase,
                ),
          ]),
        );
      writeKeystoreDocument(this.file, {
        ...doc,
        keys,
        ...(stationCa && { stationCa }),
        ...(upstreamPasswords && { upstreamPasswords }),
      });
    });
    this.refresh();
    this.options.logger?.info({ file: this.file }, 'keystore encrypted with the configured passphrase');
  }

  private tightenMode(): void {
    const mode = statSync(this.file).mode & 0o777;
    if ((mode & 0o077) === 0) return;
    chmodSync(this.file, 0o600);
    this.options.logger?.warn(
      { file: this.file, mode: mode.toString(8) },
      'keystore was readable by others; mode set to 0600',
    );
  }

  /** Re-reads the file when another process replaced it; otherwise a stat is the whole cost. */
  private refresh(): void {
    const stamp = fileStamp(this.file);
    if (sameStamp(stamp, this.stamp)) return;
    if (!stamp) {
      if (this.loaded.length === 0) throw new KeystoreError(`${this.file}: keystore missing`);
      if (this.stamp)
        this.options.logger?.error(
          { file: this.file },
          'keystore file disappeared; signing with the keys already loaded',
        );
      this.stamp = undefined;
      return;
    }
    const previous = new Map(this.loaded.map((k) => [k.stored.id, k]));
    try {
      this.loaded = readKeystoreDocument(this.file).keys.map((stored) => {
        const known = previous.get(stored.id);
        const privateKey =
          known && known.stored.privateKey === stored.privateKey
            ? known.privateKey
            : importPrivateKey(stored.privateKey, this.options.passphrase, `${this.file}: key ${stored.id}`);
        return { stored, privateKey, jwk: known?.jwk ?? publicJwk(privateKey, stored.id, stored.alg) };
      });
    } catch (err) {
      // A running daemon keeps signing with what it has rather than failing every webhook and API call.
      if (!(err instanceof KeystoreError) || previous.size === 0) throw err;
      this.options.logger?.error(
        { file: this.file, err: err.message },
        'keystore changed on disk but cannot be read; signing with the keys already loaded',
      );
      this.stamp = stamp;
      return;
    }
    if (this.stamp) this.options.logger?.info({ file: this.file }, 'keystore changed on disk; reloaded');
    this.stamp = stamp;
  }

  private signing(purpose: KeyPurpose): LoadedKey {
    this.refresh();
    const now = this.now();
    const stored = signingKeyOf(
      this.loaded.map((k) => k.stored),
      purpose,
      now,
    );
    const key = stored && this.loaded.find((k) => k.stored === stored);
    if (!key) throw new KeystoreError(`${this.file}: no ${purpose} signing key`);
    if (this.signingIds.get(purpose) !== key.stored.id) {
      if (this.signingIds.has(purpose))
        this.options.logger?.info({ purpose, id: key.stored.id }, 'signing key switched');
      this.signingIds.set(purpose, key.stored.id);
    }
    return key;
  }

  private stored(): StoredKey[] {
    return this.loaded.map((k) => k.stored);
  }
}

/**
 * The keys of a data dir as `keys list` shows them, from the keystore file alone: no passphrase needed, since
 * nothing private is decrypted or shown. Undefined when there is no keystore yet.
 */
export function listKeys(dataDir: string, now: Date = new Date()): KeyInfo[] | undefined {
  const file = keystorePath(dataDir);
  if (!existsSync(file)) return undefined;
  const { keys } = readKeystoreDocument(file);
  return keys.map((stored) => keyInfo(keys, stored, now));
}

/** Every private key the keystore file holds: the signing keys and the station CA's. */
export function privateKeysOf(doc: KeystoreDocument): string[] {
  return [...doc.keys.map((k) => k.privateKey), ...(doc.stationCa ? [doc.stationCa.privateKey] : [])];
}

/** Exactly one key per purpose is `signing`, whatever the timestamps say, so `sign` is always published. */
function stateOf(all: StoredKey[], stored: StoredKey, now: Date): KeyState {
  if (signingKeyOf(all, stored.purpose, now) === stored) return 'signing';
  if (new Date(stored.activatesAt) > now) return 'next';
  return stored.expiresAt !== null && new Date(stored.expiresAt) <= now ? 'expired' : 'retired';
}

function kidOf(stored: StoredKey, state: KeyState): string {
  return stored.purpose === 'webhook' && state === 'signing' ? WEBHOOK_SIGNING_KID : stored.id;
}

function keyInfo(all: StoredKey[], stored: StoredKey, now: Date): KeyInfo {
  const state = stateOf(all, stored, now);
  return {
    id: stored.id,
    purpose: stored.purpose,
    alg: stored.alg,
    state,
    jwksKid: state === 'expired' ? null : kidOf(stored, state),
    createdAt: stored.createdAt,
    activatesAt: stored.activatesAt,
    retiresAt: stored.retiresAt,
    expiresAt: stored.expiresAt,
  };
}

function refuseWhileRotating(doc: KeystoreDocument, now: Date): void {
  const pending = doc.keys.find((k) => new Date(k.activatesAt) > now);
  if (pending)
    throw new KeystoreError(
      `a rotation is already in progress: ${pending.id} starts signing at ${pending.activatesAt}`,
    );
}

/** The key of a purpose that signs at `now`: the most recently activated one (the earliest if the clock went back). */
function signingKeyOf(keys: StoredKey[], purpose: KeyPurpose, now: Date): StoredKey | undefined {
  const ofPurpose = keys
    .filter((k) => k.purpose === purpose)
    .sort((a, b) => a.activatesAt.localeCompare(b.activatesAt));
  return ofPurpose.filter((k) => new Date(k.activatesAt) <= now).at(-1) ?? ofPurpose[0];
}

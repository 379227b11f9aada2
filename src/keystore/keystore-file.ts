import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ChargegateError } from '../errors/index.js';
import { KEYSTORE_FILE } from '../store/index.js';

/** The keystore lives beside the database; every process that opens dataDir finds it there. */
export { KEYSTORE_FILE };

/** `webhook-ed25519` signs the rfc9421 profile's ed25519 variant; keystores made before it get it on open. */
export const KEY_PURPOSES = ['webhook', 'token', 'webhook-ed25519'] as const;
export type KeyPurpose = (typeof KEY_PURPOSES)[number];

const isoDate = z.iso.datetime();

/**
 * One signing key. Its life is written down as instants, so every process reading the file agrees on which key
 * signs at any moment without talking to the others: published from createdAt, signing from activatesAt until
 * retiresAt (set when a successor is created), published until expiresAt.
 */
const storedKeySchema = z.strictObject({
  id: z.string().min(1),
  purpose: z.enum(KEY_PURPOSES),
  alg: z.enum(['PS256', 'RS256', 'EdDSA']),
  createdAt: isoDate,
  activatesAt: isoDate,
  retiresAt: isoDate.nullable(),
  expiresAt: isoDate.nullable(),
  /** PKCS#8 PEM, `ENCRYPTED PRIVATE KEY` when the keystore has a passphrase. */
  privateKey: z.string().startsWith('-----BEGIN '),
});

/** The CA that issues stations' client certificates (security profile 3), made on first need. */
const storedStationCaSchema = z.strictObject({
  certificate: z.string().startsWith('-----BEGIN CERTIFICATE-----'),
  /** PKCS#8 PEM, encrypted like the signing keys. */
  privateKey: z.string().startsWith('-----BEGIN '),
  createdAt: isoDate,
});

const keystoreDocumentSchema = z.strictObject({
  format: z.literal('chargegate-keystore/1'),
  keys: z.array(storedKeySchema),
  stationCa: storedStationCaSchema.optional(),
  /** docs/design/uplink.md#uplink-what-the-csms-sees: per station, the password it presents to the CSMS (sealed-secret.ts). */
  upstreamPasswords: z.record(z.string(), z.string()).optional(),
});

export type StoredKey = z.output<typeof storedKeySchema>;
export type KeystoreDocument = z.output<typeof keystoreDocumentSchema>;

/** The keystore file cannot be used (corrupt, wrong passphrase, unreadable): the message says what to do. */
export class KeystoreError extends ChargegateError {
  override name = 'KeystoreError';
  readonly code = 'CHARGEGATE_KEYSTORE';
}

/** Identity of the file on disk: a rename by another process changes the inode, an edit changes mtime or size. */
export interface FileStamp {
  ino: number;
  mtimeMs: number;
  size: number;
}

export function keystorePath(dataDir: string): string {
  return path.join(dataDir, KEYSTORE_FILE);
}

export function fileStamp(file: string): FileStamp | undefined {
  try {
    const s = statSync(file);
    return { ino: s.ino, mtimeMs: s.mtimeMs, size: s.size };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export function sameStamp(a: FileStamp | undefined, b: FileStamp | undefined): boolean {
  return a !== undefined && b !== undefined && a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.size === b.size;
}

export function readKeystoreDocument(file: string): KeystoreDocument {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KeystoreError(`${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      cause: err,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new KeystoreError(`${file}: not a chargegate keystore (invalid JSON)`, { cause: err });
  }
  const parsed = keystoreDocumentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new KeystoreError(
      `${file}: not a chargegate keystore (${issue ? `${issue.path.join('.') || 'top level'}: ${issue.message}` : 'invalid'})`,
    );
  }
  return parsed.data;
}

/**
 * Writes the whole document to a temp file and renames it over the keystore, so a reader (the daemon) sees the
 * old file or the new one, never half of one. Mode 0600 from the first byte: private keys are never readable by others.
 */
export function writeKeystoreDocument(file: string, doc: KeystoreDocument): void {
  const tmp = writeTemp(file, doc);
  renameSync(tmp, file);
  syncDirectory(path.dirname(file));
}

/** Creates the keystore only if no other process created it first; returns false when one did. */
export function createKeystoreDocument(file: string, doc: KeystoreDocument): boolean {
  const tmp = writeTemp(file, doc);
  try {
    linkSync(tmp, file);
    syncDirectory(path.dirname(file));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

const LOCK_STALE_MS = 60_000;

/**
 * Runs a read-modify-write of the keystore while holding `<file>.lock`, so two `keys rotate` at once cannot
 * lose one rotation. A lock left by a crashed process is taken over after a minute.
 */
export function withKeystoreLock<T>(file: string, fn: () => T): T {
  const lock = `${file}.lock`;
  let fd: number | undefined;
  const deadline = Date.now() + 10_000;
  while (fd === undefined) {
    try {
      fd = openSync(lock, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (fileStamp(lock)?.mtimeMs ?? Date.now());
      if (age > LOCK_STALE_MS) rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw new KeystoreError(`${lock}: another process holds the keystore lock`);
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  try {
    return fn();
  } finally {
    closeSync(fd);
    rmSync(lock, { force: true });
  }
}

function writeTemp(file: string, doc: KeystoreDocument): string {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(doc, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/** The rename is durable only once the directory entry is on disk. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

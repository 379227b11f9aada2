import { createHash, randomBytes } from 'node:crypto';
import {
  constants,
  createReadStream,
  mkdirSync,
  openSync,
  fsyncSync,
  closeSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { statement, type Database } from '../store/index.js';
import { FirmwareError } from './errors.js';

/** Where images live: their own files, never the database (contract 11.4). */
export const FIRMWARE_DIR = 'firmware';

/** 2.0.1 UpdateFirmware's bounds on firmware.signature and firmware.signingCertificate (characters). */
export const MAX_SIGNATURE_CHARS = 800;
export const MAX_SIGNING_CERTIFICATE_CHARS = 5500;

/** An image stored in dataDir/firmware/<imageId>, as `firmware list` and the API show it. */
export interface FirmwareImage {
  imageId: string;
  /** The name stations fetch it under (the added file's name, made URL-safe). */
  fileName: string;
  sha256: string;
  size: number;
  firmwareVersion: string | null;
  signature: string | null;
  signingCertificate: string | null;
  addedAt: string;
}

export interface ImageBounds {
  maxImageBytes: number;
  maxTotalBytes: number;
}

export interface AddImageInput {
  file: string;
  firmwareVersion?: string;
  signature?: string;
  signingCertificate?: string;
}

const IMAGE_COLUMNS = `id AS imageId, file_name AS fileName, sha256, size, firmware_version AS firmwareVersion,
  signature, signing_certificate AS signingCertificate, added_at AS addedAt`;

export function firmwareDir(dataDir: string): string {
  return path.join(path.resolve(dataDir), FIRMWARE_DIR);
}

/**
 * Copies the file into dataDir/firmware/ under a temporary name (hashed and counted as it is copied, fsynced) and
 * renames it to its id in the write that records it: an image is there whole with its row, or not at all. Refused
 * with the reason (FirmwareError) when it is, or turns out while copying to be, over maxImageBytes or what
 * maxTotalBytes leaves, or is stored already; nothing is left behind then.
 */
export async function addImage(
  db: Database,
  dataDir: string,
  bounds: ImageBounds,
  input: AddImageInput,
  now: Date = new Date(),
): Promise<FirmwareImage> {
  checkSignature(input);
  const source = statSync(input.file, { throwIfNoEntry: false });
  if (!source?.isFile()) throw new FirmwareError(`${input.file}: no such file`, 'invalid');
  if (source.size === 0) throw new FirmwareError(`${input.file} is empty: not a firmware image`, 'invalid');
  const allowed = (): number => Math.min(bounds.maxImageBytes, bounds.maxTotalBytes - totalBytes(db));
  refuseOver(source.size, bounds, allowed(), db);
  const dir = firmwareDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const partial = path.join(dir, `.adding-${randomBytes(8).toString('hex')}.partial`);
  try {
    const { sha256, size } = await copyCounted(input.file, partial, allowed(), (copied) =>
      refuseOver(copied, bounds, allowed(), db),
    );
    const image: FirmwareImage = {
      imageId: sha256.slice(0, 12),
      fileName: urlSafeName(path.basename(input.file)),
      sha256,
      size,
      firmwareVersion: input.firmwareVersion ?? null,
      signature: input.signature ?? null,
      signingCertificate: input.signingCertificate ?? null,
      addedAt: now.toISOString(),
    };
    db.transaction(() => {
      const stored = statement<[string], { imageId: string }>(
        db,
        'SELECT id AS imageId FROM firmware_images WHERE sha256 = ?',
      ).get(sha256);
      if (stored) throw new FirmwareError(`this image is stored already as ${stored.imageId}`, 'conflict');
      // Again inside the write: another `firmware add` may have finished meanwhile.
      refuseOver(size, bounds, allowed(), db);
      statement(
        db,
        `INSERT INTO firmware_images (id, file_name, sha256, size, firmware_version, signature, signing_certificate, added_at)
         VALUES (@imageId, @fileName, @sha256, @size, @firmwareVersion, @signature, @signingCertificate, @addedAt)`,
      ).run(image);
      renameSync(partial, path.join(dir, image.imageId));
    }).immediate();
    syncDir(dir);
    return image;
  } finally {
    rmSync(partial, { force: true });
  }
}

export function listImages(db: Database): FirmwareImage[] {
  return statement<[], FirmwareImage>(db, `SELECT ${IMAGE_COLUMNS} FROM firmware_images ORDER BY added_at, id`).all();
}

export function findImage(db: Database, imageId: string): FirmwareImage | undefined {
  return statement<[string], FirmwareImage>(db, `SELECT ${IMAGE_COLUMNS} FROM firmware_images WHERE id = ?`).get(
    imageId,
  );
}

/**
 * Removes the image's row and file; refused while a rollout that uses it is not finished (a station could still be
 * sent it, or be downloading it).
 */
export function removeImage(db: Database, dataDir: string, imageId: string): void {
  db.transaction(() => {
    if (!findImage(db, imageId)) throw new FirmwareError(`no firmware image "${imageId}"`, 'not-found');
    const busy = statement<[string], { id: string }>(
      db,
      `SELECT r.id FROM firmware_rollouts r JOIN firmware_rollout_stations s ON s.rollout_id = r.id
       WHERE r.image_id = ? AND (s.state IN ('sent', 'downloading', 'downloaded', 'installing')
         OR (r.state = 'running' AND s.state = 'waiting')) LIMIT 1`,
    ).get(imageId);
    if (busy)
      throw new FirmwareError(
        `image ${imageId} is used by rollout ${busy.id}, which is not finished: wait for it, or cancel it (firmware cancel ${busy.id})`,
        'conflict',
      );
    statement(db, 'DELETE FROM firmware_images WHERE id = ?').run(imageId);
    rmSync(path.join(firmwareDir(dataDir), imageId), { force: true });
  }).immediate();
}

/**
 * The image's file, opened for reading without following a symlink (one placed in dataDir/firmware is refused), and
 * only if it is a regular file of the size recorded; undefined otherwise.
 */
export async function openImage(
  dataDir: string,
  image: Pick<FirmwareImage, 'imageId' | 'size'>,
): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path.join(firmwareDir(dataDir), image.imageId), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  const stat = await handle.stat();
  if (stat.isFile() && stat.size === image.size) return handle;
  await handle.close();
  return undefined;
}

function totalBytes(db: Database): number {
  return statement<[], number>(db, 'SELECT COALESCE(SUM(size), 0) FROM firmware_images').pluck().get() ?? 0;
}

function refuseOver(size: number, bounds: ImageBounds, allowed: number, db: Database): void {
  if (size <= allowed) return;
  if (size > bounds.maxImageBytes)
    throw new FirmwareError(
      `the image is larger than firmware.maxImageBytes (${bounds.maxImageBytes} bytes): not stored`,
      'invalid',
    );
  throw new FirmwareError(
    `the images stored take ${totalBytes(db)} of firmware.maxTotalBytes (${bounds.maxTotalBytes} bytes): this one ` +
      `(${size} bytes or more) does not fit; remove one first (firmware remove)`,
    'invalid',
  );
}

async function copyCounted(
  from: string,
  to: string,
  allowed: number,
  over: (copied: number) => void,
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  const out = await open(to, 'wx', 0o640);
  let size = 0;
  try {
    // Read a byte past the bound at most: a file that grows while it is copied is refused as it passes it.
    for await (const chunk of createReadStream(from, { end: allowed })) {
      const bytes = chunk as Buffer;
      size += bytes.length;
      if (size > allowed) over(size);
      hash.update(bytes);
      await out.write(bytes);
    }
    await out.sync();
  } finally {
    await out.close();
  }
  return { sha256: hash.digest('hex'), size };
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The added file's name as a URL path segment every station can take: letters, digits, `.`, `-`, `_`. */
export function urlSafeName(name: string): string {
  const safe = name
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 100);
  return safe === '' ? 'firmware.bin' : safe;
}

function checkSignature(input: AddImageInput): void {
  if (input.signature !== undefined && input.signature.length > MAX_SIGNATURE_CHARS)
    throw new FirmwareError(`--signature: more than the ${MAX_SIGNATURE_CHARS} characters 2.0.1 allows`, 'invalid');
  if (input.signingCertificate !== undefined && input.signingCertificate.length > MAX_SIGNING_CERTIFICATE_CHARS)
    throw new FirmwareError(
      `--signing-cert: more than the ${MAX_SIGNING_CERTIFICATE_CHARS} characters 2.0.1 allows`,
      'invalid',
    );
  if ((input.signature === undefined) !== (input.signingCertificate === undefined))
    throw new FirmwareError('--signature and --signing-cert go together', 'invalid');
}

import { randomBytes } from 'node:crypto';
import { createWriteStream, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, type Stats } from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ChargegateError } from '../errors/index.js';

/** The folder under dataDir the uploaded station logs live in, one folder per log collection. */
export const LOGS_DIR = 'logs';

/** An upload that went past logs.maxUploadBytes: its partial file is removed (HTTP 413, FTP 552). */
export class UploadTooLargeError extends ChargegateError {
  override name = 'UploadTooLargeError';
  readonly code = 'CHARGEGATE_UPLOAD_TOO_LARGE';
  constructor(readonly maxBytes: number) {
    super(`upload over logs.maxUploadBytes (${maxBytes} bytes): refused, nothing kept`);
  }
}

/** A file kept for a log collection. */
export interface StoredLog {
  logId: string;
  name: string;
  bytes: number;
  /** When it arrived (its folder's modification time, ms since the epoch). */
  at: number;
}

/**
 * The station logs on disk (contract 11.3): `dataDir/logs/<logId>/<name>`, never in the database. A file is written
 * under a temporary name in its folder and renamed when whole, so a file with its real name is always complete and a
 * name that is a symlink is replaced, never followed. Names a station chooses are reduced to a safe base name.
 */
export class LogFiles {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, LOGS_DIR);
  }

  /**
   * Streams `source` into the collection's folder as `name`, refusing past `maxBytes` (UploadTooLargeError, the partial
   * file removed; so is the partial of any other failure). Resolves with what was kept.
   */
  async receive(logId: string, name: string, source: Readable, maxBytes: number): Promise<StoredLog> {
    const folder = this.createdFolder(logId);
    const partial = path.join(folder, `.partial-${randomBytes(8).toString('hex')}`);
    let bytes = 0;
    const bounded = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done(bytes > maxBytes ? new UploadTooLargeError(maxBytes) : null, chunk);
      },
    });
    try {
      // 'wx': O_EXCL, so not even a symlink planted under the temporary name is followed.
      await pipeline(source, bounded, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
      const kept = safeName(name);
      renameSync(partial, path.join(folder, kept));
      return { logId, name: kept, bytes, at: Date.now() };
    } catch (err) {
      rmSync(partial, { force: true });
      throw err;
    }
  }

  /** The path of a kept file, or undefined when it is not there (removed by a bound, or never arrived). */
  pathOf(logId: string, name: string): string | undefined {
    const folder = this.folderOf(logId);
    if (!folder || safeName(name) !== name) return undefined;
    const file = path.join(folder, name);
    return lstatSync(file, { throwIfNoEntry: false })?.isFile() ? file : undefined;
  }

  /** The names of the files kept for a collection (none while its folder does not exist). */
  namesIn(logId: string): string[] {
    const folder = this.folderOf(logId);
    return folder ? readdirSync(folder).filter((name) => !name.startsWith('.')) : [];
  }

  /** Every kept file, oldest first. Partial files and anything not a plain file are not listed. */
  list(): StoredLog[] {
    const logs: StoredLog[] = [];
    if (!lstatSync(this.root, { throwIfNoEntry: false })?.isDirectory()) return logs;
    for (const logId of readdirSync(this.root)) {
      if (!VALID_ID.test(logId)) continue;
      const folder = this.folderOf(logId);
      if (!folder) continue;
      for (const name of readdirSync(folder)) {
        const stat = lstatSync(path.join(folder, name), { throwIfNoEntry: false });
        if (stat?.isFile() && !name.startsWith('.')) logs.push(storedLog(logId, name, stat));
      }
    }
    return logs.sort((a, b) => a.at - b.at);
  }

  /** Removes a collection's folder with what it holds. */
  remove(logId: string): void {
    if (!VALID_ID.test(logId)) return;
    rmSync(path.join(this.root, logId), { recursive: true, force: true });
  }

  /**
   * Removes the oldest files until all together take at most `maxTotalBytes`, the one named by `keep` last of all;
   * returns the log ids removed.
   */
  keepWithin(maxTotalBytes: number, keep?: string): string[] {
    const logs = this.list();
    let total = logs.reduce((sum, log) => sum + log.bytes, 0);
    const removed: string[] = [];
    const order = [...logs.filter((l) => l.logId !== keep), ...logs.filter((l) => l.logId === keep)];
    for (const log of order) {
      if (total <= maxTotalBytes) break;
      if (removed.includes(log.logId)) continue;
      this.remove(log.logId);
      // The whole folder went, with every file in it.
      total -= logs.reduce((sum, l) => sum + (l.logId === log.logId ? l.bytes : 0), 0);
      removed.push(log.logId);
    }
    return removed;
  }

  /** Removes the folders whose files arrived before `before` (ms since the epoch); returns their log ids. */
  removeOlderThan(before: number): string[] {
    const old = [
      ...new Set(
        this.list()
          .filter((l) => l.at < before)
          .map((l) => l.logId),
      ),
    ];
    old.forEach((logId) => this.remove(logId));
    return old;
  }

  /** The collection's folder, if it is one (a folder replaced by a symlink is not used). */
  private folderOf(logId: string): string | undefined {
    // Log ids are chargegate's own; checked anyway so that no caller can make one reach outside the root.
    if (!VALID_ID.test(logId)) throw new Error(`not a log id: ${logId.slice(0, 40)}`);
    const folder = path.join(this.root, logId);
    return lstatSync(folder, { throwIfNoEntry: false })?.isDirectory() ? folder : undefined;
  }

  private createdFolder(logId: string): string {
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    if (VALID_ID.test(logId)) mkdirSync(path.join(this.root, logId), { recursive: true, mode: 0o700 });
    const folder = this.folderOf(logId);
    if (!folder) throw new Error(`${path.join(this.root, logId)} is not a folder`);
    return folder;
  }
}

/** chargegate's log ids: what randomLogId makes. */
const VALID_ID = /^[a-z0-9]{8,40}$/;

/** A new log id: random, so it tells nothing about the others. */
export function randomLogId(): string {
  return randomBytes(10).toString('hex');
}

/** Up to 128 characters of letters, digits, `.`, `_`, `-` after the last `/` or `\`; no leading dot. */
export function safeName(name: string): string {
  const base = name.split(/[/\\]/).pop() ?? '';
  const cleaned = base
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 128);
  return cleaned === '' ? 'upload.bin' : cleaned;
}

function storedLog(logId: string, name: string, stat: Stats): StoredLog {
  return { logId, name, bytes: stat.size, at: stat.mtimeMs };
}

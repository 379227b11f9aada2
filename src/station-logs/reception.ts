import type { Readable } from 'node:stream';
import { messageOf, type Logger } from '../log/index.js';
import type { LogFiles, StoredLog } from './log-files.js';
import type { UploadGrant, UploadGrants } from './upload-grants.js';

/** What the log collections hear of the uploads under their grants. */
export interface UploadEvents {
  /** Bytes started to arrive. */
  receiving(grant: UploadGrant): void;
  /** A whole file arrived and is kept. */
  arrived(grant: UploadGrant, stored: StoredLog): void;
  /** An upload ended without a file (too large, cut, broken off): the collection goes on waiting. */
  broken(grant: UploadGrant, reason: string): void;
}

/** The upload window ended while bytes still came: the transfer is cut (contract 11.4, bounded in time). */
export class UploadCutError extends Error {
  override name = 'UploadCutError';
}

/**
 * Receiving one upload, the same over HTTP and FTP: at most one at a time per grant, bounded by logs.maxUploadBytes
 * and by the grant's expiry (a slow or abandoned transfer is cut then), the collection told how it went.
 */
export class UploadReception {
  /** The uploads being received now, to cut when the daemon stops. */
  private readonly receiving = new Set<Readable>();

  constructor(
    private readonly options: {
      grants: UploadGrants;
      files: LogFiles;
      maxUploadBytes: () => number;
      events: UploadEvents;
      logger: Logger;
      now: () => number;
    },
  ) {}

  get grants(): UploadGrants {
    return this.options.grants;
  }

  get files(): LogFiles {
    return this.options.files;
  }

  get maxUploadBytes(): number {
    return this.options.maxUploadBytes();
  }

  /** Streams `source` into the grant's folder; rejects (and keeps nothing) when it is too large, cut or broken off. */
  async receive(grant: UploadGrant, name: string, source: Readable, via: 'http' | 'ftp'): Promise<StoredLog> {
    const { files, events, now } = this.options;
    const log = this.options.logger.child({ logId: grant.logId, stationId: grant.stationId, via });
    grant.receiving = true;
    events.receiving(grant);
    const cut = setTimeout(
      () => source.destroy(new UploadCutError('the upload window (logs.uploadWindowS) ended before the upload did')),
      Math.max(0, grant.expiresAt - now()),
    );
    this.receiving.add(source);
    try {
      const stored = await files.receive(grant.logId, name, source, this.maxUploadBytes);
      grant.spent = true;
      log.info({ name: stored.name, bytes: stored.bytes }, 'station log received');
      events.arrived(grant, stored);
      return stored;
    } catch (err) {
      const reason = messageOf(err);
      log.warn({ reason }, 'station log upload failed: nothing kept');
      events.broken(grant, reason);
      throw err;
    } finally {
      clearTimeout(cut);
      this.receiving.delete(source);
      grant.receiving = false;
    }
  }

  /** Cuts every upload under way (the daemon stops: a stalled station must not hold the stop up). */
  cutAll(): void {
    for (const source of this.receiving) source.destroy(new UploadCutError('chargegate is stopping'));
  }
}

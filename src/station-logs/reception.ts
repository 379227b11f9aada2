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

/** A grant taken by one upload (an HTTP request, an FTP transfer), from before its first byte until it ends. */
export interface UploadClaim {
  readonly grant: UploadGrant;
  /** Destroyed with an UploadCutError when the upload window ends or the daemon stops, while the claim lasts. */
  track(stream: Destroyable): void;
  /** Ends the claim: the grant may be claimed again unless a file was kept under it. */
  release(): void;
}

/** A stream an upload reads or writes through. */
interface Destroyable {
  destroy(error?: Error): unknown;
}

/** An upload under a grant whose file is already kept, or under a claim already released. */
export class UploadRefusedError extends Error {
  override name = 'UploadRefusedError';
}

const WINDOW_ENDED = 'the upload window (logs.uploadWindowS) ended before the upload did';

/**
 * Receiving one upload, the same over HTTP and FTP: at most one at a time per grant (its claim), one kept file per
 * grant, bounded by logs.maxUploadBytes and by the grant's expiry (a slow or abandoned transfer is cut then), the
 * collection told how it went.
 */
export class UploadReception {
  /** The uploads under way now, to cut when the daemon stops. */
  private readonly claims = new Set<{ cut(why: string): void }>();

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

  /**
   * Takes the grant for one upload; undefined when it ended, its file is kept or another upload holds it. Taken before
   * any byte is read, so that concurrent requests on one token cannot all write.
   */
  claim(grant: UploadGrant): UploadClaim | undefined {
    if (grant.spent || grant.receiving || !this.grants.alive(grant)) return undefined;
    grant.receiving = true;
    const streams = new Set<Destroyable>();
    let cutWhy: string | undefined;
    const entry = {
      cut: (why: string) => {
        cutWhy = why;
        for (const stream of streams) stream.destroy(new UploadCutError(why));
      },
    };
    const timer = setTimeout(() => entry.cut(WINDOW_ENDED), Math.max(0, grant.expiresAt - this.options.now()));
    this.claims.add(entry);
    return {
      grant,
      track: (stream) => {
        streams.add(stream);
        if (cutWhy !== undefined) stream.destroy(new UploadCutError(cutWhy));
      },
      release: () => {
        if (!this.claims.delete(entry)) return;
        clearTimeout(timer);
        grant.receiving = false;
      },
    };
  }

  /** Streams `source` into the grant's folder; rejects (and keeps nothing) when it is too large, cut or broken off. */
  async receive(claim: UploadClaim, name: string, source: Readable, via: 'http' | 'ftp'): Promise<StoredLog> {
    const { grant } = claim;
    if (grant.spent || !grant.receiving) throw new UploadRefusedError('this upload location took its file already');
    const { files, events } = this.options;
    const log = this.options.logger.child({ logId: grant.logId, stationId: grant.stationId, via });
    claim.track(source);
    try {
      events.receiving(grant);
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
    }
  }

  /** Cuts every upload under way (the daemon stops: a stalled station must not hold the stop up). */
  cutAll(): void {
    for (const claim of this.claims) claim.cut('chargegate is stopping');
  }
}

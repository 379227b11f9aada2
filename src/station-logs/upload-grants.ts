import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Where one station may upload one log (contract 11.3): an HTTP token, or an FTP user and password. */
export interface UploadGrant {
  logId: string;
  stationId: string;
  /** ms since the epoch: past it the grant is gone, and an upload under way is cut. */
  expiresAt: number;
  http: { token: string };
  ftp: { user: string; password: string };
  /** An upload holds it now (an UploadClaim): no other is taken meanwhile. */
  receiving: boolean;
  /** Spent: a file is kept under it, over HTTP or FTP; nothing more is stored under it. */
  spent: boolean;
  /** An FTP session logged in with it: its user, password and token open nothing else. */
  opened: boolean;
}

/**
 * The upload locations given out and not yet spent or expired, in memory only: a daemon restart ends them with the
 * collections that waited for them. Tokens and passwords are 128 random bits; a user name is not a secret.
 */
export class UploadGrants {
  private readonly byLogId = new Map<string, UploadGrant>();
  private readonly byToken = new Map<string, UploadGrant>();
  private readonly byUser = new Map<string, UploadGrant>();

  constructor(private readonly now: () => number) {}

  issue(logId: string, stationId: string, expiresAt: number): UploadGrant {
    const grant: UploadGrant = {
      logId,
      stationId,
      expiresAt,
      http: { token: randomBytes(16).toString('hex') },
      ftp: { user: `log${randomBytes(6).toString('hex')}`, password: randomBytes(16).toString('hex') },
      receiving: false,
      spent: false,
      opened: false,
    };
    this.byLogId.set(logId, grant);
    this.byToken.set(grant.http.token, grant);
    this.byUser.set(grant.ftp.user, grant);
    return grant;
  }

  /** The grant of an HTTP token that may receive an upload now: not spent, not expired, no other upload under way. */
  usableToken(token: string): UploadGrant | undefined {
    const grant = this.byToken.get(token);
    return grant && this.usable(grant) && !grant.receiving ? grant : undefined;
  }

  /** The grant an FTP login opens, for that session only: undefined for a wrong, used or expired user or password. */
  login(user: string, password: string): UploadGrant | undefined {
    const grant = this.byUser.get(user);
    if (!grant || !this.usable(grant) || !sameSecret(grant.ftp.password, password)) return undefined;
    grant.opened = true;
    return grant;
  }

  of(logId: string): UploadGrant | undefined {
    return this.byLogId.get(logId);
  }

  /** Forgets the grant: its token and user stop working at once. */
  revoke(logId: string): void {
    const grant = this.byLogId.get(logId);
    if (!grant) return;
    this.byLogId.delete(logId);
    this.byToken.delete(grant.http.token);
    this.byUser.delete(grant.ftp.user);
  }

  /** Whether the grant exists and has not expired; a spent or opened one is still alive (its FTP session goes on). */
  alive(grant: UploadGrant): boolean {
    return this.byLogId.get(grant.logId) === grant && this.now() < grant.expiresAt;
  }

  private usable(grant: UploadGrant): boolean {
    return this.alive(grant) && !grant.spent && !grant.opened;
  }
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

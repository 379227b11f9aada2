import type { Config } from '../config/index.js';
import { generateSecret, hashSecret, verifySecret } from '../credentials/index.js';
import { statement, type Database } from '../store/index.js';
import { ChargegateError, type ErrorCode } from '../errors/index.js';

/** An application (an OAuth 2.0 client) as listings show it: never its secret. */
export interface Application {
  clientId: string;
  name: string;
  description: string | null;
  groupIds: string[];
  createdAt: string;
  revokedAt: string | null;
}

interface ApplicationRow {
  client_id: string;
  name: string;
  description: string | null;
  secret_hash: string;
  group_ids: string;
  created_at: string;
  revoked_at: string | null;
  previous_secret_hash: string | null;
  previous_secret_expires_at: string | null;
}

/** A request about applications the installer must correct (unknown group, no name). */
export class ApplicationError extends ChargegateError {
  override name = 'ApplicationError';
  readonly code: ErrorCode = 'CHARGEGATE_APPLICATION_REFUSED';
}

/** The client id names no application: not found (exit 1), unlike a malformed request. */
export class UnknownApplicationError extends ApplicationError {
  override name = 'UnknownApplicationError';
  override readonly code = 'CHARGEGATE_UNKNOWN_APPLICATION';
}

/** Compared against when the client id is unknown, so a wrong id costs as long as a wrong secret (matches nothing). */
const DECOY_HASH = 'scrypt$16384$8$1$c2hhcmVkLWRlY295LXNhbHQ$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/**
 * The registry of applications in the shared database. The CLI creates and revokes; the daemon authenticates
 * and re-reads an application on every API request, so a revocation takes effect at once.
 */
export class Applications {
  private readonly db: Database;
  private readonly now: () => Date;

  constructor(options: { db: Database; now?: () => Date }) {
    this.db = options.db;
    this.now = options.now ?? (() => new Date());
  }

  /** Registers an application in the given config groups; the secret is returned here and never again. */
  create(
    config: Config,
    input: { name: string; description?: string; groupIds: string[] },
  ): { clientId: string; clientSecret: string } {
    const known = new Set(config.groups.map((g) => g.id));
    const unknown = input.groupIds.filter((g) => !known.has(g));
    if (unknown.length > 0)
      throw new ApplicationError(
        `unknown group${unknown.length > 1 ? 's' : ''} ${unknown.map((g) => `"${g}"`).join(', ')}; config groups: ${[...known].join(', ') || '(none)'}`,
      );
    if (input.groupIds.length === 0) throw new ApplicationError('an application needs at least one group');
    if (!input.name.trim()) throw new ApplicationError('an application needs a name');
    const clientId = `app-${generateSecret(12)}`;
    const clientSecret = generateSecret(32);
    this.db
      .prepare(
        'INSERT INTO applications (client_id, name, description, secret_hash, group_ids, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        clientId,
        input.name.trim(),
        input.description ?? null,
        hashSecret(clientSecret),
        JSON.stringify([...new Set(input.groupIds)]),
        this.now().toISOString(),
      );
    return { clientId, clientSecret };
  }

  list(): Application[] {
    return this.db
      .prepare<[], ApplicationRow>('SELECT * FROM applications ORDER BY created_at, client_id')
      .all()
      .map(toApplication);
  }

  /** Marks the application revoked (once); its tokens fail on their next use. */
  revoke(clientId: string): { application: Application; alreadyRevoked: boolean } {
    const { changes } = this.db
      .prepare('UPDATE applications SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL')
      .run(this.now().toISOString(), clientId);
    const row = this.row(clientId);
    if (!row) throw new UnknownApplicationError(`no application "${clientId}"`);
    return { application: toApplication(row), alreadyRevoked: changes === 0 };
  }

  /**
   * A new secret for the application, returned here and never again. The old one keeps working for `graceS`
   * seconds (0: not at all), so the partner can switch without a gap; a second rotation ends an earlier grace.
   */
  rotateSecret(
    clientId: string,
    graceS: number,
  ): { clientId: string; clientSecret: string; previousValidUntil: string | null } {
    const row = this.row(clientId);
    if (!row) throw new UnknownApplicationError(`no application "${clientId}"`);
    if (row.revoked_at !== null) throw new ApplicationError(`application "${clientId}" is revoked`);
    const clientSecret = generateSecret(32);
    const previousValidUntil = graceS > 0 ? new Date(this.now().getTime() + graceS * 1000).toISOString() : null;
    statement(
      this.db,
      'UPDATE applications SET secret_hash = ?, previous_secret_hash = ?, previous_secret_expires_at = ? WHERE client_id = ?',
    ).run(hashSecret(clientSecret), previousValidUntil === null ? null : row.secret_hash, previousValidUntil, clientId);
    return { clientId, clientSecret, previousValidUntil };
  }

  /**
   * The active application whose secret (or previous secret, within its grace) matches, else undefined. Constant time
   * in the secret.
   */
  async authenticate(clientId: string, clientSecret: string): Promise<Application | undefined> {
    const row = this.row(clientId);
    const current = await verifySecret(clientSecret, row?.secret_hash ?? DECOY_HASH);
    const previousValid =
      row?.previous_secret_hash != null &&
      row.previous_secret_expires_at !== null &&
      new Date(row.previous_secret_expires_at) > this.now();
    const matches = current || (previousValid && (await verifySecret(clientSecret, row.previous_secret_hash!)));
    return row && matches && row.revoked_at === null ? toApplication(row) : undefined;
  }

  /** The application if it exists and is not revoked: checked on every API request. */
  active(clientId: string): Application | undefined {
    const row = this.row(clientId);
    return row && row.revoked_at === null ? toApplication(row) : undefined;
  }

  private row(clientId: string): ApplicationRow | undefined {
    return statement<[string], ApplicationRow>(this.db, 'SELECT * FROM applications WHERE client_id = ?').get(clientId);
  }
}

function toApplication(row: ApplicationRow): Application {
  return {
    clientId: row.client_id,
    name: row.name,
    description: row.description,
    groupIds: JSON.parse(row.group_ids) as string[],
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

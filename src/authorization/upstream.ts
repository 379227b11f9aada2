import { messageOf, type Logger } from '../log/index.js';
import { statement, type Database, type Writer } from '../store/index.js';
import type { AuthorizationStatus } from '../site/index.js';

/** The CPO's answer to a forwarded Authorize, as OCPP 1.6 idTagInfo. */
export interface UpstreamDecision {
  status: AuthorizationStatus;
  expiryDate?: string;
  parentIdTag?: string;
}

/**
 * Sends one Authorize to the CPO on behalf of a station (idTokenType: a 2.0.1 token's type); resolves undefined when it
 * cannot (timeout, offline).
 */
export type UpstreamAuthorize = (
  stationId: string,
  idTag: string,
  idTokenType?: string,
) => Promise<UpstreamDecision | undefined>;

export interface UpstreamLink {
  authorize: UpstreamAuthorize;
  close(): Promise<void>;
}

/** Connection to the CPO that the forwarder uses; the OCPP adapter builds it (one identity per station). */
export interface UpstreamClient {
  /** idTokenType: the type of a 2.0.1 station's token, which a 2.0.1 Authorize names. */
  authorize(idTag: string, idTokenType?: string): Promise<UpstreamDecision>;
  /** True once the connection is gone for good (the next request opens a new one). */
  isClosed(): boolean;
  close(): Promise<void>;
}

/** Opens a connection to the CPO at url as this station; rejects when the CPO is unreachable. */
export type UpstreamConnect = (url: string, stationId: string) => Promise<UpstreamClient>;

export interface UpstreamOptions {
  url: string;
  timeoutMs: number;
  logger: Logger;
  connect: UpstreamConnect;
}

/** A station's connection to the CPO; `opened` once connected, so one closed since its last use is seen before use. */
interface Connection {
  client: Promise<UpstreamClient>;
  opened?: UpstreamClient;
}

/**
 * Forwards Authorize to the CPO over one connection per station identity, opened on first use and kept.
 * Anything short of an answer within timeoutMs (refused connection, timeout, CALLERROR) is "no answer".
 */
export function createUpstreamLink(options: UpstreamOptions): UpstreamLink {
  const connections = new Map<string, Connection>();
  const connectionOf = (stationId: string): Promise<UpstreamClient> => {
    const kept = connections.get(stationId);
    // The uplink closes a station's link once the station left (docs/design/uplink.md#uplink-what-the-csms-sees): ask a new one.
    if (kept && !kept.opened?.isClosed()) return kept.client;
    const connection: Connection = { client: options.connect(options.url, stationId) };
    connections.set(stationId, connection);
    connection.client.then(
      (client) => (connection.opened = client),
      () => connections.get(stationId) === connection && connections.delete(stationId),
    );
    return connection.client;
  };
  return {
    async authorize(stationId, idTag, idTokenType) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>(
        (resolve) => (timer = setTimeout(() => resolve('timeout'), options.timeoutMs)),
      );
      const attempt = connectionOf(stationId).then((client) => client.authorize(idTag, idTokenType));
      try {
        const result = await Promise.race([attempt, timeout]);
        if (result === 'timeout') {
          options.logger.warn(
            { stationId, timeoutMs: options.timeoutMs },
            'upstream CPO did not answer Authorize in time',
          );
          return undefined;
        }
        return result;
      } catch (err) {
        options.logger.warn({ stationId, err: messageOf(err) }, 'upstream CPO unreachable for Authorize');
        return undefined;
      } finally {
        clearTimeout(timer);
        attempt.catch(() => undefined);
      }
    },
    async close() {
      const all = [...connections.values()];
      connections.clear();
      await Promise.all(all.map((c) => c.client.then((client) => client.close()).catch(() => undefined)));
    },
  };
}

/** The last answer the CPO gave for a tag: the fallback when it cannot be asked. */
export function rememberUpstreamDecision(writer: Writer, idTag: string, decision: UpstreamDecision, now: Date): void {
  writer.write(() =>
    statement(
      writer.db,
      `INSERT INTO upstream_decisions (id_tag, status, expires_at, decided_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (id_tag) DO UPDATE SET status = excluded.status, expires_at = excluded.expires_at, decided_at = excluded.decided_at`,
    ).run(idTag, decision.status, decision.expiryDate ?? null, now.toISOString()),
  );
}

export function lastUpstreamDecision(db: Database, idTag: string): UpstreamDecision | undefined {
  const row = statement(db, 'SELECT status, expires_at FROM upstream_decisions WHERE id_tag = ?').get(idTag) as
    { status: AuthorizationStatus; expires_at: string | null } | undefined;
  return row && { status: row.status, ...(row.expires_at !== null && { expiryDate: row.expires_at }) };
}

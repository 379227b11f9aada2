import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { migrate, MIGRATIONS } from '../../src/store/index.js';

const ordered = [...MIGRATIONS].sort((a, b) => a.version - b.version);
/** The schema this release migrates to. */
export const LATEST_SCHEMA = ordered.at(-1)!.version;
/** The schema of the release before the last migration, as an upgrade finds it. */
export const PREVIOUS_SCHEMA = ordered.at(-2)!.version;

/** A database with `schema`'s migrations applied, in WAL as the daemon keeps it; the caller closes it. */
export function databaseOfSchema(file: string, schema: number): BetterSqlite3.Database {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  migrate(
    db,
    ordered.filter((m) => m.version <= schema),
  );
  return db;
}

function read<T>(file: string, fn: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export const schemaOf = (file: string): number =>
  read(file, (db) => db.prepare<[], number>('SELECT max(version) FROM schema_migrations').pluck().get()!);

export const transactionsOf = (file: string): unknown[] =>
  read(file, (db) => db.prepare('SELECT id, stopped_at IS NOT NULL AS stopped FROM transactions ORDER BY id').all());

/** What an upgrade and its rollback must keep: every transaction, every event and every pending delivery. */
export const contentsOf = (file: string): Record<string, unknown[]> =>
  read(file, (db) => ({
    transactions: db
      .prepare(
        'SELECT id, station_id, connector_id, id_tag, meter_start_wh, meter_stop_wh, stopped_at FROM transactions ORDER BY id',
      )
      .all(),
    events: db.prepare('SELECT seq, event_id, event_type, payload FROM events ORDER BY seq').all(),
    pending: db
      .prepare("SELECT id, event_seq, webhook_id, attempts FROM deliveries WHERE state = 'pending' ORDER BY id")
      .all(),
  }));

/**
 * A database the previous release left at work: two transactions open, one stopped, and their events waiting in
 * the outbox of webhook `partner`.
 */
export function previousReleaseDatabase(file: string): void {
  const db = databaseOfSchema(file, PREVIOUS_SCHEMA);
  try {
    const at = '2026-11-26T09:00:00.000Z';
    const transaction = db.prepare(
      "INSERT INTO transactions (site_id, station_id, charge_point_id, connector_id, id_tag, meter_start_wh, started_at, source) VALUES ('s1', 'CP001', 'CP001-A', ?, ?, 1000, ?, 'ocpp')",
    );
    const event = db.prepare(
      "INSERT INTO events (event_id, event_type, site_id, payload, created_at) VALUES (?, ?, 's1', ?, ?)",
    );
    const delivery = db.prepare(
      "INSERT INTO deliveries (event_seq, webhook_id, site_id, event_type, updated_at) VALUES (?, 'partner', 's1', ?, ?)",
    );
    db.transaction(() => {
      for (const [connectorId, idTag] of [
        [1, 'TAG-1'],
        [2, 'TAG-2'],
        [3, 'TAG-3'],
      ] as const) {
        const { lastInsertRowid: id } = transaction.run(connectorId, idTag, at);
        const { lastInsertRowid: seq } = event.run(`start-${id}`, 'StartTransaction', JSON.stringify({ idTag }), at);
        delivery.run(seq, 'StartTransaction', at);
      }
      db.prepare(
        "UPDATE transactions SET meter_stop_wh = 2000, stopped_at = ?, stop_reason = 'Local' WHERE id = 3",
      ).run(at);
      const { lastInsertRowid: seq } = event.run('stop-3', 'StopTransaction', '{"transactionId":3}', at);
      delivery.run(seq, 'StopTransaction', at);
    })();
  } finally {
    db.close();
  }
}

/** The previous release's name for an RSA key: `<prefix>` and the start of its RFC 7638 thumbprint. */
function previousKeyId(prefix: string, key: KeyObject): string {
  const { e, n } = createPublicKey(key).export({ format: 'jwk' });
  return `${prefix}${createHash('sha256')
    .update(JSON.stringify({ e, kty: 'RSA', n }))
    .digest('base64url')
    .slice(0, 16)}`;
}

/**
 * `<dataDir>/keystore.json` as the previous release wrote it: its format, its two purposes (webhook PS256 on RSA 3072,
 * token RS256 on RSA 2048) and no Ed25519 key, encrypted when a passphrase is given. Returns the file's text.
 */
export function previousReleaseKeystore(dataDir: string, passphrase?: string): string {
  mkdirSync(dataDir, { recursive: true });
  const createdAt = '2026-11-01T08:00:00.000Z';
  const keys = (
    [
      ['webhook', 'PS256', 3072, 'webhook-'],
      ['token', 'RS256', 2048, 'token-'],
    ] as const
  ).map(([purpose, alg, modulusLength, prefix]) => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength });
    return {
      id: previousKeyId(prefix, privateKey),
      purpose,
      alg,
      createdAt,
      activatesAt: createdAt,
      retiresAt: null,
      expiresAt: null,
      privateKey: privateKey.export(
        passphrase
          ? { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase }
          : { type: 'pkcs8', format: 'pem' },
      ) as string,
    };
  });
  const text = `${JSON.stringify({ format: 'chargegate-keystore/1', keys }, null, 2)}\n`;
  writeFileSync(path.join(dataDir, 'keystore.json'), text, { mode: 0o600 });
  return text;
}

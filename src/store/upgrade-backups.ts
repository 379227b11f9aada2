import { chmodSync, copyFileSync, existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { DATABASE_FILE } from './database.js';
import { KEYSTORE_FILE } from './migrations.js';

/** A copy migrate() made of the database before an upgrade changed its schema. */
export interface UpgradeBackup {
  file: string;
  schemaVersion: number;
}

/** What restoring the newest copy means: the copy, the schema it undoes, and what happened since that goes with it. */
export interface RollbackPlan {
  backup: UpgradeBackup;
  /** The keystore as the upgrade found it, copied beside the database's copy; absent when there was none. */
  keystoreBackup?: string;
  currentSchemaVersion: number;
  lost: { events: number; transactionsStarted: number; transactionsStopped: number };
}

const BACKUP_NAME = new RegExp(`^${DATABASE_FILE.replace('.', '\\.')}\\.schema-(\\d+)\\.backup$`);

/** The copies in dataDir, newest schema first. */
export function upgradeBackups(dataDir: string): UpgradeBackup[] {
  return readdirSync(dataDir)
    .flatMap((name) => {
      const match = BACKUP_NAME.exec(name);
      return match ? [{ file: path.resolve(dataDir, name), schemaVersion: Number(match[1]) }] : [];
    })
    .sort((a, b) => b.schemaVersion - a.schemaVersion);
}

/**
 * What `chargegate rollback` would restore, read without changing anything: the newest copy older than the
 * database's schema, and how many events and transactions the database has that the copy has not (counted by the
 * ids, which are never reused). Undefined when there is no such copy.
 */
export function rollbackPlan(dataDir: string): RollbackPlan | undefined {
  const db = new BetterSqlite3(path.join(dataDir, DATABASE_FILE), { readonly: true, fileMustExist: true });
  try {
    const currentSchemaVersion = db.prepare<[], number>('SELECT max(version) FROM schema_migrations').pluck().get()!;
    const backup = upgradeBackups(dataDir).find((b) => b.schemaVersion < currentSchemaVersion);
    if (!backup) return undefined;
    db.prepare('ATTACH DATABASE ? AS before').run(backup.file);
    const count = (sql: string) => db.prepare<[], number>(sql).pluck().get()!;
    const keystoreBackup = path.resolve(dataDir, `${KEYSTORE_FILE}.schema-${backup.schemaVersion}.backup`);
    return {
      backup,
      ...(existsSync(keystoreBackup) && { keystoreBackup }),
      currentSchemaVersion,
      lost: {
        events: count('SELECT count(*) FROM main.events WHERE seq > (SELECT coalesce(max(seq), 0) FROM before.events)'),
        transactionsStarted: count(
          'SELECT count(*) FROM main.transactions WHERE id > (SELECT coalesce(max(id), 0) FROM before.transactions)',
        ),
        transactionsStopped: count(
          `SELECT count(*) FROM main.transactions t JOIN before.transactions b ON b.id = t.id
            WHERE t.stopped_at IS NOT NULL AND b.stopped_at IS NULL`,
        ),
      },
    };
  } finally {
    db.close();
  }
}

/**
 * Puts the plan's copy in place of the database, which is kept whole (its WAL included) as
 * `chargegate.db.rolled-back-<time>`. The caller holds the data dir (no daemon writes meanwhile). The WAL and shared
 * memory files go before the copy moves in: SQLite would apply a stale WAL to the copy.
 */
export function restoreUpgradeBackup(
  dataDir: string,
  plan: RollbackPlan,
  now = new Date(),
): { keptAs: string; keystoreKeptAs?: string } {
  const file = path.join(dataDir, DATABASE_FILE);
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const keptAs = path.resolve(dataDir, `${DATABASE_FILE}.rolled-back-${stamp}`);
  const current = new BetterSqlite3(file, { fileMustExist: true });
  try {
    current.prepare('VACUUM INTO ?').run(keptAs);
  } finally {
    current.close();
  }
  const incoming = `${file}.restoring`;
  const copy = new BetterSqlite3(plan.backup.file, { readonly: true, fileMustExist: true });
  try {
    copy.prepare('VACUUM INTO ?').run(incoming);
  } finally {
    copy.close();
  }
  rmSync(`${file}-wal`, { force: true });
  rmSync(`${file}-shm`, { force: true });
  renameSync(incoming, file);
  return { keptAs, ...(plan.keystoreBackup && restoreKeystore(dataDir, plan.keystoreBackup, stamp)) };
}

/**
 * The keystore copied beside the database's copy, back in place; the one it replaces kept as
 * `keystore.json.rolled-back-<time>`.
 */
function restoreKeystore(dataDir: string, copy: string, stamp: string): { keystoreKeptAs: string } {
  const keystore = path.join(dataDir, KEYSTORE_FILE);
  const keystoreKeptAs = path.resolve(dataDir, `${KEYSTORE_FILE}.rolled-back-${stamp}`);
  if (existsSync(keystore)) renameSync(keystore, keystoreKeptAs);
  copyFileSync(copy, `${keystore}.restoring`);
  chmodSync(`${keystore}.restoring`, 0o600);
  renameSync(`${keystore}.restoring`, keystore);
  return { keystoreKeptAs };
}

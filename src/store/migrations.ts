import { chmodSync, copyFileSync, existsSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { ChargegateError } from '../errors/index.js';
import { MIGRATIONS, type Migration } from './migration-list.js';

/** The database was migrated by a newer chargegate than this one: its schema may mean things this code cannot know. */
export class NewerDatabaseError extends ChargegateError {
  readonly code = 'CHARGEGATE_DATABASE_NEWER';
  constructor(file: string, found: number, known: number) {
    super(
      `database ${file} was migrated by a newer chargegate (schema version ${found}; this one knows up to ${known}): ` +
        'install that version again, or restore the copy of the data dir made before the upgrade',
    );
    this.name = 'NewerDatabaseError';
  }
}

/**
 * A migration that failed (the database is as it was, its transaction rolled back), or the copy before it that could
 * not be made (nothing was migrated): the message names the database, both schema versions and the copy.
 */
export class MigrationFailedError extends ChargegateError {
  override name = 'MigrationFailedError';
  readonly code = 'CHARGEGATE_MIGRATION_FAILED';
}

/**
 * Applies the migrations the database lacks, in one transaction, and returns them (oldest first). A database an
 * earlier release left is first copied beside itself as `<file>.schema-<version>.backup`, so an upgrade whose new
 * schema turns out wrong can be undone with the data as it was (docs/install/service.md#install-as-a-service, upgrading).
 */
export function migrate(db: BetterSqlite3.Database, migrations: Migration[] = MIGRATIONS): Migration[] {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  const known = Math.max(0, ...migrations.map((m) => m.version));
  const appliedVersions = () => new Set(db.prepare<[], number>('SELECT version FROM schema_migrations').pluck().all());
  const missingFrom = (applied: Set<number>) =>
    [...migrations].sort((a, b) => a.version - b.version).filter((m) => !applied.has(m.version));
  const before = appliedVersions();
  const found = Math.max(0, ...before);
  if (found > known) throw new NewerDatabaseError(db.name, found, known);
  if (missingFrom(before).length === 0) return [];
  // A new database has nothing to keep; VACUUM INTO cannot run inside the migrations' transaction, so it comes first.
  const backup = found > 0 && !db.memory ? backUp(db, found, known) : undefined;
  const apply = db.transaction(() => {
    // Another process (the daemon, a CLI command) may have migrated since the look above.
    const missing = missingFrom(appliedVersions());
    for (const m of missing) {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    }
    return missing;
  });
  try {
    return apply.immediate();
  } catch (err) {
    if (!backup) throw err;
    throw new MigrationFailedError(
      `database ${db.name} could not be migrated from schema ${found} to ${known} (${(err as Error).message}): it is ` +
        `unchanged; the copy made before the attempt is ${backup}. Install the previous chargegate again, or report this`,
      { cause: err },
    );
  }
}

/**
 * The keystore beside the database (src/keystore owns its format). Named here because an upgrade copies it with the
 * database and a rollback restores both: a newer release may add keys an older one cannot read.
 */
export const KEYSTORE_FILE = 'keystore.json';

/**
 * A consistent copy of the database as it is now (VACUUM INTO: one statement, readers and writers of other processes
 * carry on), written under a temporary name and renamed, so a copy is whole or absent. Returns its path.
 */
function backUp(db: BetterSqlite3.Database, version: number, known: number): string {
  const backup = `${path.resolve(db.name)}.schema-${version}.backup`;
  const partial = `${backup}.partial`;
  const keystore = path.join(path.dirname(path.resolve(db.name)), KEYSTORE_FILE);
  const keystoreCopy = `${keystore}.schema-${version}.backup`;
  try {
    rmSync(partial, { force: true });
    db.prepare('VACUUM INTO ?').run(partial);
    // The keystore too: the new release may add keys the one a rollback goes back to cannot read. It is replaced
    // whole by rename when written, so a plain copy is a consistent one.
    if (existsSync(keystore)) {
      copyFileSync(keystore, `${keystoreCopy}.partial`);
      chmodSync(`${keystoreCopy}.partial`, 0o600);
      renameSync(`${keystoreCopy}.partial`, keystoreCopy);
    }
    renameSync(partial, backup);
  } catch (err) {
    rmSync(partial, { force: true });
    rmSync(`${keystoreCopy}.partial`, { force: true });
    throw new MigrationFailedError(
      `database ${db.name} was not migrated from schema ${version} to ${known}: the copy kept before an upgrade could ` +
        `not be written (${(err as Error).message}); free space in ${path.dirname(db.name)} and start again`,
      { cause: err },
    );
  }
  return backup;
}

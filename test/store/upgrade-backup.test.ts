import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliFailure } from '../../src/cli/failure.js';
import { DATABASE_FILE, migrate, MIGRATIONS, openDatabase } from '../../src/store/index.js';
import { canMount, tempDirForTest, tmpfsForTest } from '../support/for-test.js';

const ordered = [...MIGRATIONS].sort((a, b) => a.version - b.version);
const latest = ordered.at(-1)!.version;
/** The schema of the release before the last migration, as an upgrade finds it. */
const previous = ordered.at(-2)!.version;

/** A database left by the previous release, with a station and a transaction in it. */
function previousReleaseDatabase(dataDir: string): string {
  const file = path.join(dataDir, DATABASE_FILE);
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  migrate(
    db,
    ordered.filter((m) => m.version <= previous),
  );
  db.prepare(
    "INSERT INTO transactions (site_id, station_id, charge_point_id, connector_id, id_tag, meter_start_wh, started_at, source) VALUES ('s1', 'CP001', 'CP001-A', 1, 'TAG', 1000, '2026-11-26T10:00:00.000Z', 'ocpp')",
  ).run();
  db.close();
  return file;
}

const schemaOf = (file: string): number => {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare<[], number>('SELECT max(version) FROM schema_migrations').pluck().get()!;
  } finally {
    db.close();
  }
};

/** What opening the data dir's database throws (undefined when it opens). */
function openFailure(dataDir: string): unknown {
  try {
    openDatabase(dataDir).close();
    return undefined;
  } catch (err) {
    return err;
  }
}

describe('a database an upgrade migrates', () => {
  it('is copied beside itself, named after its schema version, before the first migration runs', () => {
    const dataDir = tempDirForTest('upgrade');
    previousReleaseDatabase(dataDir);
    const db = openDatabase(dataDir);
    db.close();
    const backup = path.join(dataDir, `${DATABASE_FILE}.schema-${previous}.backup`);
    expect(schemaOf(path.join(dataDir, DATABASE_FILE))).toBe(latest);
    expect(schemaOf(backup)).toBe(previous);
    const copy = new BetterSqlite3(backup, { readonly: true });
    expect(copy.prepare('SELECT station_id, meter_start_wh FROM transactions').all()).toEqual([
      { station_id: 'CP001', meter_start_wh: 1000 },
    ]);
    copy.close();
  });

  it('is not copied when there is nothing to migrate or nothing yet (a new data dir)', () => {
    const dataDir = tempDirForTest('upgrade');
    openDatabase(dataDir).close();
    openDatabase(dataDir).close();
    expect(readdirSync(dataDir).filter((f) => f.endsWith('.backup'))).toEqual([]);
  });

  it('that fails to migrate is left as it was, and the one line names the copy', () => {
    const dataDir = tempDirForTest('upgrade');
    const file = previousReleaseDatabase(dataDir);
    // The last migration creates this table: one already there makes it fail for real, as a damaged upgrade would.
    const db = new BetterSqlite3(file);
    db.exec('CREATE TABLE transaction_starts_without_driver (left_by TEXT)');
    db.close();
    const backup = path.join(dataDir, `${DATABASE_FILE}.schema-${previous}.backup`);
    const failure = openFailure(dataDir);
    expect(failure).toMatchObject({ code: 'CHARGEGATE_MIGRATION_FAILED' });
    expect(cliFailure(failure)).toEqual({
      exitCode: 1,
      message: expect.stringMatching(
        new RegExp(
          `^database .*chargegate\\.db could not be migrated from schema ${previous} to ${latest} \\(.*already exists\\): it is unchanged; the copy made before the attempt is .*${DATABASE_FILE}\\.schema-${previous}\\.backup`,
        ),
      ),
    });
    expect(schemaOf(file)).toBe(previous);
    expect(existsSync(backup)).toBe(true);
  });

  it.runIf(canMount())(
    'is not migrated when the disk has no room for the copy: one line says so, and the database is as it was',
    () => {
      const disk = tmpfsForTest('2m');
      const file = previousReleaseDatabase(disk);
      // Fill the disk but for less than a copy of the database needs.
      const room = Number(execFileSync('df', ['--output=avail', '-B1', disk]).toString().split('\n')[1]);
      writeFileSync(path.join(disk, 'filler'), Buffer.alloc(Math.max(0, room - statSync(file).size / 4)));
      const failure = openFailure(disk);
      expect(cliFailure(failure)).toEqual({
        exitCode: 1,
        message: expect.stringMatching(
          new RegExp(
            `^database .*chargegate\\.db was not migrated from schema ${previous} to ${latest}: the copy .* free space in`,
          ),
        ),
      });
      expect(schemaOf(file)).toBe(previous);
      expect(readdirSync(disk).filter((f) => f.includes('.backup'))).toEqual([]);
    },
  );
});

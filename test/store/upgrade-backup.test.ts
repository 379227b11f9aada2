import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliFailure } from '../../src/cli/failure.js';
import { DATABASE_FILE, MIGRATIONS, openDatabase } from '../../src/store/index.js';
import { canMount, tempDirForTest, tmpfsForTest } from '../support/for-test.js';
import {
  contentsOf,
  LATEST_SCHEMA,
  PREVIOUS_SCHEMA,
  previousReleaseDatabase,
  schemaOf,
} from '../support/previous-release.js';

const [previous, latest] = [PREVIOUS_SCHEMA, LATEST_SCHEMA];

/** A database left by the previous release at work, in `dataDir`. */
function previousReleaseIn(dataDir: string): string {
  const file = path.join(dataDir, DATABASE_FILE);
  previousReleaseDatabase(file);
  return file;
}

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
    const file = previousReleaseIn(dataDir);
    const before = contentsOf(file);
    const db = openDatabase(dataDir);
    db.close();
    const backup = path.join(dataDir, `${DATABASE_FILE}.schema-${previous}.backup`);
    expect(schemaOf(file)).toBe(latest);
    expect(schemaOf(backup)).toBe(previous);
    expect(contentsOf(backup)).toEqual(before);
  });

  it('is not copied when there is nothing to migrate or nothing yet (a new data dir)', () => {
    const dataDir = tempDirForTest('upgrade');
    openDatabase(dataDir).close();
    openDatabase(dataDir).close();
    expect(readdirSync(dataDir).filter((f) => f.endsWith('.backup'))).toEqual([]);
  });

  it('that fails to migrate is left as it was, and the one line names the copy', () => {
    const dataDir = tempDirForTest('upgrade');
    const file = previousReleaseIn(dataDir);
    // What the last migration makes, already there (unrecorded): it fails for real, as a damaged upgrade would.
    const db = new BetterSqlite3(file);
    db.exec(MIGRATIONS.find((m) => m.version === latest)!.sql);
    db.close();
    const backup = path.join(dataDir, `${DATABASE_FILE}.schema-${previous}.backup`);
    const failure = openFailure(dataDir);
    expect(failure).toMatchObject({ code: 'CHARGEGATE_MIGRATION_FAILED' });
    expect(cliFailure(failure)).toEqual({
      exitCode: 1,
      message: expect.stringMatching(
        new RegExp(
          `^database .*chargegate\\.db could not be migrated from schema ${previous} to ${latest} \\(.+\\): it is unchanged; the copy made before the attempt is .*${DATABASE_FILE}\\.schema-${previous}\\.backup`,
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
      const file = previousReleaseIn(disk);
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

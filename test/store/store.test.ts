import { beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { migrate, MIGRATIONS, openDatabase, inTransaction, type Database } from '../../src/store/index.js';
import { tempSiteForTest } from '../support/for-test.js';
import type { TempSite } from '../support/temp-site.js';

describe('store', () => {
  let temp: TempSite;
  const db = (options?: Parameters<typeof openDatabase>[1]): Database => {
    const d = openDatabase(temp.dataDir, options);
    onTestFinished(() => {
      if (d.open) d.close();
    });
    return d;
  };
  beforeEach(() => {
    temp = tempSiteForTest();
  });

  it('applies every migration once: reopening and migrating again change nothing', () => {
    const first = db();
    const versions = () =>
      (first.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>).map(
        (r) => r.version,
      );
    const applied = versions();
    expect(applied).toEqual([...MIGRATIONS].map((m) => m.version).sort((a, b) => a - b));
    const tables = () => first.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    const before = tables();
    db();
    migrate(first);
    expect(versions()).toEqual(applied);
    expect(tables()).toEqual(before);
  });

  it('refuses a database a newer chargegate migrated (a rollback after an upgrade), naming both schema versions', () => {
    const newer = db();
    newer
      .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, ?, ?)')
      .run('from the future', new Date().toISOString());
    newer.close();
    const known = Math.max(...MIGRATIONS.map((m) => m.version));
    expect(() => db()).toThrow(
      new RegExp(
        `chargegate\\.db was migrated by a newer chargegate \\(schema version 99; this one knows up to ${known}\\): install that version again`,
      ),
    );
  });

  it('reports the migrations it applied; none on the next open', () => {
    const reports: string[][] = [];
    const migrated = (applied: Array<{ version: number }>) => reports.push(applied.map((m) => String(m.version)));
    db({ migrated });
    db({ migrated });
    expect(reports).toEqual([[...MIGRATIONS].sort((a, b) => a.version - b.version).map((m) => String(m.version))]);
  });

  it('a failing migration leaves neither its tables nor its version behind', () => {
    const d = db();
    const broken = {
      version: 9_999,
      name: 'broken',
      sql: 'CREATE TABLE half_done (a INTEGER); INSERT INTO no_such_table VALUES (1);',
    };
    expect(() => migrate(d, [...MIGRATIONS, broken])).toThrow(/no_such_table/);
    expect(d.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'half_done'").get()).toEqual({ n: 0 });
    expect(d.prepare('SELECT COUNT(*) AS n FROM schema_migrations WHERE version = 9999').get()).toEqual({ n: 0 });
  });

  it('opens in WAL with synchronous=FULL and a busy timeout, so the daemon and CLI commands share the file', () => {
    const daemonSide = db();
    const cliSide = db();
    expect(daemonSide.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(daemonSide.pragma('synchronous', { simple: true })).toBe(2);
    expect(Number(daemonSide.pragma('busy_timeout', { simple: true }))).toBeGreaterThanOrEqual(5000);
    // A reader keeps its snapshot while the other connection commits; both see the commit afterwards.
    const read = cliSide.prepare('SELECT COUNT(*) AS n FROM id_tags');
    inTransaction(daemonSide, () =>
      daemonSide.prepare("INSERT INTO id_tags (id_tag, status, updated_at) VALUES ('A', 'Accepted', 'now')").run(),
    );
    expect(read.get()).toEqual({ n: 1 });
  });
});

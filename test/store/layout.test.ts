import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { startDaemon } from '../../src/cli/daemon.js';
import { DATABASE_FILE, migrate } from '../../src/store/index.js';
import { canMount, tempDirForTest, tempSiteForTest, tmpfsForTest } from '../support/for-test.js';
import type { TempSite } from '../support/temp-site.js';

/** Starts and stops a daemon on the site; the messages it logged. */
async function startAndStop(site: TempSite): Promise<string[]> {
  const lines: Array<{ msg: string }> = [];
  const logger = createLogger('info', {
    write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }),
  });
  const daemon = await startDaemon({
    configPath: site.configPath,
    config: loadConfig(site.configPath),
    logger,
    handleSignals: false,
  });
  await daemon.stop();
  return lines.map((l) => l.msg);
}

const CONVERTED = 'database converted to the current layout (once): smaller pages, pruned rows give their space back';

describe('storage layout conversion at start', () => {
  it('a database another process holds open is left in its layout for now (a warning, the daemon serves); the next start converts it', async () => {
    const temp = tempSiteForTest();
    mkdirSync(temp.dataDir, { recursive: true });
    const file = path.join(temp.dataDir, DATABASE_FILE);
    const legacy = new BetterSqlite3(file);
    legacy.pragma('journal_mode = WAL');
    migrate(legacy);
    legacy.close();

    const start = () => startAndStop(temp);
    // A backup or a CLI command reading the database while the daemon starts.
    const reader = new BetterSqlite3(file, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM events').get();
    try {
      const first = await start();
      expect(first).toContain(
        'database layout not converted: another process has the database open; the next start tries again',
      );
      expect(first).toContain('chargegate ready');
    } finally {
      reader.exec('COMMIT');
      reader.close();
    }
    const second = await start();
    expect(second).toContain(CONVERTED);
    const after = new BetterSqlite3(file, { readonly: true });
    expect(after.pragma('page_size', { simple: true })).toBe(1024);
    after.close();
  });
});

describe.runIf(canMount())('storage layout conversion on a nearly full disk', () => {
  it('without room for the rewrite the database keeps its layout (a warning, the daemon serves, nothing lost); with room the next start converts it', async () => {
    const mountpoint = tmpfsForTest('4m');
    const dataDir = path.join(mountpoint, 'var');
    const temp = tempSiteForTest({ dataDir });
    // An earlier version's database (4 KiB pages, no incremental vacuum) of ~2.5 MB, made elsewhere and copied in:
    // the rewrite's journal would need as much again, more than the tmpfs has left.
    const legacyFile = path.join(tempDirForTest('legacy'), DATABASE_FILE);
    const legacy = new BetterSqlite3(legacyFile);
    migrate(legacy);
    const insert = legacy.prepare(
      "INSERT INTO events (event_id, event_type, site_id, payload, created_at) VALUES (?, 'Authorize', 's1', ?, ?)",
    );
    legacy.transaction(() => {
      for (let i = 0; i < 2500; i++)
        insert.run(`event-${i}`, JSON.stringify({ note: 'x'.repeat(900) }), new Date().toISOString());
    })();
    legacy.close();
    mkdirSync(dataDir);
    copyFileSync(legacyFile, path.join(dataDir, DATABASE_FILE));
    const stored = () => {
      const db = new BetterSqlite3(path.join(dataDir, DATABASE_FILE), { readonly: true });
      try {
        return {
          pageSize: db.pragma('page_size', { simple: true }),
          events: db.prepare('SELECT COUNT(*) FROM events').pluck().get(),
          integrity: db.pragma('integrity_check', { simple: true }),
        };
      } finally {
        db.close();
      }
    };

    const first = await startAndStop(temp);
    expect(first).toContain(
      'database layout not converted: no room on the disk for the one-time rewrite (it needs about the database size free); the next start tries again',
    );
    expect(first).toContain('chargegate ready');
    expect(stored()).toEqual({ pageSize: 4096, events: 2500, integrity: 'ok' });

    execFileSync('mount', ['-o', 'remount,size=32m', mountpoint]);
    expect(await startAndStop(temp)).toContain(CONVERTED);
    expect(stored()).toEqual({ pageSize: 1024, events: 2500, integrity: 'ok' });
  });
});

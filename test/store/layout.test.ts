import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { startDaemon } from '../../src/cli/daemon.js';
import { DATABASE_FILE, migrate } from '../../src/store/index.js';
import { tempSiteForTest } from '../support/for-test.js';

describe('storage layout conversion at start', () => {
  it('a database another process holds open is left in its layout for now (a warning, the daemon serves); the next start converts it', async () => {
    const temp = tempSiteForTest();
    mkdirSync(temp.dataDir, { recursive: true });
    const file = path.join(temp.dataDir, DATABASE_FILE);
    const legacy = new BetterSqlite3(file);
    legacy.pragma('journal_mode = WAL');
    migrate(legacy);
    legacy.close();

    const start = async () => {
      const lines: Array<{ msg: string }> = [];
      const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
      const daemon = await startDaemon({ configPath: temp.configPath, config: loadConfig(temp.configPath), logger, handleSignals: false });
      await daemon.stop();
      return lines.map((l) => l.msg);
    };
    // A backup or a CLI command reading the database while the daemon starts.
    const reader = new BetterSqlite3(file, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM events').get();
    try {
      const first = await start();
      expect(first).toContain('database layout not converted: another process has the database open; the next start tries again');
      expect(first).toContain('chargegate ready');
    } finally {
      reader.exec('COMMIT');
      reader.close();
    }
    const second = await start();
    expect(second).toContain('database converted to the current layout (once): smaller pages, pruned rows give their space back');
    const after = new BetterSqlite3(file, { readonly: true });
    expect(after.pragma('page_size', { simple: true })).toBe(1024);
    after.close();
  });
});

import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import { pruneStoppedTransactions } from '../../src/site/index.js';
import {
  DATABASE_FILE,
  DirectWriter,
  migrate,
  openDatabase,
  schedulePruning,
  convertStorageLayout,
} from '../../src/store/index.js';
import { databasePerTest } from '../support/temp-database.js';
import { tempSite } from '../support/temp-site.js';

describe('every table bounded (contract 7, endurance on flash)', () => {
  const t = databasePerTest();
  const insert = (startedAt: string, stoppedAt: string | null, idTag = 'TAG') =>
    t.db
      .prepare(
        "INSERT INTO transactions (site_id, station_id, charge_point_id, connector_id, id_tag, meter_start_wh, started_at, source, stopped_at, meter_stop_wh) VALUES ('s1', 'CP001', 'CP001-A', 1, ?, 0, ?, 'ocpp', ?, ?)",
      )
      .run(idTag, startedAt, stoppedAt, stoppedAt === null ? null : 1000).lastInsertRowid as number;
  const ids = () => t.db.prepare('SELECT id FROM transactions ORDER BY id').pluck().all();

  it('prunes transactions stopped before the cutoff and keeps open ones, however old, and recent ones', () => {
    const old = insert('2024-01-01T10:00:00.000Z', '2024-01-01T11:00:00.000Z');
    const openForever = insert('2024-01-01T10:00:00.000Z', null);
    const recent = insert('2026-11-01T10:00:00.000Z', '2026-11-01T11:00:00.000Z');
    const oldToo = insert('2024-02-01T10:00:00.000Z', '2024-02-01T11:00:00.000Z');

    expect(pruneStoppedTransactions(new DirectWriter(t.db), new Date('2025-10-22T00:00:00.000Z'), 1)).toBe(2);
    expect(ids()).toEqual([openForever, recent]);
    expect([old, oldToo]).not.toContain(insert('2026-11-02T10:00:00.000Z', null));
  });

  it("prunes a 2.0.1 station's signed readings no transaction claimed, once older than the cutoff", () => {
    const reading = (stationTransactionId: string, receivedAt: string) =>
      t.db
        .prepare(
          "INSERT INTO signed_readings (station_id, station_transaction_id, connector_id, context, timestamp, signed_meter_data, received_at) VALUES ('EV201', ?, 1, 'Transaction.Begin', ?, 'OCMF|{}|{}', ?)",
        )
        .run(stationTransactionId, receivedAt, receivedAt);
    // A station that began a transaction, signed its Begin reading and never named a driver nor ended it.
    reading('never-claimed', '2024-01-01T10:00:00.000Z');
    reading('still-waiting', '2026-11-01T10:00:00.000Z');

    pruneStoppedTransactions(new DirectWriter(t.db), new Date('2025-10-22T00:00:00.000Z'));
    expect(t.db.prepare('SELECT station_transaction_id FROM signed_readings').pluck().all()).toEqual(['still-waiting']);
  });

  it('a prune alone leaves the freed pages in the file (they wait for reclaimFreePages)', () => {
    const padding = 'x'.repeat(20);
    const fill = t.db.transaction(() => {
      for (let i = 0; i < 20_000; i += 1) insert('2024-01-01T10:00:00.000Z', '2024-01-01T11:00:00.000Z', padding);
    });
    fill();
    const file = path.join(t.temp.dataDir, DATABASE_FILE);
    t.db.pragma('wal_checkpoint(TRUNCATE)');
    const full = statSync(file).size;

    expect(pruneStoppedTransactions(new DirectWriter(t.db), new Date('2025-01-01T00:00:00.000Z'))).toBe(20_000);
    t.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(statSync(file).size).toBe(full);
    expect(t.db.pragma('freelist_count', { simple: true })).toBeGreaterThan(100);
  });

  it('the scheduled pass prunes a minute after start, then hourly, and the file shrinks after a large prune', () => {
    vi.useFakeTimers();
    try {
      const fill = t.db.transaction(() => {
        for (let i = 0; i < 5000; i += 1)
          insert('2024-01-01T10:00:00.000Z', '2024-01-01T11:00:00.000Z', 'y'.repeat(20));
      });
      fill();
      const writer = new DirectWriter(t.db);
      let passes = 0;
      const stop = schedulePruning({
        writer,
        prune: () => (
          (passes += 1),
          { stoppedTransactions: pruneStoppedTransactions(writer, new Date('2025-01-01T00:00:00.000Z')) }
        ),
        logger: createLogger('silent'),
      });
      const file = path.join(t.temp.dataDir, DATABASE_FILE);
      t.db.pragma('wal_checkpoint(TRUNCATE)');
      const full = statSync(file).size;

      vi.advanceTimersByTime(59_000);
      expect(passes).toBe(0);
      vi.advanceTimersByTime(1_000);
      expect(passes).toBe(1);
      t.db.pragma('wal_checkpoint(TRUNCATE)');
      expect(t.db.pragma('freelist_count', { simple: true })).toBe(0);
      expect(statSync(file).size).toBeLessThan(full / 2);
      vi.advanceTimersByTime(3_600_000);
      expect(passes).toBe(2);
      stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a database made before incremental vacuum and 1 KiB pages is converted once, keeping its rows; a new one starts in that layout', () => {
    expect(t.db.pragma('auto_vacuum', { simple: true })).toBe(2);
    expect(t.db.pragma('page_size', { simple: true })).toBe(1024);
    expect(convertStorageLayout(t.db)).toBeUndefined();

    const temp = tempSite();
    try {
      mkdirSync(temp.dataDir, { recursive: true });
      const legacy = new BetterSqlite3(path.join(temp.dataDir, DATABASE_FILE));
      legacy.pragma('journal_mode = WAL');
      migrate(legacy);
      legacy
        .prepare(
          "INSERT INTO id_tags (id_tag, status, updated_at) VALUES ('KEPT', 'Accepted', '2026-01-01T00:00:00.000Z')",
        )
        .run();
      legacy.close();
      const db = openDatabase(temp.dataDir);
      expect([db.pragma('auto_vacuum', { simple: true }), db.pragma('page_size', { simple: true })]).toEqual([0, 4096]);
      expect(convertStorageLayout(db)).toEqual({ autoVacuum: 'incremental', pageSizeBytes: { from: 4096, to: 1024 } });
      expect([
        db.pragma('auto_vacuum', { simple: true }),
        db.pragma('page_size', { simple: true }),
        db.pragma('journal_mode', { simple: true }),
      ]).toEqual([2, 1024, 'wal']);
      expect(db.prepare('SELECT id_tag FROM id_tags').pluck().all()).toEqual(['KEPT']);
      expect(convertStorageLayout(db)).toBeUndefined();
      db.close();
    } finally {
      temp.cleanup();
    }
  });
});

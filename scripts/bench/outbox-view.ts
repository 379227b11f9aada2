import { openDatabase } from '../../src/store/index.js';
import { processStats } from './measure.js';

export interface OutboxCounts {
  eventsByType: Record<string, number>;
  deliveriesByState: Record<string, number>;
  /** Pending deliveries that have been attempted at least once. */
  attemptedPending: number;
}

/** What the daemon has committed, read from its database beside it (WAL lets a reader in while it writes). */
export function outboxCounts(dataDir: string): OutboxCounts {
  const db = openDatabase(dataDir, { readonly: true });
  try {
    const group = (sql: string) =>
      Object.fromEntries((db.prepare(sql).all() as Array<{ k: string; n: number }>).map((r) => [r.k, r.n]));
    return {
      eventsByType: group('SELECT event_type AS k, COUNT(*) AS n FROM events GROUP BY event_type'),
      deliveriesByState: group('SELECT state AS k, COUNT(*) AS n FROM deliveries GROUP BY state'),
      attemptedPending: db
        .prepare("SELECT COUNT(*) FROM deliveries WHERE state = 'pending' AND attempts > 0")
        .pluck()
        .get() as number,
    };
  } finally {
    db.close();
  }
}

/** When the daemon committed each station's (or meter's) first StartTransaction event, epoch ms. */
export function firstStartCommits(dataDir: string): Map<string, number> {
  const db = openDatabase(dataDir, { readonly: true });
  try {
    const rows = db
      .prepare(
        "SELECT json_extract(payload, '$.stationId') AS stationId, MIN(created_at) AS at FROM events WHERE event_type = 'StartTransaction' GROUP BY 1",
      )
      .all() as Array<{ stationId: string; at: string }>;
    return new Map(rows.map((r) => [r.stationId, Date.parse(r.at)]));
  } finally {
    db.close();
  }
}

/**
 * Copies every page the WAL holds into the database file now, from this process beside the running daemon (a
 * passive checkpoint: the daemon's commits go on), and returns the bytes this process wrote doing it. Before a
 * measured window it starts the window from a checkpointed WAL; after it, it is the window's share of the
 * checkpoints the daemon would make later, which a window shorter than the daemon's checkpoint interval misses.
 */
export function checkpointWal(dataDir: string): number {
  const db = openDatabase(dataDir);
  try {
    const before = processStats(process.pid).writtenBytes;
    for (let tries = 0; tries < 50; tries++) {
      // A reader still inside an older snapshot (the delivery thread) holds back the last pages: try again.
      const [{ log, checkpointed }] = db.pragma('wal_checkpoint(PASSIVE)') as [{ log: number; checkpointed: number }];
      if (checkpointed >= log) break;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
    return processStats(process.pid).writtenBytes - before;
  } finally {
    db.close();
  }
}

export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

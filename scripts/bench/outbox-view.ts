import { openDatabase } from '../../src/store/index.js';

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

export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

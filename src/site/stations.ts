import { statement, type Database } from '../store/index.js';

export type StationState = 'pending' | 'paired' | 'blocked' | 'removed';

/** A station as the database knows it (its row in `stations`). */
export interface StoredStation {
  id: string;
  siteId: string | null;
  state: StationState;
  passwordHash: string | null;
  online: boolean;
  lastSeen: string | null;
  firstSeen: string;
  /** The BootNotification it last sent, as JSON. */
  bootInfo: string | null;
}

const STATION_COLUMNS =
  'id, site_id AS siteId, state, password_hash AS passwordHash, online, last_seen AS lastSeen, first_seen AS firstSeen, boot_info AS bootInfo';

// Built once: a statement is looked up by its SQL text, and a text built on every call is hashed on every call.
const FIND_STATION = `SELECT ${STATION_COLUMNS} FROM stations WHERE id = ?`;
const ALL_STATIONS = `SELECT ${STATION_COLUMNS} FROM stations ORDER BY id`;

type StationRow = Omit<StoredStation, 'online'> & { online: 0 | 1 };

const fromRow = (row: StationRow): StoredStation => ({ ...row, online: row.online === 1 });

export function findStation(db: Database, stationId: string): StoredStation | undefined {
  const row = statement<[string], StationRow>(db, FIND_STATION).get(stationId);
  return row && fromRow(row);
}

export function allStations(db: Database): StoredStation[] {
  return statement<[], StationRow>(db, ALL_STATIONS).all().map(fromRow);
}

/** Creates the row on first contact; later calls leave the state alone. True when it created it. */
export function ensureStation(db: Database, stationId: string, state: StationState, now: Date): boolean {
  return (
    statement(
      db,
      'INSERT INTO stations (id, state, first_seen, last_seen) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
    ).run(stationId, state, now.toISOString(), now.toISOString()).changes === 1
  );
}

/** How long an unknown station that went quiet stays listed for `station pair`. */
const PENDING_KEPT_MS = 7 * 86_400_000;

/**
 * docs/operating/security.md#security: unknown stations are remembered as pending only up to `max` (the least recently seen go
 * first) and for 7 days, so identities made up by whoever reaches the port cannot grow the table for ever.
 */
export function prunePendingStations(db: Database, max: number, now: Date, configured: readonly string[]): void {
  // Stations listed in the config have rows in state 'pending' too (until paired); they are known, not counted.
  const unknown = "state = 'pending' AND id NOT IN (SELECT value FROM json_each(:configured))";
  const params = {
    configured: JSON.stringify(configured),
    max,
    before: new Date(now.getTime() - PENDING_KEPT_MS).toISOString(),
  };
  statement(db, `DELETE FROM stations WHERE ${unknown} AND COALESCE(last_seen, first_seen) < :before`).run(params);
  statement(
    db,
    `DELETE FROM stations WHERE ${unknown} AND id NOT IN (SELECT id FROM stations WHERE ${unknown} ORDER BY COALESCE(last_seen, first_seen) DESC, rowid DESC LIMIT :max)`,
  ).run(params);
}

import { statement, type Database } from '../store/index.js';

export type StationState = 'pending' | 'paired' | 'blocked' | 'removed';

export interface StationRow {
  id: string;
  site_id: string | null;
  state: StationState;
  password_hash: string | null;
  online: number;
  last_seen: string | null;
  first_seen: string;
  boot_info: string | null;
}

export function findStation(db: Database, stationId: string): StationRow | undefined {
  return statement(db, 'SELECT * FROM stations WHERE id = ?').get(stationId) as StationRow | undefined;
}

export function allStations(db: Database): StationRow[] {
  return statement(db, 'SELECT * FROM stations ORDER BY id').all() as StationRow[];
}

/** Creates the row on first contact; later calls leave the state alone. */
export function ensureStation(db: Database, stationId: string, state: StationState, now: Date): void {
  statement(db, 'INSERT INTO stations (id, state, first_seen, last_seen) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING').run(stationId, state, now.toISOString(), now.toISOString());
}

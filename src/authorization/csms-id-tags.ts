import type { AuthorizationStatus } from '../site/index.js';
import { statement, type Database } from '../store/index.js';

/**
 * An entry the CSMS gave one station with SendLocalList (docs/design/uplink.md#uplink-what-the-csms-sees): part of chargegate's local list
 * for that station, after the installer's entries.
 */
export interface CsmsIdTag {
  idTag: string;
  stationId: string;
  status: AuthorizationStatus;
  /** ISO 8601; after it the tag answers Expired. */
  expiresAt: string | null;
  parentIdTag: string | null;
  /** The version of the station's list it is in. */
  listVersion: number;
  updatedAt: string;
}

/** An OCPP 1.6 SendLocalList: a Full list replaces the station's entries, a Differential adds, changes or removes. */
export interface CsmsLocalList {
  listVersion: number;
  updateType: 'Full' | 'Differential';
  /** An entry without idTagInfo is removed (Differential) or left out (Full). */
  localAuthorizationList?: Array<{
    idTag: string;
    idTagInfo?: { status: AuthorizationStatus; expiryDate?: string; parentIdTag?: string };
  }>;
}

const COLUMNS = `e.id_tag AS idTag, e.station_id AS stationId, e.status, e.expires_at AS expiresAt,
  e.parent_id_tag AS parentIdTag, l.list_version AS listVersion, e.updated_at AS updatedAt`;

/**
 * Applies a list the station accepted to chargegate's copy, and keeps its version; call inside a write. The
 * installer's entries (id_tags) are another table: nothing here touches them.
 */
export function applyCsmsLocalList(db: Database, stationId: string, list: CsmsLocalList, now: Date): void {
  const at = now.toISOString();
  if (list.updateType === 'Full') statement(db, 'DELETE FROM csms_id_tags WHERE station_id = ?').run(stationId);
  for (const { idTag, idTagInfo } of list.localAuthorizationList ?? []) {
    if (!idTagInfo) {
      statement(db, 'DELETE FROM csms_id_tags WHERE station_id = ? AND id_tag = ?').run(stationId, idTag);
      continue;
    }
    statement(
      db,
      `INSERT INTO csms_id_tags (station_id, id_tag, status, expires_at, parent_id_tag, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (station_id, id_tag) DO UPDATE SET id_tag = excluded.id_tag, status = excluded.status,
         expires_at = excluded.expires_at, parent_id_tag = excluded.parent_id_tag, updated_at = excluded.updated_at`,
    ).run(stationId, idTag, idTagInfo.status, idTagInfo.expiryDate ?? null, idTagInfo.parentIdTag ?? null, at);
  }
  statement(
    db,
    `INSERT INTO csms_local_lists (station_id, list_version, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (station_id) DO UPDATE SET list_version = excluded.list_version, updated_at = excluded.updated_at`,
  ).run(stationId, list.listVersion, at);
}

/** The version of the last list the station took from the CSMS through chargegate; undefined before the first. */
export function csmsLocalListVersion(db: Database, stationId: string): number | undefined {
  return (
    statement<[string], number>(db, 'SELECT list_version FROM csms_local_lists WHERE station_id = ?')
      .pluck()
      .get(stationId) ?? undefined
  );
}

/** The CSMS's entry for the tag at this station (tags compare case-insensitively, as OCPP's do). */
export function findCsmsIdTag(db: Database, idTag: string, stationId: string): CsmsIdTag | undefined {
  return statement<[string, string], CsmsIdTag>(
    db,
    `SELECT ${COLUMNS} FROM csms_id_tags e JOIN csms_local_lists l USING (station_id)
      WHERE e.station_id = ? AND e.id_tag = ?`,
  ).get(stationId, idTag);
}

/** Every station's CSMS entries, by station and tag. */
export function listCsmsIdTags(db: Database): CsmsIdTag[] {
  return statement<[], CsmsIdTag>(
    db,
    `SELECT ${COLUMNS} FROM csms_id_tags e JOIN csms_local_lists l USING (station_id) ORDER BY e.station_id, e.id_tag`,
  ).all();
}

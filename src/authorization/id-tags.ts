import { inTransaction, statement, type Database } from '../store/index.js';

/** Statuses an installer can give a tag in the local list; ConcurrentTx is computed, never stored. */
export const LOCAL_TAG_STATUSES = ['Accepted', 'Blocked', 'Expired', 'Invalid'] as const;
export type LocalTagStatus = (typeof LOCAL_TAG_STATUSES)[number];

/** OCPP 1.6 IdToken is CiString20Type: at most 20 characters. */
export const MAX_ID_TAG_LENGTH = 20;

export interface IdTag {
  idTag: string;
  status: LocalTagStatus;
  /** ISO 8601; after it the tag answers Expired. */
  expiresAt: string | null;
  /** A site-scoped tag counts only at that site's stations; null counts everywhere. */
  siteId: string | null;
  updatedAt: string;
}

interface IdTagRow {
  id_tag: string;
  status: LocalTagStatus;
  expires_at: string | null;
  site_id: string | null;
  updated_at: string;
}

const fromRow = (r: IdTagRow): IdTag => ({
  idTag: r.id_tag,
  status: r.status,
  expiresAt: r.expires_at,
  siteId: r.site_id,
  updatedAt: r.updated_at,
});

/** Adds the tag or replaces its status, expiry and scope (OCPP compares tags case-insensitively: one entry per tag). */
export function putIdTag(db: Database, tag: Omit<IdTag, 'updatedAt'>, now: Date = new Date()): IdTag {
  inTransaction(db, () => {
    db.prepare('DELETE FROM id_tags WHERE id_tag = ? COLLATE NOCASE').run(tag.idTag);
    db.prepare('INSERT INTO id_tags (id_tag, status, expires_at, site_id, updated_at) VALUES (?, ?, ?, ?, ?)').run(
      tag.idTag,
      tag.status,
      tag.expiresAt,
      tag.siteId,
      now.toISOString(),
    );
  });
  return { ...tag, updatedAt: now.toISOString() };
}

/** Returns whether the tag was in the list. */
export function removeIdTag(db: Database, idTag: string): boolean {
  return db.prepare('DELETE FROM id_tags WHERE id_tag = ? COLLATE NOCASE').run(idTag).changes > 0;
}

export function listIdTags(db: Database): IdTag[] {
  return db.prepare<[], IdTagRow>('SELECT * FROM id_tags ORDER BY id_tag').all().map(fromRow);
}

/** The tag as it applies at a site: a tag scoped to another site is not in this site's list. */
export function findIdTag(db: Database, idTag: string, siteId: string): IdTag | undefined {
  const row = statement<[string, string], IdTagRow>(
    db,
    'SELECT * FROM id_tags WHERE id_tag = ? COLLATE NOCASE AND (site_id IS NULL OR site_id = ?)',
  ).get(idTag, siteId);
  return row && fromRow(row);
}

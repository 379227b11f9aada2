import { describe, expect, it } from 'vitest';
import { findIdTag, putIdTag } from '../../src/authorization/index.js';
import { databasePerTest } from '../support/temp-database.js';

describe('the local list (authorization/id-tags.ts)', () => {
  const t = databasePerTest();

  it('finds a tag in any case, scoped to its site or none', () => {
    putIdTag(t.db, { idTag: 'AbC123', status: 'Accepted', expiresAt: null, siteId: null });
    putIdTag(t.db, { idTag: 'SITE2ONLY', status: 'Accepted', expiresAt: null, siteId: 's2' });
    expect(findIdTag(t.db, 'abc123', 's1')).toMatchObject({ idTag: 'AbC123', status: 'Accepted' });
    expect(findIdTag(t.db, 'site2only', 's1')).toBeUndefined();
    expect(findIdTag(t.db, 'site2only', 's2')).toMatchObject({ idTag: 'SITE2ONLY' });
  });

  it('looks a tag up through an index, not by reading the whole list (every Authorize and start asks)', () => {
    const plan = t.db
      .prepare(
        'EXPLAIN QUERY PLAN SELECT * FROM id_tags WHERE id_tag = ? COLLATE NOCASE AND (site_id IS NULL OR site_id = ?)',
      )
      .all('TAG', 's1') as Array<{ detail: string }>;
    expect(plan.map((step) => step.detail)).toEqual([expect.stringMatching(/^SEARCH id_tags USING INDEX /)]);
  });
});

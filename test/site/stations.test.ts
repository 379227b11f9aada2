import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/site/index.js';
import { siteFixture } from './site-fixture.js';

describe('stations (site/station-registry.ts)', () => {
  const t = siteFixture();

  it('pairing refuses an unknown site or a configured station of another site; removed and blocked stations are rejected', () => {
    expect(() => t.site.stations.pair('CP001', 's2')).toThrow(DomainError);
    expect(() => t.site.stations.pair('CP-X', 'mars')).toThrow(/no site "mars"/);
    t.site.stations.pair('CP-X', 's2');
    expect(t.site.stations.admission('CP-X')).toMatchObject({ verdict: 'known', siteId: 's2' });
    t.site.stations.setState('CP-X', 'removed');
    expect(t.site.stations.admission('CP-X')).toEqual({ verdict: 'rejected', state: 'removed' });
    expect(t.site.stations.boot('CP-X', {})).toBe('Rejected');
    expect(t.site.stations.boot('CP-NEW', {})).toBe('Pending');
    expect(t.site.stations.list().find((s) => s.id === 'CP-NEW')).toMatchObject({ state: 'pending', siteId: null });
  });

  it('heartbeats touch memory only: the list shows them at once, the database gets them in one batch on flush', () => {
    let clock = new Date('2026-11-21T10:00:00.000Z');
    const site = t.rebuild({ now: () => clock });
    site.stations.setOnline('CP001', true);
    const stored = () => t.db.prepare<[], string>("SELECT last_seen FROM stations WHERE id = 'CP001'").pluck().get();
    const changes = () => t.db.prepare<[], number>('SELECT total_changes()').pluck().get() ?? 0;
    const before = changes();
    clock = new Date('2026-11-21T10:05:00.000Z');
    for (let i = 0; i < 10; i++) site.stations.touch('CP001');
    expect(changes()).toBe(before);
    expect(stored()).toBe('2026-11-21T10:00:00.000Z');
    expect(site.stations.list().find((s) => s.id === 'CP001')).toMatchObject({
      online: true,
      lastSeen: '2026-11-21T10:05:00.000Z',
    });
    site.stations.flushLastSeen();
    expect(stored()).toBe('2026-11-21T10:05:00.000Z');
    expect(changes()).toBe(before + 1);
  });
});

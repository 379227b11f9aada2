import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { EventRecord } from '../../src/outbox/index.js';
import { SiteContext } from '../../src/site/site-context.js';
import { GroupCommit } from '../../src/store/index.js';
import { databasePerTest } from '../support/temp-database.js';

const config = parseConfig(`
sites:
  - id: s1
    webhooks: [{ id: w1, url: "http://127.0.0.1:9/w1", events: [Authorize] }]
  - id: s2
`);

describe('SiteContext: what delivery hears of the events it appends', () => {
  const t = databasePerTest();

  /** A context on the daemon's group commit that records what its listener is told, and when. */
  function context() {
    const told = { appended: [] as Array<{ record: EventRecord; inTransaction: boolean }>, committed: 0 };
    const group = new GroupCommit(t.db);
    const ctx = new SiteContext(
      t.db,
      group,
      () => config,
      () => new Date(),
      {
        appended: (events) => told.appended.push(...events.map((record) => ({ record, inTransaction: t.db.inTransaction }))),
        committed: () => (told.committed += 1),
      },
    );
    const authorize = (idTag: string, siteId = 's1') => ctx.emit({ eventType: 'Authorize', siteId, payload: { stationId: 'CP001', idTag, status: 'Accepted' } }, new Date());
    return { told, group, ctx, authorize };
  }
  const stored = () => t.db.prepare<[], { event_id: string; payload: string }>('SELECT event_id, payload FROM events ORDER BY seq').all();

  it('tells each event of a change once, before the change commits, as the outbox stores it; then that it committed', async () => {
    const { told, group, ctx, authorize } = context();
    const occurredAt = new Date('2026-11-26T08:00:00.000Z');
    ctx.commit(() => {
      authorize('A');
      ctx.emit({ eventType: 'Authorize', siteId: 's1', payload: { stationId: 'CP001', idTag: 'B', status: 'Accepted' }, occurredAt }, new Date());
    });
    expect(told.appended.map((a) => a.inTransaction)).toEqual([true, true]);
    expect(told.committed).toBe(0);
    await group.committed();
    await Promise.resolve();
    expect(told.committed).toBe(1);
    expect(told.appended.map((a) => a.record)).toEqual(
      stored().map((row) => ({ eventId: row.event_id, eventType: 'Authorize', siteId: 's1', payloadJson: row.payload, occurredAt: expect.any(String) as unknown })),
    );
    expect(told.appended[1]!.record.occurredAt).toBe(occurredAt.toISOString());
  });

  it('tells nothing of a change that threw (its events are undone), and each event of nested changes once', async () => {
    const { told, group, ctx, authorize } = context();
    expect(() =>
      ctx.commit(() => {
        authorize('undone');
        throw new Error('refused');
      }),
    ).toThrow('refused');
    ctx.commit(() => {
      authorize('outer');
      ctx.commit(() => authorize('inner'));
    });
    await group.committed();
    expect(stored().map((row) => JSON.parse(row.payload).idTag)).toEqual(['outer', 'inner']);
    expect(told.appended.map((a) => JSON.parse(a.record.payloadJson).idTag).sort()).toEqual(['inner', 'outer']);
  });

  it('tells nothing of an event no webhook subscribed to: there is nothing to sign or send', async () => {
    const { told, group, ctx, authorize } = context();
    ctx.commit(() => authorize('X', 's2'));
    await group.committed();
    expect(stored()).toHaveLength(1);
    expect(told).toEqual({ appended: [], committed: 0 });
  });
});

import { describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config/index.js';
import type { AppendedRecord, QueueKey } from '../../src/outbox/index.js';
import { SiteContext } from '../../src/site/site-context.js';
import { GroupCommit } from '../../src/store/index.js';
import { databasePerTest } from '../support/temp-database.js';

const configWith = (maxRetries: number): Config =>
  parseConfig(`
sites:
  - id: s1
    webhooks: [{ id: w1, url: "http://127.0.0.1:9/w1", events: [Authorize] }]
  - id: s2
webhookDelivery: { maxRetries: ${maxRetries} }
`);

describe('SiteContext: what delivery hears of the events it appends', () => {
  const t = databasePerTest();

  /**
   * A context on the daemon's group commit that records what its listener is told, and when; the listener lets the
   * next `counts` deliveries be counted ahead (as many times as a worker said its queue was empty).
   */
  function context(options: { counts?: number; maxRetries?: number } = {}) {
    const told = {
      appended: [] as Array<{ record: AppendedRecord; inTransaction: boolean }>,
      committed: 0,
      asked: [] as QueueKey[],
    };
    let counts = options.counts ?? 0;
    const group = new GroupCommit(t.db);
    const config = configWith(options.maxRetries ?? 5);
    const ctx = new SiteContext(
      t.db,
      group,
      () => config,
      () => new Date(),
      {
        appended: (events) =>
          told.appended.push(...events.map((record) => ({ record, inTransaction: t.db.inTransaction }))),
        committed: () => (told.committed += 1),
        countsFirstAttempt: (queue) => (told.asked.push(queue), counts-- > 0),
      },
    );
    const authorize = (idTag: string, siteId = 's1') =>
      ctx.emit(
        { eventType: 'Authorize', siteId, payload: { stationId: 'CP001', idTag, status: 'Accepted' } },
        new Date(),
      );
    return { told, group, ctx, authorize };
  }
  const stored = () =>
    t.db
      .prepare<[], { seq: number; event_id: string; payload: string; occurred_at: string }>(
        'SELECT seq, event_id, payload, COALESCE(occurred_at, created_at) AS occurred_at FROM events ORDER BY seq',
      )
      .all();
  const deliveries = () =>
    t.db.prepare<[], { id: number; attempts: number }>('SELECT id, attempts FROM deliveries ORDER BY id').all();

  it('tells each event of a change once, before the change commits, as the outbox stores it; then that it committed', async () => {
    const { told, group, ctx, authorize } = context();
    const occurredAt = new Date('2026-11-26T08:00:00.000Z');
    ctx.commit(() => {
      authorize('A');
      ctx.emit(
        {
          eventType: 'Authorize',
          siteId: 's1',
          payload: { stationId: 'CP001', idTag: 'B', status: 'Accepted' },
          occurredAt,
        },
        new Date(),
      );
    });
    expect(told.appended.map((a) => a.inTransaction)).toEqual([true, true]);
    expect(told.committed).toBe(0);
    await group.committed();
    await Promise.resolve();
    expect(told.committed).toBe(1);
    expect(told.appended.map((a) => a.record)).toEqual(
      stored().map((row) => ({
        eventId: row.event_id,
        eventType: 'Authorize',
        siteId: 's1',
        payloadJson: row.payload,
        occurredAt: row.occurred_at,
        seq: row.seq,
        queueFull: [],
        counted: [],
      })),
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
    expect(told).toEqual({ appended: [], committed: 0, asked: [] });
  });

  it("counts a delivery's first attempt in its event's commit when the listener asks for it, and names the row", async () => {
    const { told, group, ctx, authorize } = context({ counts: 1 });
    ctx.commit(() => {
      authorize('counted');
      authorize('not counted');
    });
    await group.committed();
    const [first, second] = deliveries();
    expect([first!.attempts, second!.attempts]).toEqual([1, 0]);
    expect(told.appended.map((a) => a.record.counted)).toEqual([[{ webhookId: 'w1', id: first!.id }], []]);
    expect(told.asked).toEqual([
      { siteId: 's1', webhookId: 'w1', eventType: 'Authorize' },
      { siteId: 's1', webhookId: 'w1', eventType: 'Authorize' },
    ]);
  });

  it('a change that finds the disk full (SQLITE_FULL, for real) tells nothing and counts nothing; the next one does', async () => {
    const { told, group, ctx, authorize } = context({ counts: 1 });
    const pages = t.db.pragma('page_count', { simple: true }) as number;
    t.db.pragma(`max_page_count = ${pages}`);
    // A payload that needs pages the file may not grow by.
    expect(() => ctx.commit(() => authorize('x'.repeat(20_000)))).toThrow(/full/);
    t.db.pragma('max_page_count = 1073741823');
    await group.committed().catch(() => undefined);
    expect(told.appended).toEqual([]);
    expect(deliveries()).toEqual([]);
    ctx.commit(() => authorize('after'));
    await group.committed();
    expect(told.appended.map((a) => a.record.counted)).toEqual([[{ webhookId: 'w1', id: deliveries()[0]!.id }]]);
    expect(deliveries().map((d) => d.attempts)).toEqual([1]);
  });

  it('counts nothing ahead without a retry to spare, or for an event appended outside a change', async () => {
    const withoutRetries = context({ counts: 5, maxRetries: 0 });
    withoutRetries.ctx.commit(() => withoutRetries.authorize('A'));
    await withoutRetries.group.committed();
    const outside = context({ counts: 5 });
    outside.group.write(() => outside.authorize('B'));
    await outside.group.committed();
    expect(deliveries().map((d) => d.attempts)).toEqual([0, 0]);
    expect([...withoutRetries.told.asked, ...outside.told.asked]).toEqual([]);
  });
});

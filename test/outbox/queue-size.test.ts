import { describe, expect, it } from 'vitest';
import { appendEvent, DeliveryStore, RETRIES_EXHAUSTED, type QueueKey } from '../../src/outbox/index.js';
import { inTransaction, MIGRATIONS, migrate } from '../../src/store/index.js';
import { databasePerTest } from '../support/temp-database.js';

const AUTHORIZE: QueueKey = { siteId: 's1', webhookId: 'w1', eventType: 'Authorize' };

describe('webhook queue sizes kept by triggers (migration 6)', () => {
  const t = databasePerTest();

  const append = (n: number, webhookIds = ['w1'], capacity?: number) =>
    inTransaction(t.db, () => {
      for (let i = 0; i < n; i += 1)
        appendEvent(
          t.db,
          { eventType: 'Authorize', siteId: 's1', payload: { i } },
          webhookIds,
          new Date(),
          capacity === undefined ? {} : { queueCapacity: capacity },
        );
    });
  const counted = () =>
    t.db
      .prepare(
        "SELECT site_id AS siteId, webhook_id AS webhookId, event_type AS eventType, COUNT(*) AS size FROM deliveries WHERE state = 'pending' GROUP BY 1, 2, 3 ORDER BY 2",
      )
      .all();
  const kept = () => new DeliveryStore(t.db).queueSizes().sort((a, b) => a.webhookId.localeCompare(b.webhookId));

  it('follows every way a delivery joins or leaves its queue, and agrees with a count of the rows', () => {
    const store = new DeliveryStore(t.db);
    append(5, ['w1', 'w2']);
    expect(kept()).toEqual([
      { ...AUTHORIZE, size: 5 },
      { ...AUTHORIZE, webhookId: 'w2', size: 5 },
    ]);

    const [first, second, third] = store.head(AUTHORIZE, 3);
    store.markDelivered(first!.id, 200, new Date());
    store.markDead(second!.id, RETRIES_EXHAUSTED, 500, 'HTTP 500', new Date());
    store.markFailed(third!.id, 503, 'HTTP 503', Date.now() + 1000, new Date());
    expect(store.queueSizes().find((q) => q.webhookId === 'w1')?.size).toBe(3);

    expect(store.replay({}, 1000, new Date())).toEqual({ replayed: 1, queueFull: 0 });
    expect(store.queueSizes().find((q) => q.webhookId === 'w1')?.size).toBe(4);
    t.db.prepare("DELETE FROM deliveries WHERE webhook_id = 'w2' AND state = 'pending'").run();
    expect(kept()).toEqual([{ ...AUTHORIZE, size: 4 }]);
    expect(kept()).toEqual(counted());
  });

  it('a full queue turns the next delivery into a dead letter, one row read whatever the capacity', () => {
    append(3, ['w1'], 3);
    expect(kept()).toEqual([{ ...AUTHORIZE, size: 3 }]);
    append(1, ['w1'], 3);
    expect(t.db.prepare('SELECT state, dead_reason FROM deliveries ORDER BY id DESC LIMIT 1').get()).toEqual({
      state: 'dead',
      dead_reason: 'queue_full',
    });
    expect(kept()).toEqual([{ ...AUTHORIZE, size: 3 }]);
  });

  it('counts the pending deliveries a database already holds when it is migrated', () => {
    // The state before migration 6: no size table, no triggers.
    t.db.exec(
      'DROP TRIGGER webhook_queue_joined; DROP TRIGGER webhook_queue_rejoined; DROP TRIGGER webhook_queue_left; DROP TRIGGER webhook_queue_deleted; DROP TABLE webhook_queue_sizes',
    );
    t.db.prepare('DELETE FROM schema_migrations WHERE version = 6').run();
    append(7, ['w1', 'w2']);
    migrate(t.db, MIGRATIONS);
    expect(kept()).toEqual(counted());
    expect(kept()).toHaveLength(2);
  });
});

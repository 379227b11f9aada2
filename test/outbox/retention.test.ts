import { describe, expect, it } from 'vitest';
import { appendEvent, DeliveryStore, pruneDelivered } from '../../src/outbox/index.js';
import { databasePerTest } from '../support/temp-database.js';
import { DirectWriter } from '../../src/store/index.js';

describe('outbox retention', () => {
  const t = databasePerTest();
  const old = new Date('2026-01-01T00:00:00.000Z');
  const recent = new Date('2026-11-20T00:00:00.000Z');
  const cutoff = new Date('2026-10-22T00:00:00.000Z');

  const append = (at: Date, webhooks: string[]) =>
    appendEvent(t.db, { eventType: 'StartTransaction', siteId: 's1', payload: { at: at.toISOString() } }, webhooks, at);
  const deliveryIds = (seq: number) =>
    t.db.prepare('SELECT id FROM deliveries WHERE event_seq = ? ORDER BY id').pluck().all(seq) as number[];
  const count = (sql: string) => t.db.prepare(sql).pluck().get() as number;

  it('prunes old delivered rows and their events; keeps pending, dead letters, recent deliveries and events still owed to a partner', () => {
    const store = new DeliveryStore(t.db);
    const delivered = append(old, ['a']);
    store.markDelivered(deliveryIds(delivered.seq)[0]!, 204, old);
    const halfDelivered = append(old, ['a', 'b']);
    store.markDelivered(deliveryIds(halfDelivered.seq)[0]!, 204, old);
    const pending = append(old, ['a']);
    const dead = append(old, ['a']);
    t.db
      .prepare(
        "UPDATE deliveries SET state = 'dead', dead_reason = 'retries_exhausted', updated_at = ? WHERE event_seq = ?",
      )
      .run(old.toISOString(), dead.seq);
    const fresh = append(recent, ['a']);
    store.markDelivered(deliveryIds(fresh.seq)[0]!, 204, recent);
    append(old, []);

    expect(pruneDelivered(new DirectWriter(t.db), cutoff, 1)).toEqual({ deliveries: 2, events: 2 });
    const events = t.db.prepare('SELECT seq FROM events ORDER BY seq').pluck().all();
    expect(events).toEqual([halfDelivered.seq, pending.seq, dead.seq, fresh.seq]);
    expect(count("SELECT COUNT(*) FROM deliveries WHERE state = 'pending'")).toBe(2);
    expect(count("SELECT COUNT(*) FROM deliveries WHERE state = 'dead'")).toBe(1);
    expect(pruneDelivered(new DirectWriter(t.db), cutoff)).toEqual({ deliveries: 0, events: 0 });
  });
});

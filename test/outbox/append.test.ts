import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { appendEvent, subscribedWebhooks } from '../../src/outbox/index.js';
import { inTransaction } from '../../src/store/index.js';
import { databasePerTest } from '../support/temp-database.js';

describe('outbox append', () => {
  const t = databasePerTest();

  const count = (table: string) => (t.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

  it('subscribes only the enabled webhooks of the event site that asked for the event type', () => {
    const config = parseConfig(`
sites:
  - id: a
    webhooks:
      - { id: all, url: "http://127.0.0.1:9/all" }
      - { id: stops, url: "http://127.0.0.1:9/stops", events: [StopTransaction] }
      - { id: off, url: "http://127.0.0.1:9/off", enabled: false }
  - id: b
    webhooks:
      - { id: other-site, url: "http://127.0.0.1:9/b" }
`);
    expect(subscribedWebhooks(config, 'a', 'StopTransaction')).toEqual(['all', 'stops']);
    expect(subscribedWebhooks(config, 'a', 'Authorize')).toEqual(['all']);
    expect(subscribedWebhooks(config, 'b', 'Authorize')).toEqual(['other-site']);
    expect(subscribedWebhooks(config, 'nowhere', 'Authorize')).toEqual([]);
  });

  it('writes the event and its delivery rows in the caller transaction: a rollback leaves neither', () => {
    const event = {
      eventType: 'Authorize' as const,
      siteId: 'a',
      payload: { stationId: 'CP001', idTag: 'T', status: 'Accepted' },
    };
    expect(() =>
      inTransaction(t.db, () => {
        appendEvent(t.db, event, ['w1', 'w2'], new Date());
        throw new Error('the state change failed');
      }),
    ).toThrow('the state change failed');
    expect([count('events'), count('deliveries')]).toEqual([0, 0]);

    const first = inTransaction(t.db, () => appendEvent(t.db, event, ['w1', 'w2'], new Date('2026-01-01T00:00:00Z')));
    const second = inTransaction(t.db, () => appendEvent(t.db, event, [], new Date()));
    // A time-ordered UUID (version 7): later events sort after earlier ones, in the index as in the text.
    expect(first.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second.eventId > first.eventId).toBe(true);
    expect(second.eventId).not.toBe(first.eventId);
    expect(second.seq).toBeGreaterThan(first.seq);
    expect(t.db.prepare('SELECT payload, created_at FROM events WHERE seq = ?').get(first.seq)).toEqual({
      payload: JSON.stringify(event.payload),
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(t.db.prepare('SELECT webhook_id, state, attempts FROM deliveries ORDER BY id').all()).toEqual([
      { webhook_id: 'w1', state: 'pending', attempts: 0 },
      { webhook_id: 'w2', state: 'pending', attempts: 0 },
    ]);
  });
});

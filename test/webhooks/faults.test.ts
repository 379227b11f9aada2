import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../support/daemon.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { deliveries, eventually, freePort, startWebhookDaemon } from './harness.js';

const HUGE = 1024 ** 3;

describe('faulty receivers do not stall anyone else', () => {
  let daemon: TestDaemon;
  const r: Record<string, Receiver> = {};

  beforeAll(async () => {
    r.healthy = await startReceiver();
    r.hang = await startReceiver({ kind: 'hang' });
    r.reset = await startReceiver({ kind: 'reset' });
    r.target = await startReceiver();
    r.redirect = await startReceiver({ kind: 'redirect', location: r.target.url(), status: 307 });
    r.huge = await startReceiver({ kind: 'huge', bytes: HUGE });
    r.stall = await startReceiver({ kind: 'stall', status: 202 });
    r.mixed = await startReceiver((request) =>
      request.json().eventType === 'ChargePointStatus' ? { kind: 'hang' } : { status: 200 },
    );
    daemon = await startWebhookDaemon(
      [
        { id: 'healthy', url: r.healthy.url() },
        { id: 'hang', url: r.hang.url() },
        { id: 'reset', url: r.reset.url() },
        { id: 'redirect', url: r.redirect.url() },
        { id: 'huge', url: r.huge.url() },
        { id: 'stall', url: r.stall.url(), events: ['Authorize'] },
        { id: 'refused', url: `http://127.0.0.1:${await freePort()}/webhook/events` },
        { id: 'unresolvable', url: 'http://chargegate-receiver.invalid/webhook/events' },
        { id: 'mixed', url: r.mixed.url(), events: ['Authorize', 'ChargePointStatus'] },
      ],
      { retryIntervalS: 0.2, requestTimeoutMs: 1000 },
    );
    const station = await daemon.connect();
    await station.boot();
    for (let i = 1; i <= 5; i += 1) {
      await station.authorize(`TAG-${i}`);
      await station.statusNotification({ connectorId: 1, status: i % 2 ? 'Charging' : 'SuspendedEV' });
    }
  });

  afterAll(async () => {
    await Promise.all(Object.values(r).map((receiver) => receiver.close()));
    await daemon?.stop();
  });

  it('delivers every event to the healthy receiver, and every event type that is not stuck', async () => {
    const events = daemon.events().length;
    expect(events).toBe(10);
    await r.healthy!.waitForCount(events);
    expect(new Set(r.healthy!.requests.map((q) => q.json().eventId)).size).toBe(events);
    // Same webhook, other event type: Authorize flows while ChargePointStatus hangs.
    await r.mixed!.waitFor((q) => q.filter((x) => x.json().eventType === 'Authorize').length === 5);
    expect(r.mixed!.requests.filter((x) => x.json().eventType === 'ChargePointStatus').length).toBeGreaterThanOrEqual(
      1,
    );
  });

  it('treats hangs, resets, redirects, refused ports and unknown hosts as failed attempts and retries them', async () => {
    await r.hang!.waitFor((q) => q.length >= 2 && q[0]!.abortedAt !== undefined, 15_000);
    // One queue per event type, each retrying only its head.
    for (const type of ['Authorize', 'ChargePointStatus'])
      expect(
        new Set(r.hang!.requests.filter((q) => q.json().eventType === type).map((q) => q.json().eventId)).size,
      ).toBeLessThanOrEqual(1);
    await r.reset!.waitForCount(3);
    await r.redirect!.waitForCount(3);
    expect(r.target!.requests).toHaveLength(0);
    const head = (webhookId: string) => deliveries(daemon, webhookId)[0]!;
    await eventually(
      () => ['refused', 'unresolvable', 'hang', 'reset', 'redirect'].every((id) => head(id).attempts >= 2),
      15_000,
      'two attempts each',
    );
    expect(head('refused').last_error).toContain('ECONNREFUSED');
    expect(head('unresolvable').last_error).toMatch(/ENOTFOUND|EAI_AGAIN/);
    expect(head('hang').last_error).toBe('no answer within 1000 ms');
    expect(head('reset').last_error).toMatch(/socket|ECONNRESET|closed/i);
    expect(head('redirect')).toMatchObject({ last_status: 307, last_error: 'HTTP 307' });
    for (const id of ['refused', 'unresolvable', 'hang', 'reset', 'redirect']) {
      expect(deliveries(daemon, id).every((d) => d.state === 'pending')).toBe(true);
      // FIFO: only the head of each (webhook, event type) queue has been tried.
      for (const type of ['Authorize', 'ChargePointStatus'])
        expect(
          deliveries(daemon, id)
            .filter((d) => d.event_type === type)
            .slice(1)
            .every((d) => d.attempts === 0),
        ).toBe(true);
    }
  });

  it('counts a 2xx whose body stalls as delivered: the status is the answer', async () => {
    await eventually(
      () =>
        deliveries(daemon, 'stall').length === 5 &&
        deliveries(daemon, 'stall').every((d) => d.state === 'delivered' && d.last_status === 202),
      20_000,
      'stalled bodies delivered',
    );
  });

  it('counts a 2xx with a huge body as delivered without reading the body', async () => {
    await eventually(
      () => deliveries(daemon, 'huge').every((d) => d.state === 'delivered'),
      15_000,
      'huge-body receiver delivered',
    );
    const sent = r.huge!.requests.length;
    expect(sent).toBeGreaterThanOrEqual(daemon.events().length);
    expect(r.huge!.hugeBytesWritten).toBeLessThan((sent * HUGE) / 100);
  });
});

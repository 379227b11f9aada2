import { describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../support/cli.js';
import {
  deliveries,
  eventually,
  expectSignedWebhook,
  jwksSigningKey,
  restartDaemon,
  webhookTestResources,
} from './harness.js';

const t = webhookTestResources();

interface DeadLetterJson {
  eventId: string;
  eventType: string;
  siteId: string;
  webhookId: string;
  reason: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
}

describe('retries and dead letters (contract section 5)', () => {
  it('retries a failing event at the fixed interval with the same eventId, a fresh request id and signature each time, until a 2xx', async () => {
    const partner = await t.receiver();
    partner.answer((request) => (request.index < 2 ? { status: 503, body: 'busy' } : { status: 200 }));
    const daemon = await t.daemon([{ id: 'partner-a', url: partner.url(), events: ['Authorize'] }], {
      retryIntervalS: 0.3,
    });
    const publicKey = await jwksSigningKey(daemon);
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('TAG-1');
    await partner.waitForCount(3);
    const envelopes = await Promise.all(partner.requests.map((r) => expectSignedWebhook(r, publicKey)));
    expect(new Set(envelopes.map((e) => e.eventId)).size).toBe(1);
    expect(new Set(partner.requests.map((r) => r.headers['x-request-id'])).size).toBe(3);
    expect(new Set(envelopes.map((e) => e.timestamp)).size).toBe(3);
    for (let i = 1; i < 3; i += 1)
      expect(partner.requests[i]!.receivedAt - partner.requests[i - 1]!.receivedAt).toBeGreaterThanOrEqual(290);
    const [row] = await eventually(
      () => (deliveries(daemon)[0]?.state === 'delivered' ? deliveries(daemon) : undefined),
      5000,
      'delivered',
    );
    expect(row).toMatchObject({ state: 'delivered', attempts: 3, last_status: 200 });
    expect(daemon.logged('webhook attempt failed; will retry')).toHaveLength(2);
  });

  it('follows retryIntervalsS: each failed attempt waits its own entry, the last one repeating', async () => {
    const partner = await t.receiver();
    partner.answer((request) => (request.index < 4 ? { status: 503, body: 'busy' } : { status: 200 }));
    const daemon = await t.daemon([{ id: 'partner-a', url: partner.url(), events: ['Authorize'] }], {
      retryIntervalsS: [0.1, 1.2, 0.5],
    });
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('TAG-1');
    await partner.waitForCount(5);
    const gaps = partner.requests.slice(1).map((r, i) => r.receivedAt - partner.requests[i]!.receivedAt);
    // Lower bounds only: a loaded machine may be late, never early.
    expect(gaps[0]).toBeGreaterThanOrEqual(90);
    expect(gaps[1]).toBeGreaterThanOrEqual(1190);
    expect(gaps[2]).toBeGreaterThanOrEqual(490);
    expect(gaps[3]).toBeGreaterThanOrEqual(490);
    // Shorter than the 1.2 s entry: the third wait is really the last entry, not the longest one.
    expect(Math.min(gaps[2]!, gaps[3]!)).toBeLessThan(gaps[1]!);
    expect(daemon.logged('webhook attempt failed; will retry').map((l) => l.retryInS)).toEqual([0.1, 1.2, 0.5, 0.5]);
  });

  it('counts attempts for a batch of queued events in one commit and gives them back when the event ahead fails', async () => {
    const partner = await t.receiver();
    // The first attempts of T1 and of T2 fail; everything else is accepted.
    partner.answer((request) =>
      request.index === 0 || request.index === 2 ? { status: 503, body: 'busy' } : { status: 200 },
    );
    const daemon = await t.daemon([{ id: 'partner-a', url: partner.url(), events: ['Authorize'] }], {
      retryIntervalS: 1,
    });
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('T1');
    await partner.waitForCount(1);
    // T2..T5 queue while T1 waits for its retry; after T1 the worker claims all four in one commit.
    for (const tag of ['T2', 'T3', 'T4', 'T5']) await station.authorize(tag);
    await partner.waitForCount(3);
    // While T2 waits for its retry, T3..T5 show no attempt: none was made.
    await eventually(
      () =>
        deliveries(daemon)
          .map((r) => r.attempts)
          .join() === '2,1,0,0,0',
      800,
      'T3..T5 given back their attempts while T2 waits',
    );
    await partner.waitForCount(7);
    expect(partner.requests.map((r) => r.json<{ payload: { idTag: string } }>().payload.idTag)).toEqual([
      'T1',
      'T1',
      'T2',
      'T2',
      'T3',
      'T4',
      'T5',
    ]);
    const rows = await eventually(
      () => (deliveries(daemon).every((d) => d.state === 'delivered') ? deliveries(daemon) : undefined),
      5000,
      'all delivered',
    );
    expect(rows.map((r) => r.attempts)).toEqual([2, 2, 1, 1, 1]);
  });

  it('keeps the attempt count and the retry time across a restart: no attempt repeated early, none skipped', async () => {
    const partner = await t.receiver({ status: 503 });
    const daemon = await t.daemon([{ id: 'partner-a', url: partner.url(), events: ['Authorize'] }], {
      retryIntervalS: 1,
      maxRetries: 3,
    });
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('TAG-1');
    await partner.waitForCount(2);
    const restarted = await restartDaemon(daemon);
    t.onCleanup(() => restarted.daemon.stop());
    const dead = await eventually(
      () => restarted.logs.find((l) => l.exceptionType === 'Webhook_SendHttp'),
      15_000,
      'Webhook_SendHttp after the restart',
    );
    expect(dead).toMatchObject({ attempts: 4, lastStatus: 503 });
    expect(partner.requests).toHaveLength(4);
    expect(new Set(partner.requests.map((r) => r.json().eventId)).size).toBe(1);
    // The first attempt after the restart waited for the interval the last failure set.
    expect(partner.requests[2]!.receivedAt - partner.requests[1]!.receivedAt).toBeGreaterThanOrEqual(950);
  });

  it('a retry time stored while the clock ran a year ahead waits at most one interval once the clock is back (contract section 7)', async () => {
    const partner = await t.receiver();
    partner.answer((request) => (request.index === 0 ? { status: 503 } : { status: 200 }));
    const daemon = await t.daemon([{ id: 'partner-a', url: partner.url(), events: ['Authorize'] }], {
      retryIntervalS: 1,
    });
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('TAG-1');
    await partner.waitForCount(1);
    await daemon.daemon.stop();
    // What the failed attempt wrote had the clock been a year ahead then: the clock has since been corrected.
    daemon.db
      .prepare("UPDATE deliveries SET next_attempt_at = ? WHERE state = 'pending'")
      .run(Date.now() + 365 * 86_400_000);
    const restarted = await restartDaemon(daemon);
    t.onCleanup(() => restarted.daemon.stop());
    await partner.waitForCount(2);
    expect(partner.requests[1]!.json().eventId).toBe(partner.requests[0]!.json().eventId);
    expect(restarted.logs.filter((l) => l.level === 40 || l.level === 50)).toEqual([]);
  });

  it('after maxRetries dead-letters the event with Webhook_SendHttp; deadletter replay brings the same eventId back without a restart', async () => {
    const partner = await t.receiver({ status: 500, body: 'down for maintenance' });
    const daemon = await t.daemon(
      [{ id: 'partner-a', url: partner.url(), events: ['Authorize', 'StartTransaction'] }],
      { retryIntervalS: 0.1, maxRetries: 2 },
    );
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('TAG-1');
    const eventId = daemon.db.prepare('SELECT event_id FROM events').pluck().get() as string;
    const logged = await eventually(
      () => daemon.logs.find((l) => l.exceptionType === 'Webhook_SendHttp'),
      10_000,
      'Webhook_SendHttp',
    );
    expect(logged).toMatchObject({
      level: 50,
      eventId,
      webhookId: 'partner-a',
      siteId: 's1',
      eventType: 'Authorize',
      lastStatus: 500,
      attempts: 3,
    });
    expect(partner.requests).toHaveLength(3);
    expect(deliveries(daemon)[0]).toMatchObject({
      state: 'dead',
      dead_reason: 'retries_exhausted',
      attempts: 3,
      last_status: 500,
    });

    // The three readers of the dead letter as separate processes at once: none of them changes it.
    const [list, table, shown] = await Promise.all([
      runCliJson<{ deadLetters: DeadLetterJson[] }>(['deadletter', 'list', '--config', daemon.temp.configPath]),
      runCli(['deadletter', 'list', '--config', daemon.temp.configPath]),
      runCliJson<{ envelope: Record<string, unknown>; deliveries: DeadLetterJson[] }>([
        'deadletter',
        'show',
        eventId,
        '--config',
        daemon.temp.configPath,
      ]),
    ]);
    expect(list.code).toBe(0);
    expect(list.data.deadLetters).toEqual([
      expect.objectContaining({
        eventId,
        eventType: 'Authorize',
        siteId: 's1',
        webhookId: 'partner-a',
        reason: 'retries_exhausted',
        attempts: 3,
        lastStatus: 500,
        lastError: 'HTTP 500: down for maintenance',
      }),
    ]);

    // The table shows when it died in the site's zone (Europe/Brussels), as `webhook status` shows its times.
    expect(table.stdout).toMatch(
      new RegExp(
        `${eventId}\\s+Authorize\\s+s1\\s+partner-a\\s+retries_exhausted\\s+3\\s+500\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\+0[12]:00`,
      ),
    );

    expect(shown.code).toBe(0);
    expect(shown.data.envelope).toEqual({
      eventId,
      eventType: 'Authorize',
      siteId: 's1',
      timestamp: expect.any(String),
      occurredAt: expect.any(String),
      payload: expect.objectContaining({ idTag: 'TAG-1' }),
    });
    expect(shown.data.deliveries).toEqual([
      expect.objectContaining({ webhookId: 'partner-a', attempts: 3, lastStatus: 500 }),
    ]);

    partner.answer({ status: 200 });
    const replay = await runCliJson<{ replayed: number; queueFull: number }>([
      'deadletter',
      'replay',
      eventId,
      '--config',
      daemon.temp.configPath,
    ]);
    expect(replay).toMatchObject({ code: 0, data: { replayed: 1, queueFull: 0 } });
    await partner.waitForCount(4);
    expect(partner.requests[3]!.json().eventId).toBe(eventId);
    await eventually(() => deliveries(daemon)[0]?.state === 'delivered', 5000, 'delivered after replay');

    const again = await runCliJson(['deadletter', 'replay', eventId, '--config', daemon.temp.configPath]);
    expect(again).toMatchObject({ code: 1, data: { error: `no dead letter for event ${eventId}` } });

    // A second event dies too; discard forgets it for good (nothing more is sent, health no longer counts it).
    partner.answer({ status: 500 });
    await station.authorize('TAG-2');
    const second = await eventually(
      () => deliveries(daemon).find((d) => d.state === 'dead'),
      10_000,
      'second dead letter',
    );
    expect(second).toBeDefined();
    // The first event has no dead letter to discard whether or not --all ran first: both at once.
    const [discarded, notDead] = await Promise.all([
      runCliJson(['deadletter', 'discard', '--all', '--config', daemon.temp.configPath]),
      runCliJson(['deadletter', 'discard', eventId, '--config', daemon.temp.configPath]),
    ]);
    expect(discarded).toMatchObject({ code: 0, data: { discarded: 1 } });
    expect(deliveries(daemon).filter((d) => d.state === 'dead')).toEqual([]);
    expect(notDead.code).toBe(1);
  }, 120_000);

  it('dead-letters an event that finds its queue full, logs Webhook_QueueFull, and keeps other event types flowing', async () => {
    const partner = await t.receiver((request) =>
      request.json().eventType === 'Authorize' ? { kind: 'hang' } : { status: 200 },
    );
    const daemon = await t.daemon([{ id: 'partner-a', url: partner.url() }], {
      queueCapacity: 3,
      requestTimeoutMs: 60_000,
    });
    const station = await daemon.connect();
    await station.boot();
    for (const tag of ['T1', 'T2', 'T3', 'T4', 'T5']) await station.authorize(tag);
    await station.statusNotification({ connectorId: 1, status: 'Preparing' });
    const full = await eventually(
      () =>
        daemon.logs.filter((l) => l.exceptionType === 'Webhook_QueueFull').length === 2
          ? daemon.logs.filter((l) => l.exceptionType === 'Webhook_QueueFull')
          : undefined,
      10_000,
      'two Webhook_QueueFull',
    );
    const authorizeIds = daemon.db
      .prepare("SELECT event_id FROM events WHERE event_type = 'Authorize' ORDER BY seq")
      .pluck()
      .all() as string[];
    expect(full.map((l) => l.eventId)).toEqual(authorizeIds.slice(3));
    expect(full[0]).toMatchObject({ webhookId: 'partner-a', eventType: 'Authorize', queueCapacity: 3 });
    await partner.waitFor((requests) => requests.some((r) => r.json().eventType === 'ChargePointStatus'));
    // A usage error touches nothing: it runs beside the listing.
    const [dead, human] = await Promise.all([
      runCliJson<{ deadLetters: DeadLetterJson[] }>(['deadletter', 'list', '--config', daemon.temp.configPath]),
      runCli(['deadletter', 'replay', 'some-event', '--all', '--config', daemon.temp.configPath]),
    ]);
    expect(human).toMatchObject({ code: 2, stderr: 'chargegate: name one EVENT_ID or use --all\n' });
    expect(dead.data.deadLetters.map((d) => [d.eventId, d.reason, d.attempts])).toEqual(
      authorizeIds.slice(3).map((id) => [id, 'queue_full', 0]),
    );
    // Replay obeys the capacity too: the queue still holds three.
    const replay = await runCliJson<{ replayed: number; queueFull: number }>([
      'deadletter',
      'replay',
      '--all',
      '--config',
      daemon.temp.configPath,
    ]);
    expect(replay).toMatchObject({ code: 1, data: { replayed: 0, queueFull: 2 } });
  }, 120_000);
});

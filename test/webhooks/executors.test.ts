import { describe, expect, it } from 'vitest';
import type { TestDaemon } from '../support/daemon.js';
import { runCli, runCliJson } from '../support/cli.js';
import { fetchJwks, kidCachingRfc9421Verifier } from '../support/webhook-verifier.js';
import { freePort } from '../support/free-port.js';
import {
  deliveries,
  eventually,
  expectSignedWebhook,
  jwksSigningKey,
  reconfigure,
  webhookTestResources,
} from './harness.js';

const t = webhookTestResources();

interface Executor {
  siteId: string;
  webhookId: string;
  eventType: string;
  active: boolean;
  queueSize: number;
  lastDequeueAt: string | null;
  lastRequestAt: string | null;
  lastRequestDurationMs: number | null;
  status: string;
}

interface WebhooksHealth {
  status: string;
  executors: Executor[];
}

async function health(d: TestDaemon): Promise<{ status: string; webhooks: WebhooksHealth }> {
  return (await fetch(`http://127.0.0.1:${d.daemon.httpPort}/health`)).json() as Promise<{
    status: string;
    webhooks: WebhooksHealth;
  }>;
}

function executor(h: WebhooksHealth, webhookId: string, eventType: string): Executor {
  return h.executors.find((e) => e.webhookId === webhookId && e.eventType === eventType)!;
}

describe('executors: enable/disable and health', () => {
  it('a site without an enabled webhook runs no delivery thread; the reload that enables one starts delivering', async () => {
    const partner = await t.receiver();
    const webhooks = (enabled: boolean) => [{ id: 'partner-a', url: partner.url(), events: ['Authorize'], enabled }];
    const daemon = await t.daemon(webhooks(false));
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('T1');
    await reconfigure(daemon, webhooks(true));
    await station.authorize('T2');
    await partner.waitForCount(1);
    await expectSignedWebhook(partner.requests[0]!, await jwksSigningKey(daemon));
    expect(partner.requests[0]!.json()).toMatchObject({ eventType: 'Authorize', payload: { idTag: 'T2' } });
  });

  it('disabling a webhook aborts its in-flight request at once, sends nothing more, keeps its pending events and resumes them when re-enabled', async () => {
    const partner = await t.receiver({ kind: 'hang' });
    const witness = await t.receiver();
    const webhooks = (enabled: boolean) => [
      { id: 'partner-a', url: partner.url(), events: ['Authorize'], enabled },
      { id: 'witness', url: witness.url(), events: ['Authorize'] },
    ];
    const daemon = await t.daemon(webhooks(true), { requestTimeoutMs: 60_000 });
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('T1');
    await station.authorize('T2');
    await partner.waitForCount(1);

    await reconfigure(daemon, webhooks(false));
    await partner.waitFor((r) => r[0]!.abortedAt !== undefined, 5000);
    await station.authorize('T3');
    await witness.waitForCount(3);
    expect(partner.requests).toHaveLength(1);
    // The interrupted attempt's outcome is recorded with the next batch of outcomes (within their 20 ms linger).
    const kept = await eventually(
      () => {
        const rows = deliveries(daemon, 'partner-a');
        return rows[0]?.last_error !== null && rows;
      },
      5000,
      'the interrupted attempt recorded',
    );
    expect(kept.map((d) => d.state)).toEqual(['pending', 'pending']);
    expect(kept[0]).toMatchObject({
      attempts: 1,
      last_error: 'interrupted: webhook disabled, removed or unsubscribed',
    });
    const status = await health(daemon);
    expect(executor(status.webhooks, 'partner-a', 'Authorize')).toMatchObject({ active: false, queueSize: 2 });

    partner.answer({ status: 200 });
    await reconfigure(daemon, webhooks(true));
    await partner.waitForCount(3);
    const publicKey = await jwksSigningKey(daemon);
    for (const r of partner.requests.slice(1)) await expectSignedWebhook(r, publicKey);
    expect(partner.requests.slice(1).map((r) => r.json().eventId)).toEqual([
      partner.requests[0]!.json().eventId,
      kept[1]!.event_id,
    ]);
    await eventually(
      () => deliveries(daemon, 'partner-a').every((d) => d.state === 'delivered'),
      5000,
      'resumed and delivered',
    );
  });

  it('reports queue size and request duration levels at the interface document thresholds on /health, /metrics and webhook status', async () => {
    const stuck = await t.receiver({ kind: 'hang' });
    const slow = await t.receiver({ status: 200, delayMs: 700 });
    const daemon = await t.daemon(
      [
        { id: 'stuck', url: stuck.url(), events: ['Authorize'] },
        { id: 'slow', url: slow.url(), events: ['ChargePointStatus'] },
      ],
      { requestTimeoutMs: 60_000 },
    );
    const station = await daemon.connect();
    await station.boot();
    expect((await health(daemon)).webhooks.status).toBe('ok');

    for (let i = 1; i <= 5; i += 1) await station.authorize(`T${i}`);
    let h = await health(daemon);
    expect(executor(h.webhooks, 'stuck', 'Authorize')).toMatchObject({ queueSize: 5, status: 'ok' });
    await station.authorize('T6');
    h = await health(daemon);
    expect(executor(h.webhooks, 'stuck', 'Authorize')).toMatchObject({ queueSize: 6, status: 'warning' });
    expect(h.status).toBe('warning');

    for (let i = 7; i <= 100; i += 1) await station.authorize(`T${i}`);
    expect(executor((await health(daemon)).webhooks, 'stuck', 'Authorize')).toMatchObject({
      queueSize: 100,
      status: 'warning',
    });
    await station.authorize('T101');
    h = await health(daemon);
    expect(executor(h.webhooks, 'stuck', 'Authorize')).toMatchObject({ queueSize: 101, status: 'critical' });
    expect(executor(h.webhooks, 'stuck', 'Authorize').lastDequeueAt).toMatch(/^\d{4}-.*[+-]\d{2}:\d{2}$/);
    expect(h.status).toBe('critical');

    await station.statusNotification({ connectorId: 1, status: 'Preparing' });
    await slow.waitForCount(1);
    const slowExecutor = await eventually(
      async () => {
        const e = executor((await health(daemon)).webhooks, 'slow', 'ChargePointStatus');
        return e.lastRequestDurationMs !== null ? e : undefined;
      },
      5000,
      'slow request recorded',
    );
    expect(slowExecutor.lastRequestDurationMs).toBeGreaterThan(500);
    expect(slowExecutor).toMatchObject({ queueSize: 0, status: 'warning' });

    const metrics = await (await fetch(`http://127.0.0.1:${daemon.daemon.httpPort}/metrics`)).text();
    expect(metrics).toContain('chargegate_webhook_queue_size{site="s1",webhook="stuck",event_type="Authorize"} 101');
    expect(metrics).toContain('chargegate_webhook_health_level{site="s1",webhook="stuck",event_type="Authorize"} 2');
    expect(metrics).toContain(
      'chargegate_webhook_health_level{site="s1",webhook="slow",event_type="ChargePointStatus"} 1',
    );
    expect(metrics).toMatch(
      /chargegate_webhook_attempts_total\{site="s1",webhook="slow",event_type="ChargePointStatus",outcome="delivered"\} 1/,
    );

    // The CLI is another process: it reads the same figures from the database.
    const cli = await runCliJson<{ status: string; executors: Executor[] }>([
      'webhook',
      'status',
      '--config',
      daemon.temp.configPath,
    ]);
    expect(cli.code).toBe(0);
    expect(cli.data.status).toBe('critical');
    expect(cli.data.executors.find((e) => e.webhookId === 'stuck')).toMatchObject({
      queueSize: 101,
      status: 'critical',
      active: true,
    });
    expect(cli.data.executors.find((e) => e.webhookId === 'slow')).toMatchObject({
      queueSize: 0,
      status: 'warning',
      lastRequestDurationMs: slowExecutor.lastRequestDurationMs,
    });
  }, 120_000);

  it('webhook test sends a signed test envelope of a subscribed event type through the delivery code and prints the answer', async () => {
    const partner = await t.receiver({ status: 202, body: 'thanks' });
    const daemon = await t.daemon([
      { id: 'partner-a', url: partner.url(), enabled: false, auth: { type: 'token', token: 'tk' } },
      { id: 'billing', url: partner.url(), events: ['StopTransaction'] },
      { id: 'fast', url: partner.url(), events: ['Authorize'], signature: { profile: 'rfc9421', alg: 'ed25519' } },
    ]);
    // A webhook not in the config sends nothing: its run goes beside the first.
    const [result, unknown] = await Promise.all([
      runCliJson<Record<string, unknown>>(['webhook', 'test', 'partner-a', '--config', daemon.temp.configPath]),
      runCliJson(['webhook', 'test', 'nobody', '--config', daemon.temp.configPath]),
    ]);
    expect(unknown).toMatchObject({ code: 1, data: { error: 'no webhook "nobody" in the config' } });
    expect(result.code).toBe(0);
    expect(result.data).toMatchObject({
      siteId: 's1',
      webhookId: 'partner-a',
      eventType: 'ChargePointStatus',
      delivered: true,
      status: 202,
      responseBody: 'thanks',
    });
    expect(partner.requests).toHaveLength(1);
    const envelope = await expectSignedWebhook(partner.requests[0]!, await jwksSigningKey(daemon));
    expect(envelope).toMatchObject({
      eventId: result.data.eventId,
      eventType: 'ChargePointStatus',
      siteId: 's1',
      test: true,
    });
    expect(envelope.payload).toEqual({
      stationId: 'chargegate-webhook-test',
      chargePointId: 'chargegate-webhook-test',
      connectorId: 1,
      status: 'Available',
      errorCode: 'NoError',
    });
    expect(partner.requests[0]!.headers.authorization).toBe('Token tk');
    expect(daemon.db.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(0);

    // Two webhooks' tests at once; their requests are told apart by event type.
    const [billing, fast] = await Promise.all([
      runCliJson<Record<string, unknown>>(['webhook', 'test', 'billing', '--config', daemon.temp.configPath]),
      runCli(['webhook', 'test', 'fast', '--config', daemon.temp.configPath]),
    ]);
    expect(partner.requests).toHaveLength(3);
    const [billingRequest, fastRequest] = ['StopTransaction', 'Authorize'].map((type) =>
      partner.requests.slice(1).find((r) => r.json().eventType === type)!,
    );

    // A webhook that only takes StopTransaction gets a StopTransaction-shaped test, as its receiver would parse it.
    expect(billing.data).toMatchObject({ eventType: 'StopTransaction', delivered: true });
    const stop = await expectSignedWebhook(billingRequest!, await jwksSigningKey(daemon));
    expect(stop).toMatchObject({ eventType: 'StopTransaction', test: true });
    expect(Object.keys(stop.payload as object)).toEqual([
      'stationId',
      'chargePointId',
      'connectorId',
      'idTag',
      'meterStart',
      'meterStop',
      'transactionId',
      'startedAt',
      'stoppedAt',
    ]);

    // An Ed25519 webhook's test is signed as its events are: rfc9421 ed25519, keyid the Ed25519 key's own kid.
    expect(fast.code).toBe(0);
    expect(fast.stdout).toContain(`POST ${partner.url()} (rfc9421 ed25519 signature, auth none)`);
    const jwksUrl = `http://127.0.0.1:${daemon.daemon.httpPort}/.well-known/jwks.json`;
    const ed25519Kid = (await fetchJwks(jwksUrl)).find((k) => k.kty === 'OKP')!.kid;
    expect(await kidCachingRfc9421Verifier(jwksUrl)(fastRequest!)).toBe(ed25519Kid);
    expect(fastRequest!.json()).toMatchObject({ eventType: 'Authorize', test: true });

    partner.answer({ status: 500, body: 'nope' });
    const failed = await runCliJson<Record<string, unknown>>([
      'webhook',
      'test',
      'partner-a',
      '--config',
      daemon.temp.configPath,
    ]);
    expect(failed.code).toBe(1);
    expect(failed.data).toMatchObject({ delivered: false, status: 500, responseBody: 'nope' });
  }, 120_000);

  it('a total partner outage is told everywhere: warning after 3 failures in a row, critical with dead letters (/health 503, webhook status, the dead-letter gauge)', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/webhook/events`;
    const daemon = await t.daemon([{ id: 'partner-a', url: closed, events: ['Authorize', 'StartTransaction'] }], {
      retryIntervalS: 0.1,
      maxRetries: 200,
    });
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('T1');
    const warned = await eventually(
      async () => {
        const h = await health(daemon);
        const e = executor(h.webhooks, 'partner-a', 'Authorize') as Executor & {
          consecutiveFailures: number;
          reasons: string[];
        };
        return e.consecutiveFailures >= 3 && e.consecutiveFailures < 100 ? { h, e } : undefined;
      },
      10_000,
      '3 failures in a row',
    );
    expect(warned.e.status).toBe('warning');
    expect(warned.e.reasons).toContainEqual(expect.stringMatching(/^failed attempts in a row \d+ > 2$/));

    // Dead letters from here on: maxRetries lowered by a reload (SIGHUP) makes the next failure the last.
    await reconfigure(daemon, [{ id: 'partner-a', url: closed, events: ['Authorize', 'StartTransaction'] }], {
      retryIntervalS: 0.1,
      maxRetries: 1,
    });
    await station.authorize('T2');
    const body = await eventually(
      async () => {
        const r = await fetch(`http://127.0.0.1:${daemon.daemon.httpPort}/health`);
        const b = (await r.json()) as { status: string; webhooks: WebhooksHealth & { deadLetters: number } };
        return b.webhooks.deadLetters === 2 ? (expect(r.status).toBe(503), b) : undefined;
      },
      10_000,
      '/health 503 with both dead letters',
    );
    expect(body.status).toBe('critical');
    const critical = executor(body.webhooks, 'partner-a', 'Authorize') as Executor & {
      deadLetters: number;
      reasons: string[];
    };
    expect(critical).toMatchObject({ status: 'critical', deadLetters: 2 });
    expect(critical.reasons).toContain('2 dead letters not replayed');

    const status = await runCliJson<{
      status: string;
      deadLetters: number;
      executors: Array<Executor & { deadLetters: number }>;
    }>(['webhook', 'status', '--config', daemon.temp.configPath]);
    expect(status.data).toMatchObject({ status: 'critical', deadLetters: 2 });
    const metrics = await (await fetch(`http://127.0.0.1:${daemon.daemon.httpPort}/metrics`)).text();
    expect(metrics).toMatch(
      /^chargegate_webhook_dead_letters\{site="s1",webhook="partner-a",event_type="Authorize"\} 2$/m,
    );

    // The partner is back and the dead letters replayed: delivered, and the level is ok again.
    const partner = await t.receiver();
    await reconfigure(daemon, [{ id: 'partner-a', url: partner.url(), events: ['Authorize', 'StartTransaction'] }], {
      retryIntervalS: 0.1,
      maxRetries: 1,
    });
    expect((await runCliJson(['deadletter', 'replay', '--all', '--config', daemon.temp.configPath])).code).toBe(0);
    await partner.waitForCount(2);
    await eventually(
      async () => (await fetch(`http://127.0.0.1:${daemon.daemon.httpPort}/health`)).status === 200,
      10_000,
      '/health 200 after the replay',
    );
  });
});

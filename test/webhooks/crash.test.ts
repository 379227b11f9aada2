import { createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/index.js';
import { exitOf, type SpawnedDaemon } from '../support/cli.js';
import { receiverForTest, spawnDaemonForTest, tempSiteForTest } from '../support/for-test.js';
import { connectStation } from '../support/station.js';
import { fetchJwks } from '../support/webhook-verifier.js';
import { eventually, expectSignedWebhook, webhookConfig } from './harness.js';

const EVENTS = 2000;

/** A daemon for the running test; a start under this load may take a while. */
const start = (configPath: string): Promise<SpawnedDaemon> =>
  spawnDaemonForTest(configPath, { readyTimeoutMs: 60_000 });

describe('crash while stations commit (kill -9 at random points)', () => {
  it('delivers every event a station was told "done" for, across three kills mid-run', async () => {
    const partner = await receiverForTest({ status: 200 });
    const config = webhookConfig([{ id: 'partner-a', url: partner.url(), events: ['Authorize'] }], {
      queueCapacity: 100_000,
    });
    const stationIds = ['CP001', 'CP002', 'CP003', 'CP004'];
    const stations = stationIds.map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] }));
    const temp = tempSiteForTest({
      log: { level: 'info' },
      ...config,
      sites: [
        { id: 's1', stations, meters: [], webhooks: (config.sites as Array<{ webhooks: unknown }>)[0]!.webhooks },
      ],
    });

    // Each Authorize commits one event whose idTag is unique: the tags answered are the events acknowledged.
    const acknowledged = new Set<string>();
    let next = 0;
    // A seeded sequence of kill points, so a failure can be replayed.
    let seed = 20261124;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let run = 0; acknowledged.size < EVENTS; run += 1) {
      const daemon = await start(temp.configPath);
      const connected = await Promise.all(
        stationIds.map((id) => connectStation(daemon.ready.ocppUrl, id, undefined, { callTimeoutMs: 5_000 })),
      );
      let killed = false;
      const load = Promise.all(
        connected.map(async (station) => {
          await station.boot();
          while (!killed && acknowledged.size < EVENTS) {
            const tag = `T${next++}`;
            try {
              await station.authorize(tag);
              acknowledged.add(tag);
            } catch {
              return; // the daemon died under this call: not acknowledged
            }
          }
        }),
      ).catch(() => undefined);
      if (run < 3) {
        await new Promise((resolve) => setTimeout(resolve, 200 + random() * 800));
        killed = true;
        daemon.child.kill('SIGKILL');
        await exitOf(daemon.child);
      }
      await load;
      await Promise.all(connected.map((station) => station.close().catch(() => undefined)));
      if (run >= 3) {
        const tags = () => new Set(partner.requests.map((r) => (r.json().payload as { idTag: string }).idTag));
        await partner.waitFor(() => {
          const delivered = tags();
          return [...acknowledged].every((tag) => delivered.has(tag));
        }, 90_000);
        expect([...acknowledged].filter((tag) => !tags().has(tag))).toEqual([]);
        daemon.child.kill('SIGTERM');
        await exitOf(daemon.child);
      }
    }
    expect(acknowledged.size).toBeGreaterThanOrEqual(EVENTS);
  }, 240_000);
});

describe('crash during delivery (kill -9)', () => {
  it('delivers every one of 2000 committed events at least once after a restart, every attempt signed and well-formed', async () => {
    // The receiver answers slowly, and holds its answers until all events are committed, so the kill lands
    // mid-delivery.
    let gate: (() => void) | undefined;
    const gateOpen = new Promise<void>((resolve) => (gate = resolve));
    const partner = await receiverForTest(async () => {
      await gateOpen;
      return { status: 200, delayMs: 3 };
    });
    const config = webhookConfig(
      [{ id: 'partner-a', url: partner.url(), events: ['Authorize', 'ChargePointStatus'] }],
      { queueCapacity: EVENTS, requestTimeoutMs: 60_000 },
    );
    const stationIds = ['CP001', 'CP002', 'CP003', 'CP004'];
    const stations = stationIds.map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1, 2] }] }));
    const temp = tempSiteForTest({
      log: { level: 'info' },
      ...config,
      sites: [
        { id: 's1', stations, meters: [], webhooks: (config.sites as Array<{ webhooks: unknown }>)[0]!.webhooks },
      ],
    });

    const first = await start(temp.configPath);
    // Four stations in parallel: each loop commits an Authorize and a ChargePointStatus event.
    const connected = await Promise.all(stationIds.map((id) => connectStation(first.ready.ocppUrl, id)));
    await Promise.all(
      connected.map(async (station) => {
        await station.boot();
        for (let i = 0; i < EVENTS / 2 / connected.length; i += 1) {
          await station.authorize(`${station.identity}-${i}`);
          await station.statusNotification({ connectorId: 1, status: i % 2 ? 'Charging' : 'SuspendedEV' });
        }
      }),
    );
    gate!();
    await partner.waitForCount(300, 60_000);
    first.child.kill('SIGKILL');
    await exitOf(first.child);
    await Promise.all(connected.map((station) => station.close().catch(() => undefined)));
    const atKill = partner.requests.length;
    expect(atKill).toBeLessThan(EVENTS);
    const beforeKill = new Set(partner.requests.map((r) => r.json().eventId as string));

    const second = await start(temp.configPath);
    const db = openDatabase(temp.dataDir);
    try {
      const eventIds = db.prepare('SELECT event_id FROM events').pluck().all() as string[];
      expect(eventIds).toHaveLength(EVENTS);
      await partner.waitFor(
        (requests) => new Set(requests.map((r) => r.json().eventId as string)).size >= EVENTS,
        90_000,
      );
      const received = new Set(partner.requests.map((r) => r.json().eventId as string));
      expect(eventIds.filter((id) => !received.has(id))).toEqual([]);

      const jwks = await fetchJwks(`http://127.0.0.1:${second.ready.httpPort}/.well-known/jwks.json`);
      const publicKey = createPublicKey({ key: jwks.find((k) => k.kid === 'sign') as never, format: 'jwk' });
      for (const request of partner.requests) await expectSignedWebhook(request, publicKey);

      // Attempts were counted before sending, so the outbox never shows fewer attempts than requests arrived.
      const rows = db
        .prepare(
          'SELECT e.event_id AS eventId, d.attempts, d.state FROM deliveries d JOIN events e ON e.seq = d.event_seq',
        )
        .all() as Array<{
        eventId: string;
        attempts: number;
        state: string;
      }>;
      const arrivals = new Map<string, number>();
      for (const request of partner.requests)
        arrivals.set(request.json().eventId as string, (arrivals.get(request.json().eventId as string) ?? 0) + 1);
      for (const row of rows) expect(arrivals.get(row.eventId) ?? 0, row.eventId).toBeLessThanOrEqual(row.attempts);
      expect(rows.filter((r) => r.state !== 'delivered' && r.state !== 'pending')).toEqual([]);
      // Delivered marks lost with the process (held for a later commit, or in flight) repeat those deliveries with
      // the same eventId; nothing else arrives twice.
      const repeated = [...arrivals].filter(([, n]) => n > 1).map(([eventId]) => eventId);
      expect(repeated.filter((eventId) => !beforeKill.has(eventId))).toEqual([]);
    } finally {
      db.close();
    }
    second.child.kill('SIGTERM');
    await exitOf(second.child);
  }, 180_000);
});

describe('kill -9 with delivery bookkeeping held for a later commit', () => {
  it('a quiet site: the delivered marks waiting for a commit to share are lost, those events are sent again with the same eventId, none is lost', async () => {
    const partner = await receiverForTest({ status: 200 });
    const temp = tempSiteForTest({
      log: { level: 'info' },
      ...webhookConfig([{ id: 'partner-a', url: partner.url(), events: ['Authorize'] }]),
    });
    const first = await start(temp.configPath);
    const station = await connectStation(first.ready.ocppUrl, 'CP001');
    await station.boot();
    for (let i = 0; i < 20; i += 1) await station.authorize(`Q${i}`);
    // Delivered, and no station call since: no commit for the delivered marks to ride, so they wait (docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear); the kill lands now.
    await partner.waitFor((requests) => new Set(requests.map((r) => r.json().eventId as string)).size >= 20, 30_000);
    first.child.kill('SIGKILL');
    await exitOf(first.child);
    await station.close().catch(() => undefined);
    const receivedBeforeKill = new Set(partner.requests.map((r) => r.json().eventId as string));

    const db = openDatabase(temp.dataDir);
    try {
      const byState = (state: string) =>
        db
          .prepare('SELECT e.event_id FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.state = ?')
          .pluck()
          .all(state) as string[];
      // What the partner has but the outbox still holds as pending: its mark was lost with the process.
      const markLost = byState('pending');
      expect(markLost.filter((eventId) => !receivedBeforeKill.has(eventId))).toEqual([]);

      const second = await start(temp.configPath);
      try {
        const count = (eventId: string) => partner.requests.filter((r) => r.json().eventId === eventId).length;
        await partner.waitFor(() => markLost.every((eventId) => count(eventId) >= 2), 30_000);
        await eventually(() => byState('pending').length === 0, 30_000, 'every delivery marked delivered');
        const all = byState('delivered');
        expect(all).toHaveLength(20);
        expect(all.filter((eventId) => count(eventId) === 0)).toEqual([]);
        // Sent again only what had lost its mark.
        expect(all.filter((eventId) => count(eventId) > 1 && !markLost.includes(eventId))).toEqual([]);
      } finally {
        second.child.kill('SIGTERM');
        await exitOf(second.child);
      }
    } finally {
      db.close();
    }
  }, 120_000);
});

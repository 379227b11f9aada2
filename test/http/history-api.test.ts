import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { putIdTag } from '../../src/authorization/index.js';
import { formatZonedTimestamp } from '../../src/time/index.js';
import type { SimulatedStation } from '../support/station.js';
import { eventually } from '../support/daemon.js';
import { freePort } from '../support/free-port.js';
import { API_GROUPS, API_SITES, startApiDaemon, type ApiDaemon } from './api-harness.js';

interface EventPage {
  events: Array<{
    cursor: string;
    eventId: string;
    eventType: string;
    siteId: string;
    timestamp: string;
    occurredAt: string;
    payload: Record<string, unknown>;
  }>;
  cursor: string;
}
interface TransactionJson {
  transactionId: number;
  stationId: string;
  chargePointId: string;
  startedAt: string;
  stoppedAt: string | null;
  meterStart: number;
  meterStop: number | null;
  reason: string | null;
}

const DAY_MS = 86_400_000;
/** November 2026 in Brussels: 1 Nov 00:00 +01:00 to 1 Dec 00:00 +01:00. */
const MONTH = { from: '2026-11-01T00:00:00+01:00', to: '2026-12-01T00:00:00+01:00' };

/**
 * Catch-up and history (contract section 8) against real stations: a partner away for three days pages through
 * GET /events and gets every event the webhooks could not bring; a month of sessions reconciles through
 * GET /transactions. Each sees only what its application's groups reach.
 */
describe('history API: GET /events, GET /transactions, GET /charge-points/{id}', () => {
  let api: ApiDaemon;
  let cp001: SimulatedStation;
  let cp002: SimulatedStation;
  const sessions: Array<{ id: number; startedAt: Date; stoppedAt: Date; whStart: number; whStop: number }> = [];
  // Applications are written by this process's own connection: made before the daemon gets busy, since a write
  // here would wait on the daemon's open group commit in the same event loop.
  const apps: Record<string, { clientId: string; clientSecret: string }> = {};

  beforeAll(async () => {
    // The partner's endpoint is down the whole time: every event dead-letters after one retry.
    const down = { id: 'partner', url: `http://127.0.0.1:${await freePort()}/webhook/events` };
    api = await startApiDaemon({
      sites: API_SITES.map((site) => ({ ...site, webhooks: [down] })),
      groups: [
        ...API_GROUPS,
        { id: 'events-all', scope: 'company:acme', permissions: ['events:read', 'charge-points:read'] },
        { id: 'events-s2', scope: 'site:s2', permissions: ['events:read'] },
      ],
      webhookDelivery: { retryIntervalS: 0.05, maxRetries: 1 },
    });
    putIdTag(api.db, { idTag: 'TAG-1', status: 'Accepted', expiresAt: null, siteId: null });
    for (const group of ['events-all', 'events-s2', 'ops', 'viewer-s1', 'station-cp002'])
      apps[group] = api.createApp(group);
    cp001 = await api.connect('CP001');
    await cp001.boot();
    cp002 = await api.connect('CP002');
    await cp002.boot();
    // One session a day from 29 October to 30 November (the station's own times), energy rising 1 kWh each.
    let wh = 100_000;
    for (let day = 0; day < 33; day += 1) {
      const startedAt = new Date(Date.parse('2026-10-29T08:00:00Z') + day * DAY_MS);
      const stoppedAt = new Date(startedAt.getTime() + 2 * 3_600_000);
      const id = await cp001.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: wh, timestamp: startedAt });
      await cp001.stopTransaction({
        transactionId: id,
        meterStop: wh + 1000,
        reason: 'EVDisconnected',
        timestamp: stoppedAt,
      });
      sessions.push({ id, startedAt, stoppedAt, whStart: wh, whStop: wh + 1000 });
      wh += 1000;
    }
    // An open one on the other site.
    await cp002.startTransaction({
      connectorId: 1,
      idTag: 'TAG-1',
      meterStart: 5000,
      timestamp: new Date('2026-11-15T10:00:00Z'),
    });
  }, 120_000);
  afterAll(() => api.stop());

  const get = <T>(path: string, token: string) =>
    api.call('GET', path, { token }) as Promise<{ status: number; body: T }>;

  it('a partner back from an outage pages through GET /events and gets every committed event, in order, as its webhook would have', async () => {
    const token = await api.token(apps['events-all']!);
    const committed = api.db
      .prepare('SELECT seq, event_id, event_type, site_id, payload FROM events ORDER BY seq')
      .all() as Array<{
      seq: number;
      event_id: string;
      event_type: string;
      site_id: string;
      payload: string;
    }>;
    expect(committed.length).toBeGreaterThan(100);
    const seen: EventPage['events'] = [];
    let after = '';
    for (;;) {
      const page = await get<EventPage>(`/events?after=${after}&limit=25`, token);
      expect(page.status).toBe(200);
      expect(page.body.events.length).toBeLessThanOrEqual(25);
      seen.push(...page.body.events);
      if (page.body.cursor === after) break;
      after = page.body.cursor;
    }
    expect(seen.map((e) => e.eventId)).toEqual(committed.map((c) => c.event_id));
    expect(seen.map((e) => e.cursor)).toEqual(committed.map((c) => String(c.seq)));
    for (const [i, event] of seen.entries()) {
      expect(Object.keys(event)).toEqual([
        'cursor',
        'eventId',
        'eventType',
        'siteId',
        'timestamp',
        'occurredAt',
        'payload',
      ]);
      expect(event).toMatchObject({
        eventType: committed[i]!.event_type,
        siteId: committed[i]!.site_id,
        payload: JSON.parse(committed[i]!.payload) as object,
      });
    }
    // The station's own time, as in the webhook.
    const firstStart = seen.find((e) => e.eventType === 'StartTransaction')!;
    expect(firstStart.occurredAt).toBe(formatZonedTimestamp(sessions[0]!.startedAt, 'Europe/Brussels'));
    // Nothing new: the same cursor back and no events.
    expect((await get<EventPage>(`/events?after=${after}`, token)).body).toEqual({ events: [], cursor: after });
    // Every webhook delivery dead-lettered during the outage: the catch-up needed no replay.
    const undelivered = () => api.db.prepare('SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state').all();
    await eventually(
      () => JSON.stringify(undelivered()) === JSON.stringify([{ state: 'dead', n: committed.length }]),
      30_000,
      'every delivery dead',
    );
  });

  it("GET /events shows only what the application's groups reach, and needs events:read", async () => {
    const s2 = await get<EventPage>('/events?limit=1000', await api.token(apps['events-s2']!));
    expect(s2.status).toBe(200);
    expect(s2.body.events.length).toBeGreaterThan(0);
    expect(new Set(s2.body.events.map((e) => e.siteId))).toEqual(new Set(['s2']));
    const readOnly = await get<Record<string, unknown>>('/events', await api.token(apps.ops!));
    expect(readOnly.status).toBe(403);
    const bad = await get<Record<string, unknown>>('/events?after=abc&limit=0', await api.token(apps['events-all']!));
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request' });
  });

  it('cursors round-trip: an after past the largest safe integer is a 400 naming after, and every cursor handed back is accepted', async () => {
    const token = await api.token(apps['events-all']!);
    for (const after of ['9'.repeat(29), String(Number.MAX_SAFE_INTEGER + 1)]) {
      for (const path of ['/events', '/transactions']) {
        const refused = await get<Record<string, unknown>>(`${path}?after=${after}`, token);
        expect(refused.status).toBe(400);
        expect(refused.body).toMatchObject({ error: 'invalid_request', problems: [{ path: 'after' }] });
        expect(refused.body.message).toMatch(/after/);
      }
    }
    // The largest cursor accepted comes back as it went, and is accepted again.
    const last = await get<EventPage>(`/events?after=${Number.MAX_SAFE_INTEGER}`, token);
    expect(last.body).toEqual({ events: [], cursor: String(Number.MAX_SAFE_INTEGER) });
    expect((await get<EventPage>(`/events?after=${last.body.cursor}`, token)).status).toBe(200);
  });

  it('from and to are instants in the years 0000 to 9999: one an offset carries past them is a 400 naming it', async () => {
    const token = await api.token(apps['events-all']!);
    const refused = async (query: string) => {
      const answer = await get<Record<string, unknown>>(`/transactions?${query}`, token);
      expect(answer.status).toBe(400);
      return answer.body;
    };
    expect(await refused(`from=${encodeURIComponent('9999-12-31T23:00:00-05:00')}`)).toMatchObject({
      error: 'invalid_request',
      problems: [{ path: 'from' }],
    });
    expect(await refused(`to=${encodeURIComponent('0000-01-01T00:30:00+01:00')}`)).toMatchObject({
      error: 'invalid_request',
      problems: [{ path: 'to' }],
    });
    // The bounds themselves: nothing starts after the last instant, everything before it.
    const all = await get<TransactionJson[]>('/transactions', token);
    expect(
      (await get<TransactionJson[]>(`/transactions?from=${encodeURIComponent('9999-12-31T23:59:59.999Z')}`, token))
        .body,
    ).toEqual([]);
    const before = await get<TransactionJson[]>(
      `/transactions?from=0000-01-01T00:00:00Z&to=${encodeURIComponent('9999-12-31T23:59:59.999Z')}`,
      token,
    );
    expect(before.body).toEqual(all.body);
    expect(all.body).toHaveLength(34);
  });

  it('a month of sessions reconciles through GET /transactions: times, energy, paging, status', async () => {
    const token = await api.token(apps['events-all']!);
    const november = sessions.filter((s) => s.startedAt >= new Date(MONTH.from) && s.startedAt < new Date(MONTH.to));
    expect(november).toHaveLength(30);
    const pages: TransactionJson[] = [];
    let after = 0;
    for (;;) {
      const page = await get<TransactionJson[]>(
        `/transactions?from=${encodeURIComponent(MONTH.from)}&to=${encodeURIComponent(MONTH.to)}&status=stopped&limit=7&after=${after}`,
        token,
      );
      expect(page.status).toBe(200);
      if (page.body.length === 0) break;
      pages.push(...page.body);
      after = page.body.at(-1)!.transactionId;
    }
    expect(pages.map((t) => t.transactionId)).toEqual(november.map((s) => s.id));
    expect(pages[0]).toEqual({
      transactionId: november[0]!.id,
      stationId: 'CP001',
      chargePointId: 'CP001-A',
      connectorId: 1,
      idTag: 'TAG-1',
      startedAt: '2026-11-01T09:00:00.000+01:00',
      stoppedAt: '2026-11-01T11:00:00.000+01:00',
      meterStart: november[0]!.whStart / 1000,
      meterStop: november[0]!.whStop / 1000,
      reason: 'EVDisconnected',
    });
    const energy = pages.reduce((kWh, t) => kWh + (t.meterStop! - t.meterStart), 0);
    expect(energy).toBeCloseTo(30);
    const open = await get<TransactionJson[]>('/transactions?status=open', token);
    expect(open.body.map((t) => [t.stationId, t.stoppedAt, t.meterStop])).toEqual([['CP002', null, null]]);
    // Reach: a site-s1 viewer sees no CP002 session.
    const viewer = await get<TransactionJson[]>('/transactions?status=open', await api.token(apps['viewer-s1']!));
    expect(viewer.body).toEqual([]);
    // A page is filled from what the application reaches: 33 CP001 sessions before it do not hide CP002's.
    const cp002 = await get<TransactionJson[]>('/transactions?limit=5', await api.token(apps['station-cp002']!));
    expect(cp002.body.map((t) => t.stationId)).toEqual(['CP002']);
    expect((await get<Record<string, unknown>>('/transactions?from=yesterday', token)).status).toBe(400);
  });

  it('GET /charge-points/{id} answers one charge point as the list shows it; 404 unknown, 403 out of reach', async () => {
    const token = await api.token(apps['viewer-s1']!);
    const list = await get<Array<{ chargePointId: string }>>('/charge-points', token);
    const one = await get<Record<string, unknown>>('/charge-points/CP001-A', token);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(list.body.find((cp) => cp.chargePointId === 'CP001-A'));
    expect((await get('/charge-points/NOPE', token)).status).toBe(404);
    expect((await get('/charge-points/CP002-A', token)).status).toBe(403);
  });
});

/**
 * Issue 35: an application that reaches little of a long history. Its reach is part of the one query that reads a
 * page, so the daemon runs one statement on transactions per request however few rows the application may see.
 */
describe('GET /transactions on a long history', () => {
  const ROWS = 25_000;
  let api: ApiDaemon;
  /** CP002's transactions: the three oldest, then one every 5,000. */
  let cp002Ids: number[];
  let allIds: number[];
  const apps: Record<string, { clientId: string; clientSecret: string }> = {};

  beforeAll(async () => {
    api = await startApiDaemon();
    for (const group of ['ops', 'viewer-s1', 'station-cp002', 'only-cp001-b']) apps[group] = api.createApp(group);
    const insert = api.db.prepare<[string, string, string, number, string, string | null]>(
      `INSERT INTO transactions (site_id, station_id, charge_point_id, connector_id, id_tag, meter_start_wh, started_at, source, meter_stop_wh, stopped_at)
       VALUES (?, ?, ?, ?, 'TAG-1', 0, ?, 'ocpp', 1000, ?)`,
    );
    // One SQLite transaction, straight into the daemon's database: the history of a busy year.
    api.db.transaction(() => {
      for (let i = 0; i < ROWS; i += 1) {
        const startedAt = new Date(Date.parse('2026-01-01T00:00:00Z') + i * 600_000).toISOString();
        const stoppedAt = i === ROWS - 1 ? null : startedAt;
        if (i < 3 || i % 5000 === 4999) insert.run('s2', 'CP002', 'CP002-A', 1, startedAt, stoppedAt);
        else if (i % 2 === 0) insert.run('s1', 'CP001', 'CP001-A', 1, startedAt, stoppedAt);
        else insert.run('s1', 'CP001', 'CP001-B', 2, startedAt, stoppedAt);
      }
    })();
    allIds = api.db.prepare<[], number>('SELECT id FROM transactions ORDER BY id').pluck().all();
    cp002Ids = api.db
      .prepare<[], number>("SELECT id FROM transactions WHERE station_id = 'CP002' ORDER BY id")
      .pluck()
      .all();
    expect(allIds).toHaveLength(ROWS);
    expect(cp002Ids).toHaveLength(8);
  });
  afterAll(() => api.stop());

  const list = (path: string, token: string) =>
    api.call('GET', path, { token }) as Promise<{ status: number; body: TransactionJson[] }>;

  /**
   * The statements on transactions the daemon (in this process, through the same better-sqlite3) runs while fn runs.
   */
  async function transactionQueriesDuring<T>(fn: () => Promise<T>): Promise<{ result: T; queries: number }> {
    const statementPrototype = Object.getPrototypeOf(api.db.prepare('SELECT 1')) as {
      all: () => unknown[];
      iterate: () => Iterable<unknown>;
    };
    const all = vi.spyOn(statementPrototype, 'all');
    const iterate = vi.spyOn(statementPrototype, 'iterate');
    try {
      const result = await fn();
      const contexts = [...all.mock.contexts, ...iterate.mock.contexts] as Array<{ source: string }>;
      return { result, queries: contexts.filter((s) => /FROM transactions\b/.test(s.source)).length };
    } finally {
      all.mockRestore();
      iterate.mockRestore();
    }
  }

  /** Pages with limit=1 to the end (a short page), counting the statements each request ran. */
  async function pageOneByOne(token: string): Promise<{ ids: number[]; queriesPerRequest: number[] }> {
    const ids: number[] = [];
    const queriesPerRequest: number[] = [];
    let after = 0;
    for (;;) {
      const { result: page, queries } = await transactionQueriesDuring(() =>
        list(`/transactions?limit=1&after=${after}`, token),
      );
      expect(page.status).toBe(200);
      queriesPerRequest.push(queries);
      if (page.body.length === 0) return { ids, queriesPerRequest };
      ids.push(page.body[0]!.transactionId);
      after = page.body[0]!.transactionId;
    }
  }

  it('a station-wide application pages one by one through 25,000 rows: its 8 rows exactly once, in order, one query per request', async () => {
    const { ids, queriesPerRequest } = await pageOneByOne(await api.token(apps['station-cp002']!));
    expect(ids).toEqual(cp002Ids);
    expect(queriesPerRequest).toEqual(cp002Ids.map(() => 1).concat(1));
  });

  it('a charge point, a site and the company each get their own rows, one query per page', async () => {
    const cp001B = api.db
      .prepare<[], number>("SELECT id FROM transactions WHERE charge_point_id = 'CP001-B' ORDER BY id")
      .pluck()
      .all();
    const token = await api.token(apps['only-cp001-b']!);
    const { result: page, queries } = await transactionQueriesDuring(() =>
      list(`/transactions?limit=10000&after=${cp001B[99]}`, token),
    );
    expect(page.body.map((t) => t.transactionId)).toEqual(cp001B.slice(100, 10_100));
    expect(queries).toBe(1);
    // Site s1 holds all but CP002's rows; the one open transaction, the last, is CP002's: status filters in the same
    // query.
    const s1Token = await api.token(apps['viewer-s1']!);
    const site = await transactionQueriesDuring(() => list('/transactions?limit=5', s1Token));
    expect(site.result.body.map((t) => t.transactionId)).toEqual(allIds.slice(3, 8));
    expect(site.queries).toBe(1);
    expect((await list('/transactions?status=open', s1Token)).body).toEqual([]);
    const stationToken = await api.token(apps['station-cp002']!);
    expect((await list('/transactions?status=open', stationToken)).body.map((t) => t.transactionId)).toEqual([
      allIds.at(-1),
    ]);
    const opsToken = await api.token(apps.ops!);
    const company = await transactionQueriesDuring(() => list(`/transactions?limit=3&after=${allIds[1]}`, opsToken));
    expect(company.queries).toBe(1);
    expect(company.result.body.map((t) => t.transactionId)).toEqual(allIds.slice(2, 5));
    // CP002 has nothing in this window: the answer is empty, still from one query.
    const window = `&from=${encodeURIComponent('2026-01-02T00:00:00Z')}&to=${encodeURIComponent('2026-01-30T00:00:00Z')}`;
    const none = await transactionQueriesDuring(() => list(`/transactions?limit=1${window}`, stationToken));
    expect(none.result.body).toEqual([]);
    expect(none.queries).toBe(1);
  });
});

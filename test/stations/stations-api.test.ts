import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiDaemon, type ApiDaemon } from '../http/api-harness.js';
import type { SimulatedStation } from '../support/station.js';
import { StationV201 } from '../support/station-v201.js';

/** Contract 11.1 through the HTTP API: real ocpp-rpc stations (1.6 and 2.0.1), real tokens, a real daemon. */

const SITES = [
  {
    id: 's1',
    stations: [
      { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1, 2] }] },
      {
        id: 'CP201',
        chargePoints: [
          { id: 'CP201-A', connectors: [1] },
          { id: 'CP201-B', connectors: [2] },
        ],
      },
    ],
    meters: [],
    webhooks: [],
  },
  {
    id: 's2',
    stations: [{ id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] }],
    meters: [],
    webhooks: [],
  },
];

const GROUPS = [
  { id: 'operators', scope: 'company:acme', permissions: ['stations:read', 'stations:operate'] },
  { id: 'readers', scope: 'company:acme', permissions: ['stations:read'] },
  { id: 'site-s2', scope: 'site:s2', permissions: ['stations:read', 'stations:operate'] },
  { id: 'charge-point-only', scope: 'chargePoint:CP001-A', permissions: ['stations:read', 'stations:operate'] },
  { id: 'charge-points', scope: 'company:acme', permissions: ['charge-points:read', 'charge-points:control'] },
];

const CALL_TIMEOUT_MS = 1_000;

describe('stations API', () => {
  let api: ApiDaemon;
  let cp001: SimulatedStation;
  let cp201: StationV201;
  let operator: string;
  let operatorClientId: string;

  beforeAll(async () => {
    api = await startApiDaemon({
      ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: CALL_TIMEOUT_MS },
      sites: SITES,
      groups: GROUPS,
    });
    cp001 = await api.connect('CP001');
    await cp001.boot({
      chargePointVendor: 'Alfen',
      chargePointModel: 'Eve',
      firmwareVersion: '4.2',
      chargeBoxSerialNumber: 'SN-1',
    });
    await cp001.statusNotification({ connectorId: 1, status: 'Available' });
    cp201 = await StationV201.connect(api.url, 'CP201');
    await cp201.boot();
    const operatorApp = api.createApp('operators');
    operatorClientId = operatorApp.clientId;
    operator = await api.token(operatorApp);
  });
  afterAll(async () => {
    await cp201.close().catch(() => undefined);
    await api.stop();
  });

  const post = (path: string, body?: unknown, token = operator) =>
    api.call('POST', path, { token, ...(body !== undefined && { body }) });

  it('lists what each station is: protocol, connection, the last BootNotification, connectors', async () => {
    const listed = await api.call('GET', '/stations', { token: operator });
    expect(listed.status).toBe(200);
    const byId = new Map((listed.body as unknown as Array<{ id: string }>).map((s) => [s.id, s]));
    expect(byId.get('CP001')).toEqual({
      id: 'CP001',
      site: 's1',
      protocol: 'ocpp1.6',
      connected: true,
      lastSeen: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      vendor: 'Alfen',
      model: 'Eve',
      serialNumber: 'SN-1',
      firmwareVersion: '4.2',
      connectors: [
        { connectorId: 1, chargePointId: 'CP001-A', status: 'Available', errorCode: 'NoError' },
        { connectorId: 2, chargePointId: 'CP001-A', status: 'Unavailable', errorCode: 'NoError' },
      ],
      operation: null,
    });
    expect(byId.get('CP201')).toMatchObject({
      protocol: 'ocpp2.0.1',
      connected: true,
      vendor: 'ACME',
      model: 'Wallbox 2.0.1',
      firmwareVersion: '2.1.0',
    });
    expect(byId.get('CP002')).toMatchObject({ site: 's2', protocol: null, connected: false, lastSeen: null });
  });

  it('resets a 1.6 station Soft or Hard and a 2.0.1 one OnIdle or Immediate; GET /stations/{id} shows who asked', async () => {
    const resets16: unknown[] = [];
    cp001.handle('Reset', (params) => (resets16.push(params), { status: 'Accepted' }));
    const resets201: unknown[] = [];
    cp201.handle('Reset', (params) => (resets201.push(params), { status: 'Scheduled' }));

    const soft = await post('/stations/CP001/reset', { type: 'soft' });
    expect(soft).toMatchObject({ status: 200, body: { stationId: 'CP001', action: 'Reset', status: 'Accepted' } });
    expect((await post('/stations/CP001/reset', { type: 'hard' })).status).toBe(200);
    expect(resets16).toEqual([{ type: 'Soft' }, { type: 'Hard' }]);

    const onIdle = await post('/stations/CP201/reset', {});
    expect(onIdle).toMatchObject({ status: 200, body: { stationId: 'CP201', action: 'Reset', status: 'Scheduled' } });
    await post('/stations/CP201/reset', { type: 'hard' });
    expect(resets201).toEqual([{ type: 'OnIdle' }, { type: 'Immediate' }]);

    const shown = await api.call('GET', '/stations/CP001', { token: operator });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ id: 'CP001', connected: true, operation: null, baseReport: null });
    expect(shown.body.operations).toEqual([
      {
        at: expect.any(String),
        who: operatorClientId,
        action: 'Reset',
        request: { hard: true },
        answer: { status: 'Accepted' },
        error: null,
      },
      expect.objectContaining({ action: 'Reset', request: { hard: false } }),
    ]);
    expect(api.logged('station operation done')).toContainEqual(
      expect.objectContaining({ stationId: 'CP201', action: 'Reset', status: 'Scheduled' }),
    );
  });

  it('a token with only stations:read lists and reads the configuration, gets 403 for every other operation; one without cannot list', async () => {
    const reader = await api.token(api.createApp('readers'));
    expect((await api.call('GET', '/stations', { token: reader })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', 'reset', {}],
      ['POST', 'unlock', { connectorId: 1 }],
      ['POST', 'availability', { operative: true }],
      ['POST', 'trigger', { message: 'Heartbeat' }],
      ['POST', 'clear-cache', undefined],
      ['POST', 'report', undefined],
      ['PUT', 'configuration', { key: 'HeartbeatInterval', value: '60' }],
    ] as const) {
      const refused = await api.call(method, `/stations/CP001/${path}`, {
        token: reader,
        ...(body !== undefined && { body }),
      });
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body).toMatchObject({ error: 'insufficient_scope' });
      expect(refused.headers.get('www-authenticate')).toContain('stations:operate');
    }
    // Reading the configuration is a read (contract 11.1).
    cp001.handle('GetConfiguration', () => ({
      configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }],
    }));
    expect(
      await api.call('GET', '/stations/CP001/configuration?key=HeartbeatInterval', { token: reader }),
    ).toMatchObject({
      status: 200,
      body: { action: 'GetConfiguration', result: { configurationKey: [{ key: 'HeartbeatInterval', value: '300' }] } },
    });
    const chargePointsOnly = await api.token(api.createApp('charge-points'));
    expect(await api.call('GET', '/stations', { token: chargePointsOnly })).toMatchObject({
      status: 403,
      body: { error: 'insufficient_scope' },
    });
    expect((await api.call('GET', '/stations')).status).toBe(401);
    expect((await post('/stations/CP001/reset', {}, 'not-a-token')).status).toBe(401);
  });

  it("a site-scoped application neither sees nor touches another site's station (404), a charge-point grant reaches no station", async () => {
    let resets = 0;
    cp001.handle('Reset', () => (resets++, { status: 'Accepted' }));
    const siteS2 = await api.token(api.createApp('site-s2'));
    const listed = await api.call('GET', '/stations', { token: siteS2 });
    expect((listed.body as unknown as Array<{ id: string }>).map((s) => s.id)).toEqual(['CP002']);
    const hidden = await api.call('GET', '/stations/CP001', { token: siteS2 });
    expect(hidden).toMatchObject({ status: 404, body: { error: 'not_found' } });
    // The same answer as for a station that does not exist: nothing tells the one from the other.
    const missing = await api.call('GET', '/stations/NOPE', { token: siteS2 });
    expect(missing.body.message).toBe(String(hidden.body.message).replace('CP001', 'NOPE'));
    expect((await post('/stations/CP001/reset', {}, siteS2)).status).toBe(404);
    expect((await api.call('GET', '/stations/CP001/configuration', { token: siteS2 })).status).toBe(404);
    expect(resets).toBe(0);
    // Its own station is within reach: not connected here.
    expect((await post('/stations/CP002/reset', {}, siteS2)).status).toBe(503);

    const chargePoint = await api.token(api.createApp('charge-point-only'));
    expect((await api.call('GET', '/stations', { token: chargePoint })).body).toEqual([]);
    expect((await post('/stations/CP001/reset', {}, chargePoint)).status).toBe(404);
  });

  it('bad input gets 400 naming what is wrong, and the station is not asked', async () => {
    let unlocks = 0;
    cp001.handle('UnlockConnector', () => (unlocks++, { status: 'Unlocked' }));
    const unknownConnector = await post('/stations/CP001/unlock', { connectorId: 7 });
    expect(unknownConnector).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', message: expect.stringContaining('has connectors 1, 2') },
    });
    expect((await post('/stations/CP001/unlock', {})).body).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('connectorId'),
    });
    expect((await post('/stations/CP001/reset', { type: 'gentle' })).status).toBe(400);
    expect((await post('/stations/CP001/trigger', { message: 'TransactionEvent' })).body).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('OCPP 1.6 can trigger'),
    });
    expect(
      (
        await api.call('PUT', '/stations/CP201/configuration', {
          token: operator,
          body: { key: 'HeartbeatInterval', value: '1' },
        })
      ).body,
    ).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('Component.Variable') });
    // Also for a station that is not connected: the request is wrong either way.
    expect((await post('/stations/CP002/unlock', { connectorId: 2 })).body).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('station "CP002" has connectors 1'),
    });
    expect(unlocks).toBe(0);
  });

  it('keeps the last 50 operations of a station, newest first, in the database', async () => {
    cp001.handle('ClearCache', () => ({ status: 'Accepted' }));
    for (let i = 0; i < 55; i++) expect((await post('/stations/CP001/clear-cache')).status).toBe(200);
    const shown = await api.call('GET', '/stations/CP001', { token: operator });
    const operations = shown.body.operations as Array<{ action: string; at: string }>;
    expect(operations).toHaveLength(50);
    expect(operations.every((o) => o.action === 'ClearCache')).toBe(true);
    expect([...operations].sort((a, b) => b.at.localeCompare(a.at))).toEqual(operations);
    const kept = api.db.prepare("SELECT COUNT(*) AS n FROM station_operations WHERE station_id = 'CP001'").get() as {
      n: number;
    };
    expect(kept.n).toBe(50);
  });

  it("records and logs a credential's new value as hidden, and no read's result", async () => {
    cp001.handle('ChangeConfiguration', () => ({ status: 'Accepted' }));
    const secret = 'a3f9c1d2e4b5a6f7';
    const set = await api.call('PUT', '/stations/CP001/configuration', {
      token: operator,
      body: { key: 'AuthorizationKey', value: secret },
    });
    expect(set.status).toBe(200);
    cp001.handle('GetConfiguration', () => ({
      configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }],
    }));
    expect((await api.call('GET', '/stations/CP001/configuration', { token: operator })).status).toBe(200);
    const [read, changed] = (await api.call('GET', '/stations/CP001', { token: operator })).body
      .operations as unknown[];
    expect(changed).toMatchObject({
      action: 'ChangeConfiguration',
      request: { key: 'AuthorizationKey', value: '(hidden)' },
      answer: { status: 'Accepted' },
    });
    expect(read).toMatchObject({ action: 'GetConfiguration', request: { keys: [] }, answer: { status: 'Accepted' } });
    expect(JSON.stringify(read)).not.toContain('HeartbeatInterval');
    expect(JSON.stringify(api.logs)).not.toContain(secret);
    expect(api.db.prepare('SELECT request FROM station_operations').all()).not.toContainEqual({
      request: expect.stringContaining(secret),
    });
  });

  it("an operation whose record cannot be written still gets the station's answer; the failure is logged", async () => {
    cp001.handle('ClearCache', () => ({ status: 'Accepted' }));
    api.db.exec(
      "CREATE TRIGGER refuse_records BEFORE INSERT ON station_operations BEGIN SELECT RAISE(ABORT, 'no room'); END",
    );
    try {
      const cleared = await post('/stations/CP001/clear-cache');
      expect(cleared).toMatchObject({ status: 200, body: { action: 'ClearCache', status: 'Accepted' } });
      expect(api.logged('could not record the station operation')).toEqual([
        expect.objectContaining({ stationId: 'CP001', action: 'ClearCache' }),
      ]);
    } finally {
      api.db.exec('DROP TRIGGER refuse_records');
    }
    expect((await post('/stations/CP001/clear-cache')).status).toBe(200);
    const [latest] = (await api.call('GET', '/stations/CP001', { token: operator })).body.operations as unknown[];
    expect(latest).toMatchObject({ action: 'ClearCache', answer: { status: 'Accepted' } });
  });

  it('a 2.0.1 base report: GetBaseReport, its NotifyReport parts kept and shown, config get without keys reads them', async () => {
    const before = await api.call('GET', '/stations/CP201/configuration', { token: operator });
    expect(before).toMatchObject({ status: 409, body: { error: 'no_base_report' } });
    let requestId = -1;
    cp201.handle('GetBaseReport', (params) => {
      requestId = params.requestId;
      return { status: 'Accepted' };
    });
    expect((await post('/stations/CP201/report')).body).toMatchObject({ action: 'GetBaseReport', status: 'Accepted' });
    const generatedAt = new Date().toISOString();
    // A CSMS's report (another requestId) is not mistaken for chargegate's.
    await cp201.call('NotifyReport', {
      requestId: requestId + 1,
      generatedAt,
      seqNo: 0,
      reportData: [{ component: { name: 'Other' }, variable: { name: 'Thing' }, variableAttribute: [{ value: 'x' }] }],
    });
    await cp201.call('NotifyReport', {
      requestId,
      generatedAt,
      seqNo: 0,
      tbc: true,
      reportData: [
        {
          component: { name: 'OCPPCommCtrlr' },
          variable: { name: 'HeartbeatInterval' },
          variableAttribute: [{ type: 'Actual', value: '300', mutability: 'ReadWrite' }],
        },
      ],
    });
    const partial = await api.call('GET', '/stations/CP201', { token: operator });
    expect(partial.body.baseReport).toMatchObject({ requestId, parts: 1, complete: false });
    await cp201.call('NotifyReport', {
      requestId,
      generatedAt,
      seqNo: 1,
      reportData: [
        {
          component: { name: 'EVSE', evse: { id: 2 } },
          variable: { name: 'Power' },
          variableAttribute: [{ type: 'Actual', value: '22000', mutability: 'ReadOnly' }],
        },
      ],
    });
    const shown = await api.call('GET', '/stations/CP201', { token: operator });
    expect(shown.body.baseReport).toEqual({
      requestId,
      requestedAt: expect.any(String),
      generatedAt,
      parts: 2,
      complete: true,
      truncated: false,
      variables: [
        { key: 'OCPPCommCtrlr.HeartbeatInterval', value: '300', readonly: false },
        { key: 'EVSE[2].Power', value: '22000', readonly: true },
      ],
    });
    const read = await api.call('GET', '/stations/CP201/configuration', { token: operator });
    expect(read).toMatchObject({
      status: 200,
      body: {
        stationId: 'CP201',
        action: 'NotifyReport',
        status: 'Accepted',
        result: {
          configurationKey: [
            { key: 'OCPPCommCtrlr.HeartbeatInterval', value: '300', readonly: false },
            { key: 'EVSE[2].Power', value: '22000', readonly: true },
          ],
          report: { requestId, generatedAt, complete: true, truncated: false },
        },
      },
    });
  });
});

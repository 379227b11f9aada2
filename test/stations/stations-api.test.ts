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
];

const CALL_TIMEOUT_MS = 1_000;

describe('stations API', () => {
  let api: ApiDaemon;
  let cp001: SimulatedStation;
  let cp201: StationV201;
  let operator: string;

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
    operator = await api.token(api.createApp('operators'));
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
    const [clientId] = (shown.body.operations as Array<{ who: string }>).map((o) => o.who);
    expect(shown.body.operations).toEqual([
      {
        at: expect.any(String),
        who: clientId,
        action: 'Reset',
        request: { hard: true },
        answer: { status: 'Accepted' },
        error: null,
      },
      expect.objectContaining({ action: 'Reset', request: { hard: false } }),
    ]);
    expect(clientId).toMatch(/./);
    expect(api.logged('station operation done')).toContainEqual(
      expect.objectContaining({ stationId: 'CP201', action: 'Reset', status: 'Scheduled' }),
    );
  });
});

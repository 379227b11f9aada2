import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putIdTag } from '../../src/authorization/index.js';
import { loadConfig } from '../../src/config/index.js';
import { Site, type ChargePointView } from '../../src/site/index.js';
import { runCliJson } from '../support/cli.js';
import { eventually } from '../support/daemon.js';
import { freePort } from '../support/free-port.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import type { SimulatedStation } from '../support/station.js';
import { JwksWebhookVerifier } from '../support/webhook-verifier.js';
import { API_SITES, startApiDaemon, type ApiDaemon } from './api-harness.js';

/** The API against real ocpp-rpc stations, with the webhooks that follow the station's own messages. */
describe('charge-points API with real stations', () => {
  let api: ApiDaemon;
  let receiver: Receiver;
  let cp001: SimulatedStation;
  let token: string;

  const webhooks = (eventType: string) =>
    receiver.requests
      .map((r) => r.json<{ eventType: string; payload: Record<string, unknown> }>())
      .filter((e) => e.eventType === eventType);

  beforeAll(async () => {
    receiver = await startReceiver();
    const [s1, s2] = API_SITES;
    api = await startApiDaemon({
      ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: 1000 },
      sites: [
        { ...s1, webhooks: [{ id: 'partner', url: receiver.url(), events: ['StartTransaction', 'StopTransaction'] }] },
        // A Modbus-metered charger with nothing listening: the API must know it, and that it has no OCPP.
        {
          ...s2,
          meters: [
            {
              id: 'meter-1',
              chargePointId: 'MB-1',
              connectorId: 1,
              model: 'sdm630',
              connection: { type: 'tcp', host: '127.0.0.1', port: await freePort(), unitId: 1 },
              pollIntervalMs: 1000,
            },
          ],
        },
      ],
      webhookDelivery: { retryIntervalS: 0.2 },
    });
    putIdTag(api.db, { idTag: 'API-TAG', status: 'Accepted', expiresAt: null, siteId: null });
    cp001 = await api.connect('CP001');
    await cp001.boot();
    await cp001.statusNotification({ connectorId: 1, status: 'Available' });
    token = await api.token(api.createApp('ops'));
  });
  afterAll(async () => {
    await api.stop();
    await receiver.close();
  });

  const start = (chargePointId: string, body: unknown) =>
    api.call('POST', `/charge-points/${chargePointId}/start`, { token, body });
  const stop = (chargePointId: string, body: unknown) =>
    api.call('POST', `/charge-points/${chargePointId}/stop`, { token, body });

  it('remote start makes the station start a transaction, and its StartTransaction reaches the outbox and the partner; remote stop likewise', async () => {
    const listed = await api.call('GET', '/charge-points', { token });
    expect(listed.body).toContainEqual({
      chargePointId: 'CP001-A',
      stationId: 'CP001',
      siteId: 's1',
      online: true,
      connectors: [{ connectorId: 1, status: 'Available', errorCode: 'NoError' }],
    });

    const started = await start('CP001-A', { connectorId: 1, idTag: 'API-TAG' });
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ status: 'Accepted', chargePointId: 'CP001-A', stationId: 'CP001' });
    const transaction = await cp001.nextRemoteStart();
    expect(transaction).toMatchObject({ connectorId: 1, idTag: 'API-TAG' });
    expect(api.events('StartTransaction')).toEqual([
      expect.objectContaining({
        siteId: 's1',
        payload: expect.objectContaining({
          chargePointId: 'CP001-A',
          connectorId: 1,
          idTag: 'API-TAG',
          transactionId: transaction.transactionId,
        }),
      }),
    ]);
    await receiver.waitFor(() => webhooks('StartTransaction').length === 1);
    expect(webhooks('StartTransaction')[0]!.payload).toMatchObject({
      stationId: 'CP001',
      chargePointId: 'CP001-A',
      transactionId: transaction.transactionId,
    });
    // The partner can verify what it received with the published `sign` key.
    expect(await new JwksWebhookVerifier(api.jwksUrl).verify(receiver.requests[0]!)).toBe('sign');

    const busy = await api.call('GET', '/charge-points', { token });
    expect(
      (busy.body as unknown as Array<{ chargePointId: string; connectors: unknown[] }>).find(
        (cp) => cp.chargePointId === 'CP001-A',
      )!.connectors,
    ).toEqual([expect.objectContaining({ connectorId: 1, transactionId: transaction.transactionId })]);

    const stopped = await stop('CP001-A', { transactionId: transaction.transactionId });
    expect(stopped.status).toBe(202);
    await cp001.nextRemoteStop();
    expect(api.events('StopTransaction')).toEqual([
      expect.objectContaining({
        payload: expect.objectContaining({ transactionId: transaction.transactionId, reason: 'Remote' }),
      }),
    ]);
    await receiver.waitFor(() => webhooks('StopTransaction').length === 1);
    expect(webhooks('StopTransaction')[0]!.payload).toMatchObject({
      transactionId: transaction.transactionId,
      reason: 'Remote',
    });

    const again = await stop('CP001-A', { transactionId: transaction.transactionId });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'transaction_stopped' });

    const metrics = await (await fetch(`${api.baseUrl}/metrics`)).text();
    expect(metrics).toContain(
      'chargegate_api_requests_total{method="POST",route="/charge-points/:chargePointId/start",status="202"} 1',
    );
    expect(metrics).toContain(
      'chargegate_api_requests_total{method="POST",route="/charge-points/:chargePointId/stop",status="409"} 1',
    );
  });

  it('409 when the station rejects, 502 on a CALLERROR, 504 when it does not answer, 503 once it is gone', async () => {
    const cp002 = await api.connect('CP002', undefined, { remoteStart: 'Rejected' });
    await cp002.boot();
    const rejected = await start('CP002-A', { connectorId: 1, idTag: 'API-TAG' });
    expect(rejected.status).toBe(409);
    expect(rejected.body).toMatchObject({ error: 'rejected', status: 'Rejected' });

    cp002.handle('RemoteStartTransaction', () => {
      throw new Error('firmware fault');
    });
    const failed = await start('CP002-A', { connectorId: 1, idTag: 'API-TAG' });
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ error: 'station_error', ocppErrorCode: expect.any(String) });

    cp002.handle('RemoteStartTransaction', () => new Promise(() => undefined));
    const silent = await start('CP002-A', { connectorId: 1, idTag: 'API-TAG' });
    expect(silent.status).toBe(504);
    expect(silent.body).toMatchObject({ error: 'station_timeout' });

    // Gone as a station that loses power: the socket drops with its last command still unanswered.
    await cp002.rpc.close({ code: 1001, force: true });
    const offline = await eventually(async () => {
      const response = await start('CP002-A', { connectorId: 1, idTag: 'API-TAG' });
      return response.status === 503 && response;
    });
    expect(offline.body).toMatchObject({ error: 'station_offline', message: 'station "CP002" is not connected' });
  });

  it('400 with every offending field for a bad body, 400 for a connector of another charge point, 404 for a transaction elsewhere', async () => {
    const bad = await start('CP001-A', { connectorId: 'one', extra: true });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request' });
    expect((bad.body.problems as Array<{ path: string }>).map((p) => p.path).sort()).toEqual([
      '(top level)',
      'connectorId',
      'idTag',
    ]);

    const notJson = await fetch(`${api.baseUrl}/charge-points/CP001-A/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"connectorId":',
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: 'invalid_request' });

    const otherConnector = await start('CP001-A', { connectorId: 2, idTag: 'API-TAG' });
    expect(otherConnector.status).toBe(400);
    expect(otherConnector.body.message).toContain('has connectors 1');

    const started = await start('CP001-B', { connectorId: 2, idTag: 'API-TAG' });
    expect(started.status).toBe(202);
    const transaction = await cp001.nextRemoteStart();
    const elsewhere = await stop('CP001-A', { transactionId: transaction.transactionId });
    expect(elsewhere.status).toBe(404);
    const unknown = await stop('CP001-B', { transactionId: 999_999 });
    expect(unknown.status).toBe(404);
    expect((await stop('CP001-B', { transactionId: transaction.transactionId })).status).toBe(202);
    await cp001.nextRemoteStop();
  });

  it('finds a charge point directly as the list shows it: configured, Modbus-metered (no remote commands) and of a station paired from the CLI', async () => {
    // `chargegate station pair` in its own process: a station the config does not list. (A write on this process's
    // own connection would wait on the in-process daemon's open group commit, which the same event loop must finish.)
    expect((await runCliJson(['station', 'pair', 'CP009', '--site', 's2', '--config', api.temp.configPath])).code).toBe(
      0,
    );
    const site = new Site({ db: api.db, config: () => loadConfig(api.temp.configPath) });
    const cp009 = await api.connect('CP009');
    await cp009.boot();
    await cp009.statusNotification({ connectorId: 1, status: 'Available' });

    const listed = (await api.call('GET', '/charge-points', { token })).body as unknown as ChargePointView[];
    expect(listed.map((cp) => cp.chargePointId)).toEqual(['CP001-A', 'CP001-B', 'CP002-A', 'CP009', 'MB-1']);
    for (const chargePoint of listed)
      expect(site.connectors.chargePoint(chargePoint.chargePointId)).toEqual(chargePoint);
    expect(site.connectors.chargePoint('NOPE')).toBeUndefined();

    const metered = await start('MB-1', { connectorId: 1, idTag: 'API-TAG' });
    expect(metered.status).toBe(422);
    expect(metered.body).toMatchObject({ error: 'not_remotely_controllable' });
    const paired = await start('CP009', { connectorId: 1, idTag: 'API-TAG' });
    expect(paired.status).toBe(202);
    expect(paired.body).toEqual({ status: 'Accepted', chargePointId: 'CP009', stationId: 'CP009' });
    expect(await cp009.nextRemoteStart()).toMatchObject({ connectorId: 1, idTag: 'API-TAG' });
  });
});

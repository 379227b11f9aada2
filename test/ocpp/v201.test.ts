import { describe, expect, it, onTestFinished } from 'vitest';
import { apiDaemonForTest } from '../http/api-harness.js';
import { daemonForTest, eventually, siteWith } from '../support/daemon.js';
import { StationV201 } from '../support/station-v201.js';
import { receiverForTest, stationV201ForTest } from '../support/for-test.js';
import { expectSignedWebhook, jwksSigningKey, restartDaemon } from '../webhooks/harness.js';

/** A 1.6 station CP001 and a 2.0.1 station EV201 (EVSEs 1 and 2) on one site. */
const MIXED = [
  { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1, 2] }] },
  {
    id: 'EV201',
    chargePoints: [
      { id: 'EV201-A', connectors: [1] },
      { id: 'EV201-B', connectors: [2] },
    ],
  },
];

describe('OCPP 2.0.1 stations (contract section 9)', () => {
  const connect = (url: string, identity = 'EV201', protocols?: string[]): Promise<StationV201> =>
    stationV201ForTest(url, identity, protocols ? { protocols } : {});

  it('negotiates on one URL: both offered -> ocpp2.0.1, only ocpp1.6 -> ocpp1.6', async () => {
    const t = await daemonForTest(siteWith([], MIXED));
    expect((await connect(`${t.url}`, 'EV201', ['ocpp1.6', 'ocpp2.0.1'])).protocol).toBe('ocpp2.0.1');
    expect((await connect(`${t.url}`, 'CP001', ['ocpp1.6'])).protocol).toBe('ocpp1.6');
    expect(t.logged('station connected').map((l) => [l.stationId, l.protocol])).toEqual([
      ['EV201', 'ocpp2.0.1'],
      ['CP001', 'ocpp1.6'],
    ]);
  });

  it('a 2.0.1 session makes the same events as a 1.6 one: statuses, StartTransaction, the post-start Authorize, StopTransaction', async () => {
    const t = await daemonForTest({ ...siteWith([], MIXED), authorization: { allowConcurrentTx: true } });
    const station = await connect(t.url);
    expect(await station.boot()).toMatchObject({ status: 'Accepted', interval: expect.any(Number) });
    await station.status(1, 'Available');
    await station.status(1, 'Occupied');
    station.meterWh = 1500;
    const transactionId = station.newTransactionId();
    const startedAt = new Date('2026-11-25T09:00:00.000Z');
    const started = await station.transactionEvent('Started', transactionId, {
      evseId: 1,
      idToken: 'TAG-201',
      chargingState: 'EVConnected',
      timestamp: startedAt,
    });
    // Unknown tag, default chain: Invalid, exactly as a 1.6 station would hear it.
    expect(started).toEqual({ idTokenInfo: { status: 'Invalid' } });
    await station.transactionEvent('Updated', transactionId, {
      chargingState: 'Charging',
      triggerReason: 'ChargingStateChanged',
    });
    station.meterWh = 4250;
    const stoppedAt = new Date('2026-11-25T10:30:00.000Z');
    await station.transactionEvent('Ended', transactionId, { stoppedReason: 'EVDisconnected', timestamp: stoppedAt });
    await station.status(1, 'Available');

    expect(
      t.events('ChargePointStatus').map((e) => [e.payload.connectorId, e.payload.status, e.payload.errorCode]),
    ).toEqual([
      [1, 'Available', 'NoError'],
      [1, 'Preparing', 'NoError'],
      [1, 'Charging', 'NoError'],
      [1, 'Finishing', 'NoError'],
      [1, 'Available', 'NoError'],
    ]);
    const [start] = t.events('StartTransaction');
    expect(start!.payload).toEqual({
      stationId: 'EV201',
      chargePointId: 'EV201-A',
      connectorId: 1,
      idTag: 'TAG-201',
      meterStart: 1.5,
      transactionId: expect.any(Number),
      startedAt: '2026-11-25T10:00:00.000+01:00',
    });
    expect(t.events('Authorize').map((e) => e.payload)).toEqual([
      { stationId: 'EV201', idTag: 'TAG-201', status: 'Invalid', chargePointId: 'EV201-A', connectorId: 1 },
    ]);
    expect(t.events('StopTransaction').map((e) => e.payload)).toEqual([
      {
        stationId: 'EV201',
        chargePointId: 'EV201-A',
        connectorId: 1,
        idTag: 'TAG-201',
        meterStart: 1.5,
        meterStop: 4.25,
        transactionId: start!.payload.transactionId,
        reason: 'EVDisconnected',
        startedAt: '2026-11-25T10:00:00.000+01:00',
        stoppedAt: '2026-11-25T11:30:00.000+01:00',
      },
    ]);
  });

  const pluggedAt = new Date('2026-11-25T08:00:00.000Z');
  /**
   * A daemon and a 2.0.1 station whose EVSE 2 began a transaction at pluggedAt, meter 10 kWh, before any driver was
   * known.
   */
  const pluggedInWithoutDriver = async () => {
    const t = await daemonForTest(siteWith([], MIXED));
    const station = await connect(t.url);
    await station.boot();
    const transactionId = station.newTransactionId();
    station.meterWh = 10_000;
    expect(
      await station.transactionEvent('Started', transactionId, {
        evseId: 2,
        chargingState: 'EVConnected',
        triggerReason: 'CablePluggedIn',
        timestamp: pluggedAt,
      }),
    ).toEqual({});
    return { t, station, transactionId };
  };

  it('a transaction that starts before the driver is known is billed from its Started event; a replayed Started opens nothing new', async () => {
    const { t, station, transactionId } = await pluggedInWithoutDriver();
    expect(t.events('StartTransaction')).toEqual([]);
    station.meterWh = 10_020;
    await station.transactionEvent('Updated', transactionId, { idToken: 'LATE-TAG', chargingState: 'Charging' });
    expect(t.events('StartTransaction').map((e) => e.payload)).toEqual([
      expect.objectContaining({
        connectorId: 2,
        chargePointId: 'EV201-B',
        idTag: 'LATE-TAG',
        meterStart: 10,
        startedAt: '2026-11-25T09:00:00.000+01:00',
      }),
    ]);
    // A station that lost the answer sends it again, possibly flagged offline: the same transaction.
    await station.transactionEvent('Started', transactionId, {
      evseId: 2,
      idToken: 'LATE-TAG',
      offline: true,
      timestamp: pluggedAt,
    });
    expect(t.events('StartTransaction')).toHaveLength(1);
    expect(t.db.prepare('SELECT COUNT(*) FROM transactions').pluck().get()).toBe(1);
  });

  it('a transaction begun before its driver was known survives the station reconnecting and the daemon restarting: billed from its Started event', async () => {
    const { t, station: before, transactionId } = await pluggedInWithoutDriver();
    await before.close();
    const restarted = await restartDaemon(t);
    onTestFinished(() => restarted.daemon.stop());

    // The station's network drops and the gateway restarts; once both are back the driver taps a card. Events after
    // the first need not name the EVSE (2.0.1 E01): the station's own transaction id is all that ties them together.
    const after = await connect(`ws://127.0.0.1:${restarted.daemon.ocppPort}/ocpp`);
    await after.boot();
    after.meterWh = 10_020;
    await after.transactionEvent('Updated', transactionId, { idToken: 'LATE-TAG', chargingState: 'Charging' });
    after.meterWh = 12_000;
    await after.transactionEvent('Ended', transactionId, { stoppedReason: 'EVDisconnected' });
    expect(t.events('StartTransaction').map((e) => e.payload)).toEqual([
      expect.objectContaining({
        connectorId: 2,
        chargePointId: 'EV201-B',
        idTag: 'LATE-TAG',
        meterStart: 10,
        startedAt: '2026-11-25T09:00:00.000+01:00',
      }),
    ]);
    expect(t.events('StopTransaction').map((e) => e.payload)).toEqual([
      expect.objectContaining({ connectorId: 2, meterStart: 10, meterStop: 12, reason: 'EVDisconnected' }),
    ]);
    expect(t.db.prepare('SELECT COUNT(*) FROM transaction_starts_without_driver').pluck().get()).toBe(0);
  });

  it('answers every message section 9 lists', async () => {
    const t = await daemonForTest(siteWith([], MIXED));
    const station = await connect(t.url);
    await station.boot();
    const now = new Date().toISOString();
    expect(await station.call('Heartbeat', {})).toEqual({ currentTime: expect.any(String) });
    expect(await station.call('Authorize', { idToken: { idToken: 'NOBODY', type: 'ISO14443' } })).toEqual({
      idTokenInfo: { status: 'Invalid' },
    });
    expect(
      await station.call('MeterValues', {
        evseId: 1,
        meterValue: [{ timestamp: now, sampledValue: [{ value: 12.5, unitOfMeasure: { unit: 'kWh' } }] }],
      }),
    ).toEqual({});
    expect(await station.call('NotifyReport', { requestId: 1, generatedAt: now, seqNo: 0 })).toEqual({});
    expect(
      await station.call('NotifyEvent', {
        generatedAt: now,
        seqNo: 0,
        eventData: [
          {
            eventId: 1,
            timestamp: now,
            trigger: 'Alerting',
            actualValue: 'x',
            eventNotificationType: 'HardWiredNotification',
            component: { name: 'C' },
            variable: { name: 'V' },
          },
        ],
      }),
    ).toEqual({});
    expect(await station.call('SecurityEventNotification', { type: 'FirmwareUpdated', timestamp: now })).toEqual({});
    expect(await station.call('SignCertificate', { csr: '-----BEGIN CERTIFICATE REQUEST-----' })).toEqual({
      status: 'Rejected',
    });
    expect(await station.call('FirmwareStatusNotification', { status: 'Installed' })).toEqual({});
    expect(await station.call('LogStatusNotification', { status: 'Uploaded' })).toEqual({});
    expect(await station.call('DataTransfer', { vendorId: 'acme' })).toEqual({ status: 'UnknownVendorId' });
    expect(t.events('Authorize').map((e) => e.payload)).toEqual([
      { stationId: 'EV201', idTag: 'NOBODY', status: 'Invalid' },
    ]);

    // An EVSE the config does not list is answered and changes nothing, as a 1.6 connector would be.
    expect(await station.status(5, 'Occupied')).toEqual({});
    expect(
      await station.transactionEvent('Started', station.newTransactionId(), { evseId: 5, idToken: 'NOBODY' }),
    ).toEqual({ idTokenInfo: { status: 'Invalid' } });
    expect(t.events('StartTransaction')).toEqual([]);
    expect(t.events('ChargePointStatus')).toEqual([]);
    expect(t.logged('connector not in the config: answered, no event').map((l) => [l.action, l.connectorId])).toEqual([
      ['StatusNotification', 5],
      ['TransactionEvent', 5],
    ]);
  });

  it('a 1.6 and a 2.0.1 station on one site: the partner receives the same four event types, signed, with the same envelope and payload keys', async () => {
    const partner = await receiverForTest();
    const t = await daemonForTest({
      ...siteWith([{ id: 'partner', url: partner.url() }], MIXED),
      webhookDelivery: { retryIntervalS: 0.2 },
    });
    const modern = await connect(t.url);
    await modern.boot();
    const legacy = await t.connect('CP001');
    await legacy.boot();

    await legacy.statusNotification({ connectorId: 1, status: 'Preparing' });
    const legacyTx = await legacy.startTransaction({ connectorId: 1, idTag: 'TAG-16', meterStart: 1000 });
    await legacy.stopTransaction({ transactionId: legacyTx, meterStop: 2000, reason: 'EVDisconnected' });

    await modern.status(1, 'Occupied');
    const modernTx = modern.newTransactionId();
    modern.meterWh = 1000;
    await modern.transactionEvent('Started', modernTx, { evseId: 1, idToken: 'TAG-201', chargingState: 'Charging' });
    modern.meterWh = 2000;
    await modern.transactionEvent('Ended', modernTx, { stoppedReason: 'EVDisconnected' });

    const sent = t.events().length;
    await partner.waitForCount(sent, 20_000);
    const signingKey = await jwksSigningKey(t);
    for (const request of partner.requests) await expectSignedWebhook(request, signingKey);
    const envelopes = partner.requests.map((r) => r.json<{ eventType: string; payload: Record<string, unknown> }>());
    for (const type of ['StartTransaction', 'StopTransaction', 'Authorize', 'ChargePointStatus']) {
      const of = (stationId: string) =>
        envelopes.filter((e) => e.eventType === type && e.payload.stationId === stationId);
      const keys = (stationId: string) =>
        of(stationId).map((e) => [Object.keys(e).join(','), Object.keys(e.payload).sort().join(',')]);
      expect(of('EV201').length).toBeGreaterThan(0);
      expect({ type, keys: keys('EV201')[0] }).toEqual({ type, keys: keys('CP001')[0] });
    }
  });

  it('remote start and stop through the API send RequestStartTransaction and RequestStopTransaction (with the station transaction id)', async () => {
    const api = await apiDaemonForTest({ sites: [{ id: 's1', stations: MIXED, meters: [], webhooks: [] }] });
    const token = await api.token(api.createApp('ops'));
    const station = await connect(api.url);
    await station.boot();
    const started = await api.call('POST', '/charge-points/EV201-B/start', {
      token,
      body: { connectorId: 2, idTag: 'APP-201' },
    });
    expect(started).toMatchObject({
      status: 202,
      body: { status: 'Accepted', chargePointId: 'EV201-B', stationId: 'EV201' },
    });
    const [start] = await eventually(
      () => api.events('StartTransaction').length > 0 && api.events('StartTransaction'),
      10_000,
      'StartTransaction',
    );
    expect(start!.payload).toMatchObject({
      stationId: 'EV201',
      chargePointId: 'EV201-B',
      connectorId: 2,
      idTag: 'APP-201',
    });
    // The API's own remoteStartId, far from the small numbers a CSMS counts its own from (docs/design/uplink.md#uplink-what-the-csms-sees).
    const [request] = station.remoteRequests.filter((r) => r.action === 'RequestStartTransaction');
    const { remoteStartId } = request!.params as { remoteStartId: number };
    expect(remoteStartId).toBeGreaterThanOrEqual(2 ** 30);
    expect(remoteStartId).toBeLessThan(2 ** 31 - 1);

    const stopped = await api.call('POST', '/charge-points/EV201-B/stop', {
      token,
      body: { transactionId: start!.payload.transactionId },
    });
    expect(stopped).toMatchObject({ status: 202, body: { status: 'Accepted' } });
    const [stop] = await eventually(
      () => api.events('StopTransaction').length > 0 && api.events('StopTransaction'),
      10_000,
      'StopTransaction',
    );
    expect(stop!.payload).toMatchObject({ transactionId: start!.payload.transactionId, reason: 'Remote' });
  });
});

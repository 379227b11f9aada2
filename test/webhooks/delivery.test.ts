import { describe, expect, it } from 'vitest';
import { formatZonedTimestamp } from '../../src/time/index.js';
import { deliveries, eventually, expectSignedWebhook, jwksSigningKey, webhookTestResources } from './harness.js';

const t = webhookTestResources();

describe('webhook requests', () => {
  it('delivers every event type from a real station: envelope, headers and documented signature exactly per contract', async () => {
    const partner = await t.receiver();
    const daemon = await t.daemon([{ id: 'partner-a', url: partner.url('/webhook/events') }]);
    const publicKey = await jwksSigningKey(daemon);
    const station = await daemon.connect('CP001');
    await station.boot();
    await station.statusNotification({ connectorId: 1, status: 'Preparing' });
    await station.authorize('TAG-1');
    // A session the station reports late (it was offline): occurredAt and the payload carry its own times.
    const startedAt = new Date(Date.now() - 30 * 60_000);
    const stoppedAt = new Date(Date.now() - 60_000);
    const transactionId = await station.startTransaction({
      connectorId: 1,
      idTag: 'TAG-1',
      meterStart: 1500,
      timestamp: startedAt,
    });
    await station.stopTransaction({ transactionId, meterStop: 4250, reason: 'EVDisconnected', timestamp: stoppedAt });

    const committed = daemon.events();
    await partner.waitForCount(committed.length);
    expect(committed.map((e) => e.eventType)).toEqual(
      expect.arrayContaining(['ChargePointStatus', 'Authorize', 'StartTransaction', 'StopTransaction']),
    );
    const byId = new Map(
      daemon.db
        .prepare('SELECT event_id, event_type, payload FROM events')
        .all()
        .map((r) => [(r as { event_id: string }).event_id, r as { event_type: string; payload: string }]),
    );
    const requestIds = new Set<string>();
    for (const request of partner.requests) {
      const sentAround = request.receivedAt;
      const envelope = await expectSignedWebhook(request, publicKey);
      expect(request.path).toBe('/webhook/events');
      // Field names are case-insensitive and order-free (RFC 9110 5.1, 5.3): exactly these, nothing else.
      expect(request.rawHeaders.map(([name]) => name.toLowerCase()).sort()).toEqual([
        'connection',
        'content-length',
        'content-type',
        'host',
        'signature',
        'signature-input',
        'x-request-id',
      ]);
      expect(request.headers['signature-input']).toMatch(
        /^sig1=created=\d+;keyId="webhook";alg="rsa-pss-sha256";headers="@method @path x-request-id"$/,
      );
      const created = Number(/created=(\d+)/.exec(String(request.headers['signature-input']))![1]);
      expect(Math.abs(created - sentAround / 1000)).toBeLessThan(5);
      const row = byId.get(envelope.eventId as string)!;
      expect(envelope.eventType).toBe(row.event_type);
      expect(envelope.siteId).toBe('s1');
      expect(envelope.payload).toEqual(JSON.parse(row.payload));
      expect(JSON.stringify(envelope.payload)).toBe(row.payload);
      // The offset is Brussels' at the send time.
      expect((envelope.timestamp as string).slice(-6)).toBe(
        formatZonedTimestamp(new Date(sentAround), 'Europe/Brussels').slice(-6),
      );
      expect(Math.abs(Date.parse(envelope.timestamp as string) - sentAround)).toBeLessThan(2000);
      requestIds.add(request.headers['x-request-id'] as string);
    }
    expect(requestIds.size).toBe(partner.requests.length);
    const envelopes = partner.requests.map((r) => r.json());
    const start = envelopes.find((e) => e.eventType === 'StartTransaction')!;
    const stop = envelopes.find((e) => e.eventType === 'StopTransaction')!;
    expect(start.occurredAt).toBe(formatZonedTimestamp(startedAt, 'Europe/Brussels'));
    expect(stop.occurredAt).toBe(formatZonedTimestamp(stoppedAt, 'Europe/Brussels'));
    expect((start.payload as { startedAt: string }).startedAt).toBe(formatZonedTimestamp(startedAt, 'Europe/Brussels'));
    // Other events happened when the central system received them: just before they were sent.
    for (const other of envelopes.filter((e) => e.eventType === 'Authorize' || e.eventType === 'ChargePointStatus')) {
      expect(Date.parse(other.timestamp as string) - Date.parse(other.occurredAt as string)).toBeLessThan(5000);
    }
    expect(stop.payload).toEqual({
      stationId: 'CP001',
      chargePointId: 'CP001-A',
      connectorId: 1,
      idTag: 'TAG-1',
      meterStart: 1.5,
      meterStop: 4.25,
      transactionId,
      reason: 'EVDisconnected',
      startedAt: formatZonedTimestamp(startedAt, 'Europe/Brussels'),
      stoppedAt: formatZonedTimestamp(stoppedAt, 'Europe/Brussels'),
    });
    // Each sent once (above); its count may be one too high when the delivery thread read the event before it heard
    // that the event's commit counted its first attempt (docs/operating/guarantees-and-faults.md#guarantees-and-faults): never lower than the sends.
    await eventually(
      () =>
        deliveries(daemon).every(
          (d) => d.state === 'delivered' && d.attempts >= 1 && d.attempts <= 2 && d.last_status === 200,
        ),
      5000,
      'all delivered',
    );
    expect(partner.requests.map((r) => r.json().eventId).sort()).toEqual(
      deliveries(daemon)
        .map((d) => d.event_id)
        .sort(),
    );
  });
});

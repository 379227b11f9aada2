import { describe, expect, it } from 'vitest';
import { apiDaemonForTest } from '../http/api-harness.js';
import { eventually } from '../support/daemon.js';
import { receiverForTest, stationV201ForTest } from '../support/for-test.js';
import {
  MAX_SIGNED_BEGIN_END_PER_TRANSACTION,
  MAX_SIGNED_READING_CHARS,
  MAX_SIGNED_SAMPLES_PER_TRANSACTION,
} from '../../src/site/index.js';
import { forged, meterKey, meterKeyForms, ocmfRecord, simulatedRecord, type MeterKey } from '../support/ocmf.js';
import { expectSignedWebhook, jwksSigningKey } from '../webhooks/harness.js';

const CP001 = { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1, 2] }] };
const EV201 = { id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] };
const CP002 = { id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] };
const GROUPS = [{ id: 'ops', scope: 'company:acme', permissions: ['charge-points:read', 'events:read'] }];

/** The whitepaper's JSON form of a 1.6 SignedData value. */
const whitepaperJson = (key: MeterKey, record: string) =>
  JSON.stringify({
    signedMeterData: record,
    signingMethod: key.algorithm,
    encodingMethod: 'OCMF',
    publicKey: key.publicKeyHex,
  });

/**
 * The site with CP001, EV201 and CP002 and a partner webhook for StopTransaction; `webhook: false` leaves it out for
 * a case that sends none (no delivery thread to start).
 */
async function signedSite(
  options: { cp001?: Record<string, unknown>; webhookDelivery?: Record<string, unknown>; webhook?: boolean } = {},
) {
  const partner = await receiverForTest();
  const api = await apiDaemonForTest({
    sites: [
      {
        id: 's1',
        stations: [{ ...CP001, ...options.cp001 }, EV201, CP002],
        meters: [],
        webhooks: options.webhook === false ? [] : [{ id: 'partner', url: partner.url(), events: ['StopTransaction'] }],
      },
    ],
    groups: GROUPS,
    webhookDelivery: { retryIntervalS: 0.2, ...options.webhookDelivery },
  });
  return { partner, api };
}

type Payload = Record<string, unknown> & { transactionId: number; signedMeterValues?: Array<Record<string, unknown>> };

describe('signed meter values (docs/partners/signed-meter-values.md#signed-meter-values)', () => {
  it('a 1.6 and a 2.0.1 station with signed Begin/End: StopTransaction carries the records byte for byte, verified and consistent; /events and /transactions/{id} show the same', async () => {
    const { partner, api } = await signedSite();
    // An application's token for the API (two scrypt runs): made only by the case that reads the API.
    const token = await api.token(api.createApp('ops'));
    const legacy = await api.connect('CP001');
    await legacy.boot();
    const modern = await stationV201ForTest(api.url, 'EV201');
    await modern.boot();

    // 1.6: the Begin reading in MeterValues right after StartTransaction, naming no transaction; a periodic one;
    // the End reading in StopTransaction's transactionData as a bare record.
    const meter16 = meterKey('P-256');
    const begin16 = whitepaperJson(meter16, ocmfRecord(meter16, { tx: 'B', kWh: 12.345 }));
    const periodic16 = ocmfRecord(meter16, { tx: 'T', kWh: 15 });
    const end16 = ocmfRecord(meter16, { tx: 'E', kWh: 20.5 });
    const tx16 = await legacy.startTransaction({ connectorId: 1, idTag: 'TAG-16', meterStart: 12_345 });
    await legacy.signedMeterValue({ connectorId: 1, value: begin16, context: 'Transaction.Begin' });
    await legacy.signedMeterValue({
      connectorId: 1,
      transactionId: tx16,
      value: periodic16,
      context: 'Sample.Periodic',
    });
    await legacy.stopTransaction({
      transactionId: tx16,
      meterStop: 20_500,
      reason: 'EVDisconnected',
      signedValues: [{ value: end16 }],
    });

    // 2.0.1: base64 records and a base64 key, sent once per transaction (the End reading's key is empty).
    const meter201 = meterKey('P-384');
    const key201 = Buffer.from(meter201.publicKeyHex, 'hex').toString('base64');
    const b64 = (record: string) => Buffer.from(record).toString('base64');
    const begin201 = b64(ocmfRecord(meter201, { tx: 'B', kWh: 1 }));
    const end201 = b64(ocmfRecord(meter201, { tx: 'E', kWh: 3 }));
    const stationTx = modern.newTransactionId();
    modern.meterWh = 1000;
    await modern.transactionEvent('Started', stationTx, {
      evseId: 1,
      idToken: 'TAG-201',
      chargingState: 'Charging',
      signedMeterValue: {
        signedMeterData: begin201,
        signingMethod: meter201.algorithm,
        encodingMethod: 'OCMF',
        publicKey: key201,
      },
    });
    modern.meterWh = 3000;
    await modern.transactionEvent('Ended', stationTx, {
      stoppedReason: 'EVDisconnected',
      signedMeterValue: {
        signedMeterData: end201,
        signingMethod: meter201.algorithm,
        encodingMethod: 'OCMF',
        publicKey: '',
      },
    });

    await partner.waitForCount(2, 20_000);
    const signingKey = await jwksSigningKey(api);
    const received = await Promise.all(partner.requests.map((r) => expectSignedWebhook(r, signingKey)));
    const stops = received.map((e) => e.payload as Payload);
    const of = (stationId: string) => stops.find((p) => p.stationId === stationId)!;
    expect(of('CP001').signedMeterValues).toEqual([
      expect.objectContaining({
        context: 'Transaction.Begin',
        encodingMethod: 'OCMF',
        signingMethod: 'ECDSA-secp256r1-SHA256',
        signedMeterData: JSON.parse(begin16).signedMeterData,
        publicKey: meter16.publicKeyHex,
        verified: true,
        consistent: true,
      }),
      // The station sent the key with the Begin reading only: the End reading is checked against it.
      expect.objectContaining({
        context: 'Transaction.End',
        signedMeterData: end16,
        publicKey: null,
        verified: true,
        consistent: true,
      }),
    ]);
    expect(of('EV201').signedMeterValues).toEqual([
      expect.objectContaining({
        context: 'Transaction.Begin',
        signedMeterData: begin201,
        publicKey: key201,
        verified: true,
        consistent: true,
      }),
      // The key came once, with the Begin reading: the End reading is checked against it.
      expect.objectContaining({
        context: 'Transaction.End',
        signedMeterData: end201,
        publicKey: null,
        verified: true,
        consistent: true,
      }),
    ]);

    // GET /events: the same payloads.
    const page = await api.call('GET', '/events', { token });
    const fromEvents = (page.body.events as Array<{ eventType: string; payload: Payload }>)
      .filter((e) => e.eventType === 'StopTransaction')
      .map((e) => e.payload);
    expect(fromEvents).toEqual(expect.arrayContaining(stops));

    // GET /transactions/{id}: every reading kept, the periodic one and the 1.6 value as sent included.
    const detail = await api.call('GET', `/transactions/${tx16}`, { token });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ transactionId: tx16, meterStart: 12.345, meterStop: 20.5 });
    expect(
      (detail.body.signedMeterValues as Array<Record<string, unknown>>).map((r) => [r.context, r.signedMeterData]),
    ).toEqual([
      ['Transaction.Begin', JSON.parse(begin16).signedMeterData],
      ['Sample.Periodic', periodic16],
      ['Transaction.End', end16],
    ]);
    expect((await api.call('GET', '/transactions/999999', { token })).status).toBe(404);
    expect((await api.call('GET', '/transactions/abc', { token })).status).toBe(400);
  });

  it("keys in the OCA note's envelope from a 1.6 and a 2.0.1 station verify, Begin, periodic and End; a key in no form read is null with a warning", async () => {
    const { partner, api } = await signedSite({ webhookDelivery: { signedMeterValues: 'all' } });
    const legacy = await api.connect('CP001');
    await legacy.boot();
    const modern = await stationV201ForTest(api.url, 'EV201');
    await modern.boot();
    const odd = await api.connect('CP002');
    await odd.boot();

    const meter16 = meterKey('P-256');
    const key16 = meterKeyForms(meter16)['base64 of oca:base16:asn1 (the note)']!;
    const tx16 = await legacy.startTransaction({ connectorId: 1, idTag: 'TAG-16', meterStart: 1000 });
    const json16 = (record: string) =>
      JSON.stringify({ signedMeterData: record, signingMethod: '', encodingMethod: 'OCMF', publicKey: key16 });
    await legacy.signedMeterValue({
      connectorId: 1,
      transactionId: tx16,
      value: json16(ocmfRecord(meter16, { tx: 'B', kWh: 1 })),
      context: 'Transaction.Begin',
    });
    await legacy.signedMeterValue({
      connectorId: 1,
      transactionId: tx16,
      value: json16(ocmfRecord(meter16, { tx: 'T', kWh: 1.5 })),
      context: 'Sample.Periodic',
    });
    await legacy.stopTransaction({
      transactionId: tx16,
      meterStop: 2000,
      signedValues: [{ value: json16(ocmfRecord(meter16, { tx: 'E', kWh: 2 })) }],
    });

    const meter201 = meterKey('P-384');
    const key201 = meterKeyForms(meter201)['base64 of oca:base64:asn1']!;
    const b64 = (record: string) => Buffer.from(record).toString('base64');
    const stationTx = modern.newTransactionId();
    modern.meterWh = 1000;
    await modern.transactionEvent('Started', stationTx, {
      evseId: 1,
      idToken: 'TAG-201',
      signedMeterValue: {
        signedMeterData: b64(ocmfRecord(meter201, { tx: 'B', kWh: 1 })),
        signingMethod: '',
        encodingMethod: 'OCMF',
        publicKey: key201,
      },
    });
    modern.meterWh = 4000;
    await modern.transactionEvent('Ended', stationTx, {
      signedMeterValue: {
        signedMeterData: b64(ocmfRecord(meter201, { tx: 'E', kWh: 4 })),
        signingMethod: '',
        encodingMethod: 'OCMF',
        publicKey: '',
      },
    });

    const meterOdd = meterKey();
    const unreadable = b64('oca:base32:asn1:GEZDGNBVGY3TQOJQ');
    const txOdd = await odd.startTransaction({ connectorId: 1, idTag: 'TAG-ODD', meterStart: 0 });
    await odd.stopTransaction({
      transactionId: txOdd,
      meterStop: 3000,
      signedValues: [
        {
          value: JSON.stringify({
            signedMeterData: ocmfRecord(meterOdd, { tx: 'E', kWh: 3 }),
            encodingMethod: 'OCMF',
            publicKey: unreadable,
          }),
        },
      ],
    });

    await partner.waitForCount(3, 20_000);
    const stops = partner.requests.map((r) => r.json<{ payload: Payload }>().payload);
    const of = (stationId: string) => stops.find((p) => p.stationId === stationId)!.signedMeterValues;
    expect(of('CP001')).toEqual([
      expect.objectContaining({ context: 'Transaction.Begin', publicKey: key16, verified: true, consistent: true }),
      expect.objectContaining({ context: 'Sample.Periodic', publicKey: key16, verified: true }),
      expect.objectContaining({ context: 'Transaction.End', publicKey: key16, verified: true, consistent: true }),
    ]);
    expect(of('EV201')).toEqual([
      expect.objectContaining({ context: 'Transaction.Begin', publicKey: key201, verified: true, consistent: true }),
      expect.objectContaining({ context: 'Transaction.End', publicKey: null, verified: true, consistent: true }),
    ]);
    expect(of('CP002')).toEqual([
      expect.objectContaining({ context: 'Transaction.End', publicKey: unreadable, verified: null, consistent: true }),
    ]);
    const warning = await eventually(() =>
      api.logs.find((l) => l.level === 40 && String(l.msg).includes('public key in no form read')),
    );
    expect(warning).toMatchObject({ stationId: 'CP002', context: 'Transaction.End' });
  });

  it('forged, foreign-key, simulated and garbage readings: answered, billed, kept with verified false; a pinned-key failure warns on the log and /health naming the station', async () => {
    const pinned = meterKey();
    const foreign = meterKey();
    const { partner, api } = await signedSite({ cp001: { meterPublicKeys: [pinned.publicKeyHex] } });
    const legacy = await api.connect('CP001');
    await legacy.boot();
    const modern = await stationV201ForTest(api.url, 'EV201');
    await modern.boot();

    const tx16 = await legacy.startTransaction({ connectorId: 1, idTag: 'TAG-16', meterStart: 5000 });
    // Signed by another meter, which sends its own key: the pinned key wins. Its value also disagrees with meterStart.
    await legacy.signedMeterValue({
      connectorId: 1,
      transactionId: tx16,
      value: whitepaperJson(foreign, ocmfRecord(foreign, { tx: 'B', kWh: 4 })),
    });
    await legacy.stopTransaction({
      transactionId: tx16,
      meterStop: 6000,
      signedValues: [
        { value: forged(ocmfRecord(pinned, { tx: 'E', kWh: 6 })) },
        { value: 'not a reading', context: 'Sample.Periodic' },
      ],
    });

    const stationTx = modern.newTransactionId();
    const simulated = simulatedRecord(0, 'B');
    await modern.transactionEvent('Started', stationTx, {
      evseId: 1,
      idToken: 'TAG-201',
      signedMeterValue: {
        signedMeterData: simulated,
        signingMethod: 'ECDSA-secp256r1-SHA256',
        encodingMethod: 'OCMF',
        publicKey: '',
      },
    });
    await modern.transactionEvent('Ended', stationTx, {
      signedMeterValue: {
        signedMeterData: '%%%not base64',
        signingMethod: 'x',
        encodingMethod: 'OCMF',
        publicKey: 'broken',
      },
    });

    await partner.waitForCount(2, 20_000);
    const stops = partner.requests.map((r) => r.json<{ payload: Payload }>().payload);
    const cp001 = stops.find((p) => p.stationId === 'CP001')!;
    expect(cp001).toMatchObject({ meterStart: 5, meterStop: 6 });
    expect(cp001.signedMeterValues).toEqual([
      expect.objectContaining({
        context: 'Transaction.Begin',
        publicKey: foreign.publicKeyHex,
        verified: false,
        consistent: false,
      }),
      expect.objectContaining({ context: 'Transaction.End', verified: false }),
    ]);
    const ev201 = stops.find((p) => p.stationId === 'EV201')!;
    expect(ev201.signedMeterValues).toEqual([
      expect.objectContaining({ signedMeterData: simulated, verified: false }),
      expect.objectContaining({ signedMeterData: '%%%not base64', verified: false }),
    ]);
    // The garbage periodic value is kept as sent.
    const kept = api.db
      .prepare('SELECT as_received, verified FROM signed_readings WHERE transaction_id = ? ORDER BY id')
      .all(tx16);
    expect(kept).toContainEqual({ as_received: 'not a reading', verified: 0 });

    const warnings = await eventually(() => {
      const lines = api.logs.filter((l) => l.level === 40 && String(l.msg).includes('fails the meter key pinned'));
      return lines.length >= 2 && lines;
    });
    expect(warnings.every((l) => l.stationId === 'CP001' && String(l.msg).includes('CP001'))).toBe(true);
    const health = (await (await fetch(`${api.baseUrl}/health`)).json()) as Record<string, Record<string, unknown>>;
    expect(health.signedMeterValues).toMatchObject({
      status: 'warning',
      warning: expect.stringContaining('CP001'),
      pinnedKeyFailures: [expect.objectContaining({ stationId: 'CP001', readings: 2 })],
    });
    expect(health.status).toBe('warning');
  });

  it('consistent takes the precision of an End reading from RV as the record writes it: "12.000" kWh is to the Wh', async () => {
    const { partner, api } = await signedSite();
    const station = await api.connect('CP001');
    await station.boot();
    const meter = meterKey();
    const stops = [
      { rv: '12.000', meterStop: 12_499, consistent: false },
      { rv: '12.300', meterStop: 12_340, consistent: false },
      { rv: '12.300', meterStop: 12_300, consistent: true },
    ];
    for (const { rv, meterStop } of stops) {
      const tx = await station.startTransaction({ connectorId: 1, idTag: 'TAG', meterStart: 0 });
      await station.stopTransaction({
        transactionId: tx,
        meterStop,
        signedValues: [{ value: ocmfRecord(meter, { tx: 'E', kWh: rv }) }],
      });
    }
    await partner.waitForCount(stops.length, 20_000);
    const payloads = partner.requests.map((r) => r.json<{ payload: Payload }>().payload);
    expect(payloads.map((p) => [p.meterStop, p.signedMeterValues![0]!.consistent])).toEqual(
      stops.map((s) => [s.meterStop / 1000, s.consistent]),
    );
  });

  it('webhookDelivery.signedMeterValues all carries the periodic readings too, none carries none; no signed reading, no key', async () => {
    for (const mode of ['all', 'none'] as const) {
      const { partner, api } = await signedSite({ webhookDelivery: { signedMeterValues: mode } });
      const station = await api.connect('CP001');
      await station.boot();
      const meter = meterKey();
      const tx = await station.startTransaction({ connectorId: 1, idTag: 'TAG', meterStart: 0 });
      await station.signedMeterValue({
        connectorId: 1,
        transactionId: tx,
        value: ocmfRecord(meter, { tx: 'T', kWh: 0.5 }),
        context: 'Sample.Periodic',
      });
      await station.stopTransaction({
        transactionId: tx,
        meterStop: 1000,
        signedValues: [{ value: ocmfRecord(meter, { tx: 'E', kWh: 1 }) }],
      });
      const plain = await station.startTransaction({ connectorId: 2, idTag: 'TAG2', meterStart: 0 });
      await station.stopTransaction({ transactionId: plain, meterStop: 10 });
      await partner.waitForCount(2, 20_000);
      const [signed, unsigned] = partner.requests.map((r) => r.json<{ payload: Payload }>().payload);
      if (mode === 'all')
        expect(signed!.signedMeterValues!.map((r) => r.context)).toEqual(['Sample.Periodic', 'Transaction.End']);
      else expect(signed).not.toHaveProperty('signedMeterValues');
      expect(unsigned).not.toHaveProperty('signedMeterValues');
    }
  });

  it('2.0.1: a signed Begin reading sent before any event named the driver is held, then joins the transaction when it opens', async () => {
    const { partner, api } = await signedSite();
    const station = await stationV201ForTest(api.url, 'EV201');
    await station.boot();
    const meter = meterKey('P-256');
    const key = Buffer.from(meter.publicKeyHex, 'hex').toString('base64');
    const b64 = (record: string) => Buffer.from(record).toString('base64');
    const begin = b64(ocmfRecord(meter, { tx: 'B', kWh: 2 }));
    const end = b64(ocmfRecord(meter, { tx: 'E', kWh: 5 }));
    const stationTx = station.newTransactionId();
    station.meterWh = 2000;
    // Cable first: no idToken, so no transaction yet.
    await station.transactionEvent('Started', stationTx, {
      evseId: 1,
      signedMeterValue: {
        signedMeterData: begin,
        signingMethod: meter.algorithm,
        encodingMethod: 'OCMF',
        publicKey: key,
      },
    });
    expect(
      api.db
        .prepare('SELECT transaction_id AS transactionId, station_transaction_id AS held FROM signed_readings')
        .all(),
    ).toEqual([{ transactionId: null, held: stationTx }]);
    await station.transactionEvent('Updated', stationTx, { idToken: 'TAG-201', chargingState: 'Charging' });
    station.meterWh = 5000;
    await station.transactionEvent('Ended', stationTx, {
      stoppedReason: 'EVDisconnected',
      signedMeterValue: { signedMeterData: end, signingMethod: meter.algorithm, encodingMethod: 'OCMF', publicKey: '' },
    });

    await partner.waitForCount(1, 20_000);
    const stop = partner.requests[0]!.json<{ payload: Payload }>().payload;
    expect(stop).toMatchObject({ meterStart: 2, meterStop: 5 });
    expect(stop.signedMeterValues).toEqual([
      expect.objectContaining({
        context: 'Transaction.Begin',
        signedMeterData: begin,
        verified: true,
        consistent: true,
      }),
      expect.objectContaining({ context: 'Transaction.End', signedMeterData: end, verified: true, consistent: true }),
    ]);
    // Exactly the fields docs/partners/signed-meter-values.md#signed-meter-values names, no more.
    expect(Object.keys(stop.signedMeterValues![0]!).sort()).toEqual(
      [
        'context',
        'timestamp',
        'encodingMethod',
        'signingMethod',
        'signedMeterData',
        'publicKey',
        'verified',
        'consistent',
      ].sort(),
    );
    expect(api.db.prepare('SELECT COUNT(*) AS n FROM signed_readings WHERE transaction_id IS NULL').get()).toEqual({
      n: 0,
    });
  });

  it(`per transaction at most ${MAX_SIGNED_BEGIN_END_PER_TRANSACTION} Begin/End and ${MAX_SIGNED_SAMPLES_PER_TRANSACTION} other signed readings, ${MAX_SIGNED_READING_CHARS} characters a field: the rest dropped with a warning, the stop answered and billed`, async () => {
    const { partner, api } = await signedSite();
    const station = await api.connect('CP001');
    await station.boot();
    const tx = await station.startTransaction({ connectorId: 1, idTag: 'TAG', meterStart: 1000 });
    const meter = meterKey();
    // Garbage is small and kept (verified false): what counts here is how many.
    const beginEnd = MAX_SIGNED_BEGIN_END_PER_TRANSACTION + 2;
    const samples = MAX_SIGNED_SAMPLES_PER_TRANSACTION + 3;
    const answer = await station.stopTransaction({
      transactionId: tx,
      meterStop: 2000,
      signedValues: [
        { value: ocmfRecord(meter, { tx: 'B', kWh: 1 }), context: 'Transaction.Begin' },
        { value: 'x'.repeat(MAX_SIGNED_READING_CHARS + 1), context: 'Transaction.End' },
        ...Array.from({ length: beginEnd - 1 }, () => ({ value: 'e', context: 'Transaction.End' })),
        ...Array.from({ length: samples }, () => ({ value: 's', context: 'Sample.Periodic' })),
      ],
    });
    expect(answer).toEqual({});

    const counts = api.db
      .prepare(
        "SELECT context IN ('Transaction.Begin', 'Transaction.End') AS beginEnd, COUNT(*) AS n, MAX(LENGTH(as_received)) AS longest FROM signed_readings WHERE transaction_id = ? GROUP BY 1 ORDER BY 1",
      )
      .all(tx);
    expect(counts).toEqual([
      { beginEnd: 0, n: MAX_SIGNED_SAMPLES_PER_TRANSACTION, longest: 1 },
      { beginEnd: 1, n: MAX_SIGNED_BEGIN_END_PER_TRANSACTION, longest: expect.any(Number) },
    ]);
    expect((counts[1] as { longest: number }).longest).toBeLessThanOrEqual(MAX_SIGNED_READING_CHARS);

    await partner.waitForCount(1, 20_000);
    const stop = partner.requests[0]!.json<{ payload: Payload }>().payload;
    expect(stop).toMatchObject({ transactionId: tx, meterStart: 1, meterStop: 2 });
    expect(stop.signedMeterValues).toHaveLength(MAX_SIGNED_BEGIN_END_PER_TRANSACTION);

    const dropped = await eventually(() => {
      const lines = api.logged('signed meter value dropped');
      return lines.length > 0 && lines;
    });
    expect(dropped.every((l) => l.level === 40 && l.stationId === 'CP001' && l.transactionId === tx)).toBe(true);
    const why = dropped.map((l) => String(l.why));
    expect(why).toContain(`longer than ${MAX_SIGNED_READING_CHARS} characters`);
    expect(why.some((w) => w.includes(`${MAX_SIGNED_BEGIN_END_PER_TRANSACTION} signed Begin/End`))).toBe(true);
    expect(why.some((w) => w.includes(`${MAX_SIGNED_SAMPLES_PER_TRANSACTION} signed periodic`))).toBe(true);
  });

  it('garbage with format SignedData in MeterValues and transactionData never costs the transaction: answered, billed, kept with verified false', async () => {
    const { partner, api } = await signedSite();
    const station = await api.connect('CP001');
    await station.boot();
    const garbage = [
      '',
      '{}',
      'null',
      '{"signedMeterData": 5, "publicKey": []}',
      '{"signedMeterData": "OCMF|{}|{}", "encodingMethod": "OCMF", "publicKey": "not a key"}',
      'OCMF|',
      'OCMF|{"RD": 1}|{"SA": "ECDSA-secp256r1-SHA256", "SD": "zz"}',
      'OCMF|{"RD": []}|{"SA": "ECDSA-secp256r1-SHA256", "SD": "3006020101020101"}',
      'nul \u0000 inside',
    ];
    const tx = await station.startTransaction({ connectorId: 1, idTag: 'TAG', meterStart: 100 });
    for (const value of garbage)
      expect(
        await station.signedMeterValue({ connectorId: 1, transactionId: tx, value, context: 'Sample.Periodic' }),
      ).toEqual({});
    const answer = await station.stopTransaction({
      transactionId: tx,
      meterStop: 900,
      signedValues: garbage.map((value) => ({ value })),
    });
    expect(answer).toEqual({});
    await partner.waitForCount(1, 20_000);
    const stop = partner.requests[0]!.json<{ payload: Payload }>().payload;
    expect(stop).toMatchObject({ transactionId: tx, meterStart: 0.1, meterStop: 0.9 });
    const kept = api.db
      .prepare('SELECT as_received AS value, verified FROM signed_readings WHERE transaction_id = ? ORDER BY id')
      .all(tx) as Array<{ value: string; verified: number | null }>;
    expect(kept.map((r) => r.value)).toEqual([...garbage, ...garbage]);
    expect(kept.every((r) => r.verified !== 1)).toBe(true);
  });

  it("readings for another station's transaction stay refused (MeterValues and StopTransaction): nothing kept", async () => {
    const { api } = await signedSite({ webhook: false });
    const owner = await api.connect('CP001');
    await owner.boot();
    const intruder = await api.connect('CP002');
    await intruder.boot();
    const tx = await owner.startTransaction({ connectorId: 1, idTag: 'TAG', meterStart: 0 });
    await intruder.signedMeterValue({
      connectorId: 1,
      transactionId: tx,
      value: ocmfRecord(meterKey(), { tx: 'B', kWh: 0 }),
    });
    // CP002 has no open transaction either: a reading naming none is dropped with a warning.
    await intruder.signedMeterValue({ connectorId: 1, value: ocmfRecord(meterKey(), { tx: 'B', kWh: 0 }) });
    // Its plain register reading for that transaction, and a StopTransaction naming it with signed transactionData.
    await intruder.meterValues({ connectorId: 1, transactionId: tx, wh: 5000, context: 'Transaction.End' });
    expect(
      await intruder.stopTransaction({
        transactionId: tx,
        meterStop: 5000,
        signedValues: [{ value: ocmfRecord(meterKey(), { tx: 'E', kWh: 5 }) }],
        energyValues: [{ wh: 5000 }],
      }),
    ).toEqual({});
    expect(api.db.prepare('SELECT COUNT(*) AS n FROM signed_readings').get()).toEqual({ n: 0 });
    expect(api.db.prepare('SELECT COUNT(*) AS n FROM transaction_readings').get()).toEqual({ n: 0 });
    expect(api.db.prepare('SELECT stopped_at FROM transactions WHERE id = ?').get(tx)).toEqual({ stopped_at: null });
    expect(api.logged('signed meter values for no transaction of this station: dropped')).toHaveLength(1);
  });
});

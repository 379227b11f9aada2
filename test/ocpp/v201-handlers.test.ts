import { describe, expect, it, onTestFinished } from 'vitest';
import { createAuthorizer, putIdTag } from '../../src/authorization/index.js';
import { parseConfig } from '../../src/config/index.js';
import { summarisedWarn } from '../../src/log/index.js';
import { CallLanes } from '../../src/ocpp/call-lane.js';
import type { StationHandlerDeps } from '../../src/ocpp/call-handling.js';
import type { StationClient } from '../../src/ocpp/connections.js';
import type { Ocpp201Actions } from '../../src/ocpp/index.js';
import type { RpcHandler } from '../../src/ocpp/rpc.js';
import { SignCertificateThrottle } from '../../src/ocpp/sign-certificate-throttle.js';
import { ConnectionMemory } from '../../src/ocpp/v201/connection-memory.js';
import { registerV201Handlers } from '../../src/ocpp/v201/handlers.js';
import { Site } from '../../src/site/index.js';
import { DirectWriter, openDatabase } from '../../src/store/index.js';
import { tempSiteForTest } from '../support/for-test.js';
import { baseConfig } from '../support/temp-site.js';
import { capturedLogger } from '../support/captured-log.js';

type Request<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][0];
type Response<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][1];

/**
 * The 2.0.1 handlers without a daemon or a socket: registered on a stand-in for ocpp-rpc's connection (it keeps
 * what they register and records what they call), over the real domain on a temporary SQLite database.
 */
async function handlersForTest() {
  const temp = tempSiteForTest();
  const config = parseConfig(
    JSON.stringify({
      ...baseConfig(temp.dataDir),
      sites: [{ id: 's1', stations: [{ id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] }] }],
    }),
  );
  const db = openDatabase(temp.dataDir);
  onTestFinished(() => {
    db.close();
  });
  const site = new Site({ db, config: () => config });
  const { logger, lines: logs } = capturedLogger('debug');
  const authorizer = await createAuthorizer({
    writer: new DirectWriter(db),
    config: () => config,
    site,
    logger,
    connectUpstream: () => Promise.reject(new Error('no CPO')),
  });
  onTestFinished(() => authorizer.close());

  const handlers = new Map<string, RpcHandler>();
  const sent: Array<[string, unknown]> = [];
  const client = {
    session: { stationId: 'EV201', admission: 'known', passwordHash: null },
    handle: (action: string, handler: RpcHandler) => void handlers.set(action, handler),
    call: (action: string, params: unknown) => (sent.push([action, params]), Promise.resolve({ status: 'Accepted' })),
  } as unknown as StationClient;
  const deps: StationHandlerDeps = {
    site,
    authorizer,
    config: () => config,
    logger,
    warn: summarisedWarn(logger, { perInterval: 10, intervalMs: 60_000 }),
    countCall: () => undefined,
    signCertificateThrottle: new SignCertificateThrottle(),
    lanes: new CallLanes({ log: logger }),
  };
  /** A new connection of the station: the handlers as registered for it, with nothing remembered from before. */
  const connect = () => {
    registerV201Handlers(client, deps);
    return <A extends keyof Ocpp201Actions & string>(action: A, params: Request<A>): Promise<Response<A>> =>
      Promise.resolve(
        handlers.get(action)!({
          method: action,
          params,
          messageId: 'm',
          signal: new AbortController().signal,
        }) as Response<A>,
      );
  };
  const events = (type: string) =>
    db
      .prepare<[string], { payload: string }>('SELECT payload FROM events WHERE event_type = ? ORDER BY seq')
      .all(type)
      .map((r) => JSON.parse(r.payload) as Record<string, unknown>);
  return { db, logs, sent, connect, events, deps };
}

const energy = (wh: number): Request<'MeterValues'>['meterValue'] => [
  { timestamp: '2026-11-26T10:00:00Z', sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register' }] },
];

function event(
  eventType: Request<'TransactionEvent'>['eventType'],
  transactionId: string,
  extra: Partial<Request<'TransactionEvent'>> & {
    chargingState?: Request<'TransactionEvent'>['transactionInfo']['chargingState'];
  } = {},
): Request<'TransactionEvent'> {
  const { chargingState, ...rest } = extra;
  return {
    eventType,
    timestamp: '2026-11-26T10:00:00Z',
    triggerReason: 'Authorized',
    seqNo: 0,
    transactionInfo: { transactionId, ...(chargingState && { chargingState }) },
    ...rest,
  };
}

describe('the OCPP 2.0.1 handlers, without a daemon', () => {
  it('a session: statuses as 1.6 words, StartTransaction with the driver, StopTransaction at Ended', async () => {
    const t = await handlersForTest();
    putIdTag(t.db, { idTag: 'TAG-1', status: 'Accepted', expiresAt: null, siteId: null });
    const call = t.connect();
    expect(
      await call('BootNotification', { chargingStation: { vendorName: 'ACME', model: 'W' }, reason: 'PowerUp' }),
    ).toMatchObject({ status: 'Accepted' });
    await call('StatusNotification', {
      timestamp: '2026-11-26T10:00:00Z',
      connectorStatus: 'Occupied',
      evseId: 1,
      connectorId: 1,
    });
    expect(
      await call(
        'TransactionEvent',
        event('Started', 'tx-1', {
          evse: { id: 1 },
          idToken: { idToken: 'TAG-1', type: 'ISO14443' },
          meterValue: energy(1000),
        }),
      ),
    ).toEqual({
      idTokenInfo: { status: 'Accepted' },
    });
    await call('TransactionEvent', event('Updated', 'tx-1', { chargingState: 'Charging' }));
    await call('MeterValues', { evseId: 1, meterValue: energy(3500) });
    await call('TransactionEvent', event('Ended', 'tx-1', { timestamp: '2026-11-26T11:00:00Z' }));

    expect(t.events('ChargePointStatus').map((e) => e.status)).toEqual(['Preparing', 'Charging', 'Finishing']);
    expect(t.events('StartTransaction')).toEqual([
      expect.objectContaining({ connectorId: 1, idTag: 'TAG-1', meterStart: 1 }),
    ]);
    // No energy in the Ended event: the last MeterValues reading of its EVSE is the bill's end.
    expect(t.events('StopTransaction')).toEqual([expect.objectContaining({ meterStart: 1, meterStop: 3.5 })]);
  });

  it('a transaction begun before its driver is billed from its start after a reconnect, which forgets the connection memory', async () => {
    const t = await handlersForTest();
    const first = t.connect();
    await first('TransactionEvent', event('Started', 'tx-2', { evse: { id: 1 }, meterValue: energy(500) }));
    expect(t.events('StartTransaction')).toEqual([]);
    const second = t.connect();
    // This event names no EVSE: the domain, not the lost connection memory, knows where the transaction is.
    await second(
      'TransactionEvent',
      event('Updated', 'tx-2', { idToken: { idToken: 'TAG-2', type: 'ISO14443' }, timestamp: '2026-11-26T10:05:00Z' }),
    );
    expect(t.events('StartTransaction')).toEqual([
      expect.objectContaining({ connectorId: 1, idTag: 'TAG-2', meterStart: 0.5 }),
    ]);
  });

  it('SignCertificate without a station CA is Rejected with a warning, and the station is not called', async () => {
    const t = await handlersForTest();
    const call = t.connect();
    expect(await call('SignCertificate', { csr: '-----BEGIN CERTIFICATE REQUEST-----' })).toEqual({
      status: 'Rejected',
    });
    expect(t.logs.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
      'SignCertificate refused: only a ChargingStationCertificate, and only with a station CA',
    ]);
    expect(t.sent).toEqual([]);
  });

  it("SignCertificate with the station CA's certificate sends it in its own CertificateSigned call", async () => {
    const t = await handlersForTest();
    t.deps.issueStationCertificate = (csr, stationId) => Promise.resolve(`chain for ${stationId}`);
    const call = t.connect();
    expect(await call('SignCertificate', { csr: '-----BEGIN CERTIFICATE REQUEST-----' })).toEqual({
      status: 'Accepted',
    });
    await expect
      .poll(() => t.sent)
      .toEqual([
        ['CertificateSigned', { certificateChain: 'chain for EV201', certificateType: 'ChargingStationCertificate' }],
      ]);
    await expect.poll(() => t.logs.map((l) => l.msg)).toContain('station certificate sent');
  });
});

describe('ConnectionMemory', () => {
  it('remembers at most 64 transactions and EVSEs, the most recent, whatever ids a station makes up', () => {
    const memory = new ConnectionMemory();
    for (let i = 0; i < 1000; i += 1) {
      memory.placeTransaction(`made-up-${i}`, 1 + (i % 3));
      memory.noteEnergy(i, i);
      memory.changeActivity(i, { connectorStatus: 'Available' });
    }
    expect(memory.evseOf('made-up-935')).toBeUndefined();
    expect(memory.evseOf('made-up-936')).toBe(1 + (936 % 3));
    expect(memory.energyOf(935)).toBeUndefined();
    expect(memory.energyOf(999)).toBe(999);
    expect(memory.activityOf(935)).toBeUndefined();
    expect(memory.activityOf(999)).toEqual({ connectorStatus: 'Available' });
  });
});

import { describe, expect, it, onTestFinished } from 'vitest';
import fc from 'fast-check';
import { OCPP16 } from '../../src/ocpp/rpc.js';
import { GroupCommit } from '../../src/store/index.js';
import { UplinkQueue } from '../../src/uplink/queue.js';
import { StationLink, type LinkSettings, type LocalStation } from '../../src/uplink/station-link.js';
import { v16Dialect } from '../../src/uplink/v16/dialect.js';
import { capturedLogger } from '../support/captured-log.js';
import { callError, FakeLinkClient, ManualClock, settle } from '../support/fake-link-client.js';
import { databasePerTest } from '../support/temp-database.js';

/*
 * One station's link on its own (docs/design/uplink.md#uplink-what-the-csms-sees): a CSMS client and a clock under the test's control, the
 * real queue on a real SQLite file.
 */

const SETTINGS: LinkSettings = {
  url: 'ws://csms.invalid/ocpp',
  securityProfile: 0,
  password: () => undefined,
  maxMessageBytes: 65_536,
  callTimeoutMs: 5000,
  transactionMessageAttempts: 3,
  transactionMessageRetryIntervalS: 60,
  reconnectMs: { initial: 1000, max: 10_000 },
};

const BOOT = { chargePointVendor: 'Acme', chargePointModel: 'Wallbox' };

/** What the CSMS answers by default: every boot Accepted, starts with ids from 900, the rest empty. */
function acceptEverything(): (method: string) => unknown {
  let nextTransactionId = 900;
  return (method) => {
    if (method === 'BootNotification')
      return { status: 'Accepted', interval: 300, currentTime: '2026-01-01T00:00:00Z' };
    if (method === 'StartTransaction') return { transactionId: nextTransactionId++, idTagInfo: { status: 'Accepted' } };
    return {};
  };
}

const store = databasePerTest();

/** A link of station CP001 under test, opened; what its queue holds is appended with `queue`. */
async function openLink(options: { bootInfo?: object; settings?: Partial<LinkSettings>; stationId?: string } = {}) {
  const stationId = options.stationId ?? 'CP001';
  const clock = new ManualClock();
  const { logger, lines } = capturedLogger('debug');
  const writer = new GroupCommit(store.db);
  let link: StationLink | undefined;
  const queue = new UplinkQueue(
    writer,
    () => ({ messages: 100, bytes: 16 * 1024 * 1024 }),
    () => link?.wake(),
    logger,
  );
  const relayed: Array<{ action: string; params: unknown; answer(value: unknown): void }> = [];
  const station: LocalStation = {
    bootInfo: () => ('bootInfo' in options ? options.bootInfo : BOOT),
    statuses: () => [{ connectorId: 1, status: 'Available', errorCode: 'NoError' }],
    relay: (action, params) => new Promise((answer) => relayed.push({ action, params, answer })),
    chargingProfileCall: () => undefined,
    drained: () => undefined,
  };
  let client: FakeLinkClient | undefined;
  link = new StationLink(
    stationId,
    { ...SETTINGS, ...options.settings },
    queue,
    station,
    logger,
    v16Dialect(stationId, queue, logger),
    {
      clock,
      createClient: () => (client = new FakeLinkClient(clock)),
    },
  );
  client!.answer = acceptEverything();
  onTestFinished(async () => {
    await link.close();
    queue.flush();
  });
  const append = (action: string, payload: object, transactionId?: number) =>
    writer.write(() =>
      queue.append(
        stationId,
        OCPP16,
        { action, payload, ...(transactionId !== undefined && { transactionId }) },
        new Date(clock.now()),
      ),
    );
  return { link, client: client!, clock, queue, lines, relayed, append, open: async () => (link.open(), settle()) };
}

const start = (n: number) => ({ connectorId: 1, idTag: `TAG-${n}`, meterStart: n, timestamp: '2026-01-01T00:00:00Z' });
const stop = (n: number) => ({ transactionId: n, meterStop: n + 10, timestamp: '2026-01-01T00:10:00Z' });

describe('StationLink, alone with a fake CSMS client and a clock', () => {
  it('reconnects 1, 2, 4, 8, 10, 10 s after sockets refused or closed at once; a socket that stayed up 30 s starts again at 1 s', async () => {
    const { client, clock, open } = await openLink();
    client.acceptConnects = false;
    await open();
    await clock.advance(1000 + 2000);
    client.acceptConnects = true;
    await clock.advance(4000);
    expect(client.connects.map((at) => at - client.connects[0]!)).toEqual([0, 1000, 3000, 7000]);
    // Taken, booted, closed at once: no success for the back-off.
    const drops: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      drops.push(clock.now());
      client.drop();
      await clock.advance(10_000);
    }
    expect(client.connects.slice(4).map((at, i) => at - drops[i]!)).toEqual([8000, 10_000, 10_000]);
    expect(client.of('BootNotification')).toHaveLength(4);

    await clock.advance(30_000);
    const dropped = clock.now();
    client.drop();
    await clock.advance(10_000);
    expect(client.connects.at(-1)! - dropped).toBe(1000);
  });

  it('a Pending boot holds the queue and is asked again at its interval; no answer, after 60 s; Accepted sends the queue, then the statuses', async () => {
    const { link, client, clock, append, open } = await openLink();
    append('StartTransaction', start(1), 1);
    await settle();
    let boot: 'Pending' | 'silent' | 'Accepted' = 'Pending';
    const answers = acceptEverything();
    client.answer = (method) => {
      if (method !== 'BootNotification') return answers(method);
      if (boot === 'silent') return callError('GenericError');
      return { status: boot, interval: 7, currentTime: '2026-01-01T00:00:00Z' };
    };
    await open();
    expect(link.state).toBe('pending');
    await clock.advance(6999);
    expect(client.methods()).toEqual(['BootNotification']);
    boot = 'silent';
    await clock.advance(1);
    expect(client.methods()).toEqual(['BootNotification', 'BootNotification']);
    boot = 'Accepted';
    await clock.advance(59_999);
    expect(client.of('BootNotification')).toHaveLength(2);
    await clock.advance(1);
    expect(link.state).toBe('accepted');
    expect(client.methods()).toEqual([
      'BootNotification',
      'BootNotification',
      'BootNotification',
      'StartTransaction',
      'StatusNotification',
    ]);
  });

  it('a station with no boot yet: connected, the link waits for its first BootNotification, which opens the queue', async () => {
    const { link, client, append, open } = await openLink({ bootInfo: undefined });
    append('StartTransaction', start(1), 1);
    await open();
    expect(link.state).toBe('booting');
    expect(client.methods()).toEqual([]);
    link.live('BootNotification', BOOT);
    await settle();
    expect(client.methods()).toEqual(['BootNotification', 'StartTransaction', 'StatusNotification']);
    expect(client.of('BootNotification')[0]!.params).toEqual(BOOT);
  });

  it('sends the queue one message at a time in order, each naming the id the CSMS gave its start; live messages only after the statuses', async () => {
    const { link, client, append, open } = await openLink();
    append('StartTransaction', start(1), 1);
    append('MeterValues', { connectorId: 1, transactionId: 1, meterValue: [] }, 1);
    append('StopTransaction', stop(1), 1);
    await settle();
    const answers = acceptEverything();
    client.answer = (method) => (method === 'StartTransaction' ? undefined : answers(method));
    await open();
    link.live('Heartbeat', {});
    expect(client.methods()).toEqual(['BootNotification', 'StartTransaction']);
    expect(client.mostInFlight).toBe(1);
    client.of('StartTransaction')[0]!.resolve({ transactionId: 4711, idTagInfo: { status: 'Accepted' } });
    await settle();
    expect(client.methods()).toEqual([
      'BootNotification',
      'StartTransaction',
      'MeterValues',
      'StopTransaction',
      'StatusNotification',
    ]);
    expect(client.of('MeterValues')[0]!.params.transactionId).toBe(4711);
    expect(client.of('StopTransaction')[0]!.params.transactionId).toBe(4711);
    link.live('Heartbeat', {});
    await settle();
    expect(client.methods().at(-1)).toBe('Heartbeat');
    expect(client.mostInFlight).toBe(1);
  });

  it('a CALLERROR saying the message is wrong: tried 3 times, 60 and 120 s apart, then dropped with its transaction, counted', async () => {
    const { client, clock, queue, lines, append, open } = await openLink();
    const answers = acceptEverything();
    client.answer = (method) => (method === 'StartTransaction' ? callError('FormationViolation') : answers(method));
    append('StartTransaction', start(1), 1);
    append('StopTransaction', stop(1), 1);
    append('StartTransaction', start(2), 2);
    await settle();
    await open();
    await clock.advance(60_000 + 120_000);
    const tries = client.of('StartTransaction').filter((c) => c.params.idTag === 'TAG-1');
    expect(tries.map((c) => c.at - tries[0]!.at)).toEqual([0, 60_000, 180_000]);
    expect(client.of('StopTransaction')).toEqual([]);
    expect(lines.filter((l) => l.msg === 'CSMS refused a queued message every time: dropped')).toHaveLength(1);
    expect(queue.droppedCounts().get('CP001')).toBe(2);
    expect(client.of('StartTransaction').at(-1)!.params.idTag).toBe('TAG-2');
  });

  it("the CSMS's own trouble (GenericError, InternalError, no answer) is retried from timeoutMs doubling to the interval, never dropped", async () => {
    const { client, clock, queue, append, open } = await openLink();
    const answers = acceptEverything();
    const troubles: Array<Error | undefined> = [
      callError('GenericError'),
      callError('InternalError'),
      callError('GenericError'),
      callError('SecurityError'),
      callError('GenericError'),
      callError('InternalError'),
    ];
    client.answer = (method) =>
      method === 'StartTransaction' ? (troubles.shift() ?? answers(method)) : answers(method);
    append('StartTransaction', start(1), 1);
    await settle();
    await open();
    await clock.advance(5000 + 10_000 + 20_000 + 40_000 + 60_000 + 60_000);
    const tries = client.of('StartTransaction');
    expect(tries.slice(1).map((c, i) => c.at - tries[i]!.at)).toEqual([5000, 10_000, 20_000, 40_000, 60_000, 60_000]);
    expect(queue.droppedCounts().get('CP001')).toBeUndefined();
    expect(client.methods().at(-1)).toBe('StatusNotification');
  });

  it('one CSMS call at a time: another while one is in progress is answered GenericError at once, the next after it is relayed', async () => {
    const { client, relayed, lines, open } = await openLink();
    await open();
    const first = client.fromCsms('DataTransfer', { vendorId: 'csms', data: 'first' });
    await settle();
    await expect(client.fromCsms('DataTransfer', { vendorId: 'csms', data: 'second' })).rejects.toMatchObject({
      rpcErrorCode: 'GenericError',
      message: 'a call from the CSMS is already in progress',
    });
    expect(relayed.map((r) => r.params)).toEqual([{ vendorId: 'csms', data: 'first' }]);
    relayed[0]!.answer({ status: 'Accepted' });
    expect(await first).toEqual({ status: 'Accepted' });
    expect(lines.filter((l) => l.msg === 'CSMS sent calls while one was in progress: answered GenericError')).toEqual([
      expect.objectContaining({ refused: 1 }),
    ]);
    const third = client.fromCsms('DataTransfer', { vendorId: 'csms', data: 'third' });
    await settle();
    relayed[1]!.answer({ status: 'Rejected' });
    expect(await third).toEqual({ status: 'Rejected' });
  });

  it('closed from any state it stays closed: no timer connects or boots again', async () => {
    const { link, client, clock, open } = await openLink();
    client.answer = () => ({ status: 'Pending', interval: 5, currentTime: '2026-01-01T00:00:00Z' });
    await open();
    expect(link.state).toBe('pending');
    await link.close();
    client.drop();
    await clock.advance(600_000);
    expect(link.state).toBe('closed');
    expect(client.connects).toHaveLength(1);
    expect(client.of('BootNotification')).toHaveLength(1);
  });
});

/** What the CSMS does next in the model test. */
type Step =
  | { kind: 'queue' }
  | { kind: 'drop' }
  | { kind: 'connects'; accept: boolean }
  | { kind: 'boot'; answer: 'Accepted' | 'Pending' | 'Rejected' | 'GenericError' }
  | { kind: 'calls'; answer: 'Accepted' | 'GenericError' | 'InternalError' }
  | { kind: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant({ kind: 'queue' as const }),
  fc.constant({ kind: 'drop' as const }),
  fc.boolean().map((accept) => ({ kind: 'connects' as const, accept })),
  fc
    .constantFrom('Accepted' as const, 'Pending' as const, 'Rejected' as const, 'GenericError' as const)
    .map((answer) => ({ kind: 'boot' as const, answer })),
  fc
    .constantFrom('Accepted' as const, 'GenericError' as const, 'InternalError' as const)
    .map((answer) => ({ kind: 'calls' as const, answer })),
  fc.integer({ min: 0, max: 70_000 }).map((ms) => ({ kind: 'advance' as const, ms })),
);

describe('StationLink, a model test: whatever the CSMS does, the link keeps its promises', () => {
  it('one call in flight, the queue only after an Accepted boot on that socket and in order, reconnects >= 1 s apart; once the CSMS behaves, every message arrives', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        run += 1;
        const { link, client, clock, append, open } = await openLink({ stationId: `M${run}` });
        let boot: string = 'Accepted';
        let calls: string = 'Accepted';
        const acceptedOn = new Set<number>();
        const answers = acceptEverything();
        client.answer = (method) => {
          const answer = method === 'BootNotification' ? boot : calls;
          if (answer === 'GenericError' || answer === 'InternalError') return callError(answer);
          if (method === 'BootNotification') {
            if (answer === 'Accepted') acceptedOn.add(client.socket);
            return { status: answer, interval: 10, currentTime: '2026-01-01T00:00:00Z' };
          }
          return answers(method);
        };
        let queued = 0;
        await open();
        for (const s of steps) {
          if (s.kind === 'queue') {
            queued += 1;
            append('StartTransaction', start(queued), queued);
          } else if (s.kind === 'drop' && client.state === 1) client.drop();
          else if (s.kind === 'connects') client.acceptConnects = s.accept;
          else if (s.kind === 'boot') boot = s.answer;
          else if (s.kind === 'calls') calls = s.answer;
          else if (s.kind === 'advance') await clock.advance(s.ms);
          await settle();
          expect(client.mostInFlight).toBeLessThanOrEqual(1);
          if (link.state === 'accepted') expect(acceptedOn.has(client.socket)).toBe(true);
        }
        [boot, calls, client.acceptConnects] = ['Accepted', 'Accepted', true];
        await clock.advance(600_000);

        const starts = client.of('StartTransaction');
        for (const c of starts) expect(acceptedOn.has(c.socket), `sent on socket ${c.socket}`).toBe(true);
        const order = starts.map((c) => c.params.meterStart as number);
        expect(order).toEqual([...order].sort((a, b) => a - b));
        expect(new Set(order)).toEqual(new Set(Array.from({ length: queued }, (_, i) => i + 1)));
        const gaps = client.connects.slice(1).map((at, i) => at - client.connects[i]!);
        for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(1000);
        expect(link.state).toBe('accepted');
        await link.close();
      }),
      { numRuns: 100 },
    );
  });
});

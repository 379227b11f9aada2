import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { putIdTag } from '../../src/authorization/index.js';
import { CP001, siteWith, daemonForTest } from '../support/daemon.js';

const CP002 = { id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] };
const FRAMES = 10_000;

const ACTIONS = [
  'BootNotification',
  'Heartbeat',
  'StatusNotification',
  'Authorize',
  'StartTransaction',
  'StopTransaction',
  'MeterValues',
  'DataTransfer',
  'FirmwareStatusNotification',
  'DiagnosticsStatusNotification',
  'SelfDestruct',
  '',
];

/** Params that are often almost right: the fields stations send, with wrong types, ranges and extras mixed in. */
const params = fc.oneof(
  fc.record(
    {
      connectorId: fc.oneof(fc.integer({ min: -2, max: 100 }), fc.string({ maxLength: 4 })),
      idTag: fc.oneof(fc.constantFrom('TAG-1', 'TAG-2'), fc.string({ maxLength: 30 })),
      meterStart: fc.oneof(fc.integer({ min: -1000, max: 10_000_000 }), fc.double()),
      meterStop: fc.integer({ min: -1000, max: 10_000_000 }),
      timestamp: fc.oneof(
        fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString()),
        fc.string({ maxLength: 10 }),
      ),
      transactionId: fc.integer({ min: -1, max: 60 }),
      status: fc.constantFrom('Available', 'Preparing', 'Charging', 'Faulted', 'Bogus'),
      errorCode: fc.constantFrom('NoError', 'PowerMeterFailure', 'Bogus'),
      chargePointVendor: fc.string({ maxLength: 25 }),
      chargePointModel: fc.string({ maxLength: 25 }),
      vendorId: fc.string({ maxLength: 10 }),
      meterValue: fc.array(
        fc.record({
          timestamp: fc.constant('2026-11-24T12:00:00Z'),
          sampledValue: fc.array(fc.record({ value: fc.string({ maxLength: 6 }) }), { maxLength: 2 }),
        }),
        { maxLength: 2 },
      ),
      junk: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

const call = fc
  .tuple(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom(...ACTIONS), params)
  .map(([id, action, p]) => JSON.stringify([2, id, action, p]));
const frame = fc.oneof(
  { weight: 6, arbitrary: call },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(3, 4), fc.string({ maxLength: 40 }), fc.jsonValue({ maxDepth: 2 }))
      .map((t) => JSON.stringify(t)),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.tuple(call, fc.nat()).map(([text, cut]) => text.slice(0, cut % (text.length + 1))) },
);

/** The message id a frame is a CALL with, if it is one ocpp-rpc must answer. */
function callId(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as unknown;
    return Array.isArray(parsed) && parsed[0] === 2 && typeof parsed[1] === 'string' ? parsed[1] : undefined;
  } catch {
    return undefined;
  }
}

/** A raw station socket: send a frame, then wait for an answer, the socket closing, or a quiet spell. */
class FuzzSocket {
  private readonly answers: string[] = [];
  private wake: (() => void) | undefined;
  closed = false;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => (this.answers.push(data.toString()), this.wake?.()));
    ws.on('close', () => ((this.closed = true), this.wake?.()));
  }

  static open(url: string): Promise<FuzzSocket> {
    const ws = new WebSocket(url, 'ocpp1.6');
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new FuzzSocket(ws)));
      ws.once('error', reject);
    });
  }

  async exchange(text: string, quietMs: number): Promise<string | 'closed' | 'quiet'> {
    this.answers.length = 0;
    this.ws.send(text);
    const deadline = Date.now() + quietMs;
    while (this.answers.length === 0 && !this.closed && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, Math.max(1, deadline - Date.now()));
      });
    }
    return this.answers[0] ?? (this.closed ? 'closed' : 'quiet');
  }

  close(): void {
    this.ws.terminate();
  }
}

/** Issue 13: 10,000 random and mutated OCPP frames at one daemon. */
describe('fuzzing the OCPP listener', () => {
  it('answers every call or closes the socket, never crashes, and the other station never notices', async () => {
    const t = await daemonForTest(siteWith([], [CP001, CP002]));
    putIdTag(t.db, { idTag: 'TAG-1', status: 'Accepted', expiresAt: null, siteId: null });
    const bystander = await t.connect('CP002');
    await bystander.boot();

    let socket = await FuzzSocket.open(`${t.url}/CP001`);
    const unanswered: string[] = [];
    const answers: unknown[] = [];
    for (const text of fc.sample(frame, { numRuns: FRAMES, seed: 20261124 })) {
      if (socket.closed) {
        socket = await FuzzSocket.open(`${t.url}/CP001`);
      }
      const id = callId(text);
      // A CALL must be answered; anything else may get a CALLERROR or nothing, so only a short wait.
      const outcome = await socket.exchange(text, id === undefined ? 5 : 5_000);
      if (id !== undefined && outcome === 'quiet') unanswered.push(text);
      if (id !== undefined && outcome !== 'quiet' && outcome !== 'closed')
        answers.push((JSON.parse(outcome) as unknown[])[0]);
    }
    socket.close();

    expect(unanswered).toEqual([]);
    // Every answer to a call is a CALLRESULT or a CALLERROR.
    expect(new Set(answers)).toEqual(new Set([3, 4]));
    // The bystander's session works as if nothing happened, and the daemon still reports.
    expect(await bystander.heartbeat()).toEqual({ currentTime: expect.any(String) });
    const tx = await bystander.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 0 });
    expect(await bystander.stopTransaction({ transactionId: tx, meterStop: 1000 })).toEqual({});
    expect(t.events('StopTransaction').filter((e) => e.payload.stationId === 'CP002')).toHaveLength(1);
    expect((await fetch(`http://127.0.0.1:${t.daemon.httpPort}/health`)).status).toBe(200);
  }, 240_000);
});

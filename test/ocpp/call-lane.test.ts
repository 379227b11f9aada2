import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallLane, CallLanes, type CallClass } from '../../src/ocpp/call-lane.js';
import { RelayQueueFullError, StationCallGivenUpError, StationTimeoutError } from '../../src/ocpp/errors.js';
import type { RpcConnection } from '../../src/ocpp/rpc.js';
import { capturedLogger } from '../support/captured-log.js';

/*
 * The lane alone (call-lane.ts): the connection under it is a fake that holds each call until the test answers it, so
 * the order, the bounds and the give-up can be seen call by call. Timers and the clock are vitest's fake ones.
 */

const BOUNDS = { relaysQueued: 3, giveUpMs: 1_000 };

interface Sent {
  action: string;
  signal: AbortSignal;
  answer(value?: unknown): void;
  fail(err: Error): void;
}

/** A connection that records each call it is given and holds it until the test answers it. */
function fakeConnection(sent: Sent[]): Pick<RpcConnection, 'identity' | 'call'> {
  return {
    identity: 'CP001',
    call: (action: string, _params: unknown, options?: { signal?: AbortSignal }) =>
      new Promise((resolve, reject) => {
        sent.push({ action, signal: options!.signal!, answer: resolve, fail: reject });
      }),
  };
}

function laneOverFake(): { lane: CallLane; sent: Sent[]; warnings: string[]; dropped: string[] } {
  const sent: Sent[] = [];
  const warnings: string[] = [];
  const dropped: string[] = [];
  const connection = fakeConnection(sent);
  const lane = new CallLane(connection, {
    bounds: BOUNDS,
    warn: (_fields, message) => warnings.push(message),
    dropped: (reason) => dropped.push(reason),
    now: () => Date.now(),
  });
  return { lane, sent, warnings, dropped };
}

/** Lets the lane's promise callbacks run (it sends the next call once the previous one has settled). */
const settled = () => vi.advanceTimersByTimeAsync(0);

describe("a station's call lane", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends one call at a time, the next once the station has answered', async () => {
    const { lane, sent } = laneOverFake();
    const first = lane.call('operation', 'Reset', {});
    const second = lane.call('operation', 'UnlockConnector', {});
    await settled();
    expect(sent.map((s) => s.action)).toEqual(['Reset']);
    sent[0]!.answer({ status: 'Accepted' });
    expect(await first).toEqual({ status: 'Accepted' });
    await settled();
    expect(sent.map((s) => s.action)).toEqual(['Reset', 'UnlockConnector']);
    sent[1]!.answer({ status: 'Unlocked' });
    expect(await second).toEqual({ status: 'Unlocked' });
  });

  it("sends load management's limits first, then the CSMS's calls, then operations, each class first come first served", async () => {
    const { lane, sent } = laneOverFake();
    const calls: Array<[CallClass, string]> = [
      ['operation', 'Reset'],
      ['operation', 'op-1'],
      ['relay', 'relay-1'],
      ['limit', 'limit-1'],
      ['operation', 'op-2'],
      ['relay', 'relay-2'],
      ['limit', 'limit-2'],
    ];
    const answers = calls.map(([callClass, action]) => lane.call(callClass, action, {}));
    for (let i = 0; i < calls.length; i += 1) {
      await settled();
      sent[i]!.answer(sent[i]!.action);
    }
    await Promise.all(answers);
    expect(sent.map((s) => s.action)).toEqual(['Reset', 'limit-1', 'limit-2', 'relay-1', 'relay-2', 'op-1', 'op-2']);
  });

  it('refuses a relayed call at once beyond relaysQueued waiting; limits and operations are not counted', async () => {
    const { lane, sent, warnings, dropped } = laneOverFake();
    const inFlight = lane.call('relay', 'relay-0', {});
    const queued = Array.from({ length: BOUNDS.relaysQueued }, (_, i) => lane.call('relay', `relay-${i + 1}`, {}));
    const others = [lane.call('limit', 'limit-1', {}), lane.call('operation', 'op-1', {})];
    await expect(lane.call('relay', 'relay-over', {})).rejects.toThrow(
      new RelayQueueFullError('CP001', 'relay-over', BOUNDS.relaysQueued),
    );
    await expect(lane.call('relay', 'relay-over', {})).rejects.toMatchObject({
      ocppErrorCode: 'GenericError',
      code: 'CHARGEGATE_STATION_CALL',
    });
    expect(warnings).toEqual([
      'CSMS call refused: too many already wait for this station',
      'CSMS call refused: too many already wait for this station',
    ]);
    expect(dropped).toEqual(['queue_full', 'queue_full']);
    // Never sent: what the station gets is the calls the lane took, in order.
    for (let i = 0; i < 2 + BOUNDS.relaysQueued + 1; i += 1) {
      await settled();
      sent[i]!.answer({});
    }
    await Promise.all([inFlight, ...queued, ...others]);
    expect(sent.map((s) => s.action)).toEqual(['relay-0', 'limit-1', 'relay-1', 'relay-2', 'relay-3', 'op-1']);
    // Room again: the next relayed call is taken.
    const again = lane.call('relay', 'relay-4', {});
    await settled();
    sent.at(-1)!.answer({ status: 'Accepted' });
    expect(await again).toEqual({ status: 'Accepted' });
  });

  it('gives a relayed call in flight up giveUpMs after it was sent once a limit waits, and sends the limit', async () => {
    const { lane, sent, warnings, dropped } = laneOverFake();
    const relay = lane.call('relay', 'GetConfiguration', {});
    const relayOutcome = relay.catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(300);
    const limit = lane.call('limit', 'SetChargingProfile', {});
    await vi.advanceTimersByTimeAsync(BOUNDS.giveUpMs - 300 - 1);
    expect(sent.map((s) => s.action)).toEqual(['GetConfiguration']);
    expect(sent[0]!.signal.aborted).toBe(false);

    await vi.advanceTimersByTimeAsync(1);
    expect(await relayOutcome).toEqual(new StationCallGivenUpError('CP001', 'GetConfiguration', BOUNDS.giveUpMs));
    expect(await relayOutcome).toBeInstanceOf(StationTimeoutError);
    expect(sent[0]!.signal.aborted).toBe(true);
    expect(sent.map((s) => s.action)).toEqual(['GetConfiguration', 'SetChargingProfile']);
    expect(warnings).toEqual(['call given up: the station did not answer while a load limit waited']);
    expect(dropped).toEqual(['given_up']);

    // The station's answer to the given-up call, late, changes nothing: the limit is still the one in flight.
    sent[0]!.answer({ configurationKey: [] });
    await settled();
    expect(sent).toHaveLength(2);
    sent[1]!.answer({ status: 'Accepted' });
    expect(await limit).toEqual({ status: 'Accepted' });
  });

  it('gives up at once a call that has been in flight longer than giveUpMs when a limit comes', async () => {
    const { lane, sent } = laneOverFake();
    const operation = lane.call('operation', 'Reset', {}).catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(5 * BOUNDS.giveUpMs);
    void lane.call('limit', 'SetChargingProfile', {});
    await settled();
    expect(await operation).toBeInstanceOf(StationCallGivenUpError);
    expect(sent.map((s) => s.action)).toEqual(['Reset', 'SetChargingProfile']);
  });

  it('never gives up a limit, nor a call when no limit waits', async () => {
    const { lane, sent } = laneOverFake();
    void lane.call('relay', 'relay-1', {});
    void lane.call('relay', 'relay-2', {});
    void lane.call('operation', 'op-1', {});
    await vi.advanceTimersByTimeAsync(10 * BOUNDS.giveUpMs);
    expect(sent.map((s) => [s.action, s.signal.aborted])).toEqual([['relay-1', false]]);

    sent[0]!.answer({});
    await settled();
    sent[1]!.answer({});
    await settled();
    void lane.call('limit', 'limit-1', {});
    void lane.call('limit', 'limit-2', {});
    sent[2]!.answer({});
    await vi.advanceTimersByTimeAsync(10 * BOUNDS.giveUpMs);
    expect(sent.map((s) => [s.action, s.signal.aborted])).toEqual([
      ['relay-1', false],
      ['relay-2', false],
      ['op-1', false],
      ['limit-1', false],
    ]);
  });

  it("passes the connection's error on and goes on with the next call", async () => {
    const { lane, sent } = laneOverFake();
    const failing = lane.call('operation', 'Reset', {});
    const next = lane.call('operation', 'UnlockConnector', {});
    await settled();
    sent[0]!.fail(new Error('Cannot make call while socket not open'));
    await expect(failing).rejects.toThrow('Cannot make call while socket not open');
    await settled();
    sent[1]!.answer({ status: 'Unlocked' });
    expect(await next).toEqual({ status: 'Unlocked' });
  });

  it('gives each connection of a station its own lane: what waits on a closed one does not hold the new one back', async () => {
    const { logger } = capturedLogger();
    const lanes = new CallLanes({ log: logger, bounds: BOUNDS });
    const oldSent: Sent[] = [];
    const newSent: Sent[] = [];
    const oldConnection = fakeConnection(oldSent) as RpcConnection;
    const newConnection = fakeConnection(newSent) as RpcConnection;
    expect(lanes.of(oldConnection)).toBe(lanes.of(oldConnection));
    void lanes.of(oldConnection).call('operation', 'Reset', {});
    void lanes.of(oldConnection).call('operation', 'UnlockConnector', {});
    const limit = lanes.of(newConnection).call('limit', 'SetChargingProfile', {});
    await settled();
    expect([oldSent.map((s) => s.action), newSent.map((s) => s.action)]).toEqual([['Reset'], ['SetChargingProfile']]);
    newSent[0]!.answer({ status: 'Accepted' });
    expect(await limit).toEqual({ status: 'Accepted' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpcError } from '../../src/ocpp/index.js';
import { startApiDaemon, type ApiDaemon } from '../http/api-harness.js';
import type { SimulatedStation } from '../support/station.js';
import { StationV201 } from '../support/station-v201.js';
import { CONFIG_GET_16, CONFIG_GET_201, CONFIG_SET_201 } from '../support/station-exchanges.js';

/**
 * Contract 11.1, each command x each outcome, on a real daemon with real ocpp-rpc stations of both versions: the
 * station does it (200), refuses it (409 station_refused with the answer), is not connected (503), does not answer
 * (504 within ocpp.callTimeoutMs + 1 s); what each version is sent, and the connector -> EVSE mapping of 2.0.1.
 */

const CALL_TIMEOUT_MS = 1_000;

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
      { id: 'CP009', chargePoints: [{ id: 'CP009-A', connectors: [1, 2] }] },
    ],
    meters: [],
    webhooks: [],
  },
];

type Protocol = '1.6' | '2.0.1';

/** One command as the API takes it, and what each version's station is sent and answers. */
interface Command {
  name: string;
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: unknown;
  action: string;
  /** What the station gets. */
  sent: unknown;
  /** The station's answer when it does it, and the status the API then shows. */
  done: { answer: unknown; status: string; result?: unknown };
  /** The station's answer when it refuses (a read is refused with a CALLERROR). */
  refused: { answer: unknown; status: string } | 'callerror';
}

const COMMANDS: Record<Protocol, Command[]> = {
  '1.6': [
    {
      name: 'reset hard',
      method: 'POST',
      path: 'reset',
      body: { type: 'hard' },
      action: 'Reset',
      sent: { type: 'Hard' },
      done: { answer: { status: 'Accepted' }, status: 'Accepted' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected' },
    },
    {
      name: 'unlock',
      method: 'POST',
      path: 'unlock',
      body: { connectorId: 2 },
      action: 'UnlockConnector',
      sent: { connectorId: 2 },
      done: { answer: { status: 'Unlocked' }, status: 'Unlocked' },
      refused: { answer: { status: 'UnlockFailed' }, status: 'UnlockFailed' },
    },
    {
      name: 'connector availability',
      method: 'POST',
      path: 'availability',
      body: { connectorId: 2, operative: false },
      action: 'ChangeAvailability',
      sent: { connectorId: 2, type: 'Inoperative' },
      done: { answer: { status: 'Scheduled' }, status: 'Scheduled' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected' },
    },
    {
      name: 'station availability',
      method: 'POST',
      path: 'availability',
      body: { operative: true },
      action: 'ChangeAvailability',
      sent: { connectorId: 0, type: 'Operative' },
      done: { answer: { status: 'Accepted' }, status: 'Accepted' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected' },
    },
    {
      name: 'trigger',
      method: 'POST',
      path: 'trigger',
      body: { message: 'StatusNotification', connectorId: 1 },
      action: 'TriggerMessage',
      sent: { requestedMessage: 'StatusNotification', connectorId: 1 },
      done: { answer: { status: 'Accepted' }, status: 'Accepted' },
      refused: { answer: { status: 'NotImplemented' }, status: 'NotImplemented' },
    },
    {
      name: 'config get',
      method: 'GET',
      path: 'configuration?key=HeartbeatInterval&key=Nonsense',
      action: 'GetConfiguration',
      sent: CONFIG_GET_16.sent,
      done: CONFIG_GET_16.done,
      refused: 'callerror',
    },
    {
      name: 'config set',
      method: 'PUT',
      path: 'configuration',
      body: { key: 'HeartbeatInterval', value: '60' },
      action: 'ChangeConfiguration',
      sent: { key: 'HeartbeatInterval', value: '60' },
      done: { answer: { status: 'RebootRequired' }, status: 'RebootRequired' },
      refused: { answer: { status: 'NotSupported' }, status: 'NotSupported' },
    },
    {
      name: 'clear-cache',
      method: 'POST',
      path: 'clear-cache',
      action: 'ClearCache',
      sent: {},
      done: { answer: { status: 'Accepted' }, status: 'Accepted' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected' },
    },
    {
      name: 'report',
      method: 'POST',
      path: 'report',
      action: 'GetConfiguration',
      sent: {},
      done: { answer: { configurationKey: [] }, status: 'Accepted' },
      refused: 'callerror',
    },
  ],
  '2.0.1': [
    {
      name: 'reset soft',
      method: 'POST',
      path: 'reset',
      body: { type: 'soft' },
      action: 'Reset',
      sent: { type: 'OnIdle' },
      done: { answer: { status: 'Scheduled' }, status: 'Scheduled' },
      refused: { answer: { status: 'Rejected', statusInfo: { reasonCode: 'Busy' } }, status: 'Rejected' },
    },
    {
      name: 'unlock',
      method: 'POST',
      path: 'unlock',
      body: { connectorId: 2 },
      action: 'UnlockConnector',
      sent: { evseId: 2, connectorId: 1 },
      done: { answer: { status: 'Unlocked' }, status: 'Unlocked' },
      refused: { answer: { status: 'OngoingAuthorizedTransaction' }, status: 'OngoingAuthorizedTransaction' },
    },
    {
      name: 'connector availability',
      method: 'POST',
      path: 'availability',
      body: { connectorId: 2, operative: false },
      action: 'ChangeAvailability',
      sent: { operationalStatus: 'Inoperative', evse: { id: 2 } },
      done: { answer: { status: 'Accepted' }, status: 'Accepted' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected' },
    },
    {
      name: 'station availability',
      method: 'POST',
      path: 'availability',
      body: { operative: false },
      action: 'ChangeAvailability',
      sent: { operationalStatus: 'Inoperative' },
      done: { answer: { status: 'Scheduled' }, status: 'Scheduled' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected' },
    },
    {
      name: 'trigger',
      method: 'POST',
      path: 'trigger',
      body: { message: 'Heartbeat' },
      action: 'TriggerMessage',
      sent: { requestedMessage: 'Heartbeat' },
      done: { answer: { status: 'Accepted' }, status: 'Accepted' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected' },
    },
    {
      name: 'config get',
      method: 'GET',
      path: 'configuration?key=OCPPCommCtrlr.HeartbeatInterval&key=EVSE[2].Power',
      action: 'GetVariables',
      sent: CONFIG_GET_201.sent,
      done: CONFIG_GET_201.done,
      refused: 'callerror',
    },
    {
      name: 'config set',
      method: 'PUT',
      path: 'configuration',
      body: { key: 'OCPPCommCtrlr.HeartbeatInterval', value: '60' },
      action: 'SetVariables',
      sent: CONFIG_SET_201.sent,
      done: CONFIG_SET_201.done,
      refused: CONFIG_SET_201.refused,
    },
    {
      name: 'clear-cache',
      method: 'POST',
      path: 'clear-cache',
      action: 'ClearCache',
      sent: {},
      done: { answer: { status: 'Accepted' }, status: 'Accepted' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected' },
    },
    {
      name: 'report',
      method: 'POST',
      path: 'report',
      action: 'GetBaseReport',
      sent: { requestId: expect.any(Number), reportBase: 'FullInventory' },
      done: { answer: { status: 'Accepted' }, status: 'Accepted' },
      refused: { answer: { status: 'NotSupported' }, status: 'NotSupported' },
    },
  ],
};

describe('station operations: each command x each outcome', () => {
  let api: ApiDaemon;
  let cp001: SimulatedStation;
  let cp201: StationV201;
  let token: string;
  const stationIds: Record<Protocol, string> = { '1.6': 'CP001', '2.0.1': 'CP201' };

  beforeAll(async () => {
    api = await startApiDaemon({
      ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: CALL_TIMEOUT_MS },
      sites: SITES,
      groups: [{ id: 'operators', scope: 'company:acme', permissions: ['stations:read', 'stations:operate'] }],
    });
    cp001 = await api.connect('CP001');
    await cp001.boot();
    cp201 = await StationV201.connect(api.url, 'CP201');
    await cp201.boot();
    token = await api.token(api.createApp('operators'));
  });
  afterAll(async () => {
    await cp201.close().catch(() => undefined);
    await api.stop();
  });

  /** The station answers `action` with answer (or a promise of it) and keeps what it was sent. */
  const answer = (protocol: Protocol, action: string, answerOf: () => unknown): unknown[] => {
    const received: unknown[] = [];
    const handler = (params: unknown) => (received.push(params), answerOf());
    if (protocol === '1.6') cp001.handle(action, handler);
    else cp201.handle(action as 'Reset', handler as () => never);
    return received;
  };
  const send = (command: Command, stationId: string) =>
    api.call(command.method, `/stations/${stationId}/${command.path}`, {
      token,
      ...(command.body !== undefined && { body: command.body }),
    });
  const cases = (['1.6', '2.0.1'] as const).flatMap((protocol) =>
    COMMANDS[protocol].map((command) => ({ protocol, command, label: `${protocol} ${command.name}` })),
  );

  it.each(cases)(
    '$label: done -> 200 with the answer, the station sent what the contract maps',
    async ({ protocol, command }) => {
      const received = answer(protocol, command.action, () => command.done.answer);
      const stationId = stationIds[protocol];
      const response = await send(command, stationId);
      expect(response.body).toMatchObject({ stationId, action: command.action, status: command.done.status });
      expect(response.status).toBe(200);
      expect(received).toEqual([command.sent]);
    },
  );

  it.each(cases)('$label: refused -> 409 station_refused with the answer', async ({ protocol, command }) => {
    const { refused } = command;
    answer(protocol, command.action, () => {
      if (refused === 'callerror') throw rpcError('NotSupported', 'not on this station');
      return refused.answer;
    });
    const stationId = stationIds[protocol];
    const response = await send(command, stationId);
    expect(response.status).toBe(409);
    const status = refused === 'callerror' ? 'NotSupported' : refused.status;
    expect(response.body).toMatchObject({ error: 'station_refused', stationId, action: command.action, status });
    expect(response.body.message).toContain(status);
  });

  it.each(cases)(
    '$label: no answer -> 504 station_timeout within callTimeoutMs + 1 s',
    async ({ protocol, command }) => {
      const late = answeredLate(command);
      answer(protocol, command.action, () => late);
      const started = performance.now();
      const response = await send(command, stationIds[protocol]);
      expect(response.status).toBe(504);
      expect(response.body).toMatchObject({ error: 'station_timeout' });
      expect(performance.now() - started).toBeLessThan(CALL_TIMEOUT_MS + 1_000);
    },
  );

  it.each(COMMANDS['1.6'])('$name on a station not connected -> 503 station_offline', async (command) => {
    const response = await send(command, 'CP009');
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ error: 'station_offline', message: expect.stringContaining('CP009') });
  });

  it('a request waiting behind others is answered 504 within 2 x callTimeoutMs of its arrival, never sent', async () => {
    const resets: unknown[] = [];
    cp001.handle('Reset', () => {
      resets.push('Reset');
      return new Promise((resolve) => setTimeout(() => resolve({ status: 'Accepted' }), CALL_TIMEOUT_MS * 3).unref());
    });
    const started = performance.now();
    const timed = async (type: string): Promise<Awaited<ReturnType<ApiDaemon['call']>> & { elapsedMs: number }> => {
      const response = await api.call('POST', '/stations/CP001/reset', { token, body: { type } });
      return { ...response, elapsedMs: performance.now() - started };
    };
    // The first times out at callTimeoutMs, the second is sent then and times out at 2 x; the ones behind them would
    // be sent at 2 x or later: they are answered at their deadline, unsent.
    const answers = await Promise.all(['soft', 'hard', 'soft', 'hard', 'soft'].map(timed));
    for (const response of answers) {
      expect(response.body).toMatchObject({ error: 'station_timeout' });
      expect(response.elapsedMs).toBeLessThan(2 * CALL_TIMEOUT_MS + 1_000);
    }
    expect(answers.at(-1)!.body.message).toContain('still waiting for the operations before it');
    expect(resets.length).toBeLessThanOrEqual(3);
    const shown = await api.call('GET', '/stations/CP001', { token });
    expect((shown.body.operations as unknown[]).slice(0, 5)).toEqual(
      Array.from({ length: 5 }, () =>
        expect.objectContaining({ action: 'Reset', answer: null, error: expect.objectContaining({ kind: 'timeout' }) }),
      ),
    );
  });

  /** An answer that comes after the call timed out: the station is not left with a handler that never settles. */
  function answeredLate(command: Command): Promise<unknown> {
    return new Promise((resolve) => setTimeout(() => resolve(command.done.answer), CALL_TIMEOUT_MS * 2).unref());
  }
});

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localSocketPath } from '../../src/cli/local-socket.js';
import { rpcError } from '../../src/ocpp/index.js';
import { runCli, runCliJson } from '../support/cli.js';
import {
  CP001,
  daemonForTest,
  PROCESS_TEST_TIMEOUT_MS,
  siteWith,
  startTestDaemon,
  type TestDaemon,
} from '../support/daemon.js';
import { stationV201ForTest, tempSiteForTest } from '../support/for-test.js';
import { requestOverSocket } from '../support/local-socket.js';
import type { SimulatedStation } from '../support/station.js';
import { StationV201 } from '../support/station-v201.js';
import { CONFIG_GET_16, CONFIG_GET_201, CONFIG_SET_201 } from '../support/station-exchanges.js';

/** A 2.0.1 station beside the 1.6 CP001: EVSE 1 and 2, one connector each. */
const EV201 = { id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1, 2] }] };

describe('chargegate station list (contract 11.1): what each station is', () => {
  it(
    'shows vendor, model and firmware from the last BootNotification of a 1.6 and a 2.0.1 station',
    async () => {
      const t = await daemonForTest(siteWith([], [CP001, EV201]));
      await (await t.connect('CP001')).boot({ chargePointSerialNumber: 'SN-16' });
      await (await stationV201ForTest(t.url, 'EV201')).boot();
      const config = ['--config', t.temp.configPath];

      const listed = await runCliJson<{ stations: unknown[] }>(['station', 'list', ...config]);
      expect(listed).toMatchObject({ code: 0 });
      expect(listed.data.stations).toEqual([
        expect.objectContaining({
          id: 'CP001',
          vendor: 'chargegate-sim',
          model: 'SimStation',
          serialNumber: 'SN-16',
          firmwareVersion: '1.0.0',
        }),
        expect.objectContaining({
          id: 'EV201',
          vendor: 'ACME',
          model: 'Wallbox 2.0.1',
          serialNumber: null,
          firmwareVersion: '2.1.0',
        }),
      ]);

      const human = await runCli(['station', 'list', ...config]);
      expect(human.code).toBe(0);
      const [header, ...rows] = human.stdout.trimEnd().split('\n');
      expect(header).toMatch(/^STATION +SITE +STATE +ONLINE +LAST SEEN +PASSWORD +VENDOR +MODEL +FIRMWARE$/);
      expect(rows).toEqual([
        expect.stringMatching(/^CP001 +s1 +configured +yes +.+ +chargegate-sim +SimStation +1\.0\.0$/),
        expect.stringMatching(/^EV201 +s1 +configured +yes +.+ +ACME +Wallbox 2\.0\.1 +2\.1\.0$/),
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('a busy station', () => {
  it(
    'with 16 operations waiting behind a running one, the next command exits 1 saying the station is busy',
    async () => {
      const t = await daemonForTest(siteWith([], [CP001]));
      const station = await t.connect('CP001');
      await station.boot();
      let answerReset = (): void => undefined;
      const held = new Promise((resolve) => (answerReset = () => resolve({ status: 'Accepted' })));
      station.handle('Reset', () => held);
      const socketPath = localSocketPath(t.temp.dataDir);
      // One running (the station holds its answer), 16 waiting: the queue is full.
      const queued = Array.from({ length: 17 }, () =>
        requestOverSocket(socketPath, 'POST', '/stations/CP001/reset', { type: 'soft' }),
      );
      await expect.poll(() => station.received.filter((r) => r.action === 'Reset').length).toBe(1);

      expect(await runCli(['station', 'clear-cache', 'CP001', '--config', t.temp.configPath])).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'chargegate: station "CP001" is busy: 16 operations already wait for it; try again when they are done\n',
      });
      answerReset();
      expect((await Promise.all(queued)).map((r) => r.status)).toEqual(Array(17).fill(200));
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('the live station commands without a daemon', () => {
  it(
    'say "daemon not running" in one line and exit 1; --json gives the same as {error}',
    async () => {
      const site = tempSiteForTest();
      const config = ['--config', site.configPath];
      const line = `daemon not running (${path.join(site.dataDir, 'chargegate.sock')})`;
      expect(await runCli(['station', 'reset', 'CP001', ...config])).toEqual({
        code: 1,
        stdout: '',
        stderr: `chargegate: ${line}\n`,
      });
      expect(await runCliJson(['station', 'show', 'CP001', ...config])).toMatchObject({
        code: 1,
        data: { error: line },
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

/** A station that never answers a call: the daemon gives up after ocpp.callTimeoutMs. */
const CALL_TIMEOUT_MS = 1_000;

/** CP001 speaks 1.6, EV201 2.0.1 (EVSE 1 and 2), CP009 never connects. */
const OPERATED_SITE = {
  ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: CALL_TIMEOUT_MS },
  ...siteWith([], [CP001, EV201, { id: 'CP009', chargePoints: [{ id: 'CP009-A', connectors: [1] }] }]),
};

type Protocol = '1.6' | '2.0.1';

/** One live command: what the CLI is given, what the station gets and answers, what the installer reads. */
interface LiveCommand {
  args: string[];
  action: string;
  sent: unknown;
  /** `result`: what --json adds to the answer (a read's keys). */
  done: { answer: unknown; status: string; stdout: string | RegExp; result?: unknown };
  /** The station's refusal (a CALLERROR for reads) and the one line that says it. */
  refused: { answer: unknown; status: string; stderr: string };
}

/** The whole stdout: the lines given, or what the pattern matches. */
function wordsOf(stdout: string | RegExp): unknown {
  return typeof stdout === 'string' ? `${stdout}\n` : expect.stringMatching(stdout);
}

function resultOf(command: LiveCommand): { result?: unknown } {
  return command.done.result === undefined ? {} : { result: command.done.result };
}

const NOT_SUPPORTED = rpcError('NotSupported', 'not on this station');

const LIVE_COMMANDS: Record<Protocol, LiveCommand[]> = {
  '1.6': [
    {
      args: ['reset', 'CP001', '--hard'],
      action: 'Reset',
      sent: { type: 'Hard' },
      done: { answer: { status: 'Accepted' }, status: 'Accepted', stdout: 'CP001 Reset: Accepted' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected', stderr: 'CP001 refused Reset: Rejected' },
    },
    {
      args: ['unlock', 'CP001', '2'],
      action: 'UnlockConnector',
      sent: { connectorId: 2 },
      done: { answer: { status: 'Unlocked' }, status: 'Unlocked', stdout: 'CP001 UnlockConnector: Unlocked' },
      refused: {
        answer: { status: 'UnlockFailed' },
        status: 'UnlockFailed',
        stderr: 'CP001 refused UnlockConnector: UnlockFailed',
      },
    },
    {
      args: ['availability', 'CP001', '2', '--inoperative'],
      action: 'ChangeAvailability',
      sent: { connectorId: 2, type: 'Inoperative' },
      done: {
        answer: { status: 'Scheduled' },
        status: 'Scheduled',
        stdout: 'CP001 ChangeAvailability: Scheduled\nThe station does it when its running session ends.',
      },
      refused: {
        answer: { status: 'Rejected' },
        status: 'Rejected',
        stderr: 'CP001 refused ChangeAvailability: Rejected',
      },
    },
    {
      args: ['availability', 'CP001', '--operative'],
      action: 'ChangeAvailability',
      sent: { connectorId: 0, type: 'Operative' },
      done: { answer: { status: 'Accepted' }, status: 'Accepted', stdout: 'CP001 ChangeAvailability: Accepted' },
      refused: {
        answer: { status: 'Rejected' },
        status: 'Rejected',
        stderr: 'CP001 refused ChangeAvailability: Rejected',
      },
    },
    {
      args: ['trigger', 'CP001', 'StatusNotification', '--connector', '1'],
      action: 'TriggerMessage',
      sent: { requestedMessage: 'StatusNotification', connectorId: 1 },
      done: { answer: { status: 'Accepted' }, status: 'Accepted', stdout: 'CP001 TriggerMessage: Accepted' },
      refused: {
        answer: { status: 'NotImplemented' },
        status: 'NotImplemented',
        stderr: 'CP001 refused TriggerMessage: NotImplemented',
      },
    },
    {
      args: ['config', 'get', 'CP001', 'HeartbeatInterval', 'Nonsense'],
      action: 'GetConfiguration',
      sent: CONFIG_GET_16.sent,
      done: {
        ...CONFIG_GET_16.done,
        stdout: [
          'CP001 GetConfiguration: Accepted',
          'KEY                VALUE  READ-ONLY',
          'HeartbeatInterval  300',
          'Unknown to the station: Nonsense',
        ].join('\n'),
      },
      refused: {
        answer: NOT_SUPPORTED,
        status: 'NotSupported',
        stderr: 'CP001 refused GetConfiguration: NotSupported (NotSupported: not on this station)',
      },
    },
    {
      args: ['config', 'set', 'CP001', 'HeartbeatInterval', '60'],
      action: 'ChangeConfiguration',
      sent: { key: 'HeartbeatInterval', value: '60' },
      done: {
        answer: { status: 'RebootRequired' },
        status: 'RebootRequired',
        stdout:
          'CP001 ChangeConfiguration: RebootRequired\nThe new value applies after a restart: chargegate station reset CP001',
      },
      refused: {
        answer: { status: 'NotSupported' },
        status: 'NotSupported',
        stderr: 'CP001 refused ChangeConfiguration: NotSupported',
      },
    },
    {
      args: ['clear-cache', 'CP001'],
      action: 'ClearCache',
      sent: {},
      done: { answer: { status: 'Accepted' }, status: 'Accepted', stdout: 'CP001 ClearCache: Accepted' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected', stderr: 'CP001 refused ClearCache: Rejected' },
    },
    {
      args: ['report', 'CP001'],
      action: 'GetConfiguration',
      sent: {},
      done: {
        answer: { configurationKey: [{ key: 'NumberOfConnectors', readonly: true, value: '2' }] },
        status: 'Accepted',
        stdout: [
          'CP001 GetConfiguration: Accepted',
          'KEY                 VALUE  READ-ONLY',
          'NumberOfConnectors  2      yes',
        ].join('\n'),
      },
      refused: {
        answer: NOT_SUPPORTED,
        status: 'NotSupported',
        stderr: 'CP001 refused GetConfiguration: NotSupported (NotSupported: not on this station)',
      },
    },
  ],
  '2.0.1': [
    {
      args: ['reset', 'EV201'],
      action: 'Reset',
      sent: { type: 'OnIdle' },
      done: {
        answer: { status: 'Scheduled' },
        status: 'Scheduled',
        stdout: 'EV201 Reset: Scheduled\nThe station does it when its running session ends.',
      },
      refused: {
        answer: { status: 'Rejected', statusInfo: { reasonCode: 'Busy', additionalInfo: 'firmware update' } },
        status: 'Rejected',
        stderr: 'EV201 refused Reset: Rejected (Busy: firmware update)',
      },
    },
    {
      args: ['unlock', 'EV201', '2'],
      action: 'UnlockConnector',
      sent: { evseId: 2, connectorId: 1 },
      done: { answer: { status: 'Unlocked' }, status: 'Unlocked', stdout: 'EV201 UnlockConnector: Unlocked' },
      refused: {
        answer: { status: 'OngoingAuthorizedTransaction' },
        status: 'OngoingAuthorizedTransaction',
        stderr: 'EV201 refused UnlockConnector: OngoingAuthorizedTransaction',
      },
    },
    {
      args: ['availability', 'EV201', '2', '--inoperative'],
      action: 'ChangeAvailability',
      sent: { operationalStatus: 'Inoperative', evse: { id: 2 } },
      done: { answer: { status: 'Accepted' }, status: 'Accepted', stdout: 'EV201 ChangeAvailability: Accepted' },
      refused: {
        answer: { status: 'Rejected' },
        status: 'Rejected',
        stderr: 'EV201 refused ChangeAvailability: Rejected',
      },
    },
    {
      args: ['availability', 'EV201', '--inoperative'],
      action: 'ChangeAvailability',
      sent: { operationalStatus: 'Inoperative' },
      done: {
        answer: { status: 'Scheduled' },
        status: 'Scheduled',
        stdout: 'EV201 ChangeAvailability: Scheduled\nThe station does it when its running session ends.',
      },
      refused: {
        answer: { status: 'Rejected' },
        status: 'Rejected',
        stderr: 'EV201 refused ChangeAvailability: Rejected',
      },
    },
    {
      args: ['trigger', 'EV201', 'StatusNotification', '--connector', '2'],
      action: 'TriggerMessage',
      sent: { requestedMessage: 'StatusNotification', evse: { id: 2 } },
      done: { answer: { status: 'Accepted' }, status: 'Accepted', stdout: 'EV201 TriggerMessage: Accepted' },
      refused: {
        answer: { status: 'Rejected' },
        status: 'Rejected',
        stderr: 'EV201 refused TriggerMessage: Rejected',
      },
    },
    {
      args: ['config', 'get', 'EV201', 'OCPPCommCtrlr.HeartbeatInterval', 'EVSE[2].Power'],
      action: 'GetVariables',
      sent: CONFIG_GET_201.sent,
      done: {
        ...CONFIG_GET_201.done,
        stdout: [
          'EV201 GetVariables: Accepted',
          'KEY                              VALUE  READ-ONLY',
          'OCPPCommCtrlr.HeartbeatInterval  300',
          'Unknown to the station: EVSE[2].Power',
        ].join('\n'),
      },
      refused: {
        answer: NOT_SUPPORTED,
        status: 'NotSupported',
        stderr: 'EV201 refused GetVariables: NotSupported (NotSupported: not on this station)',
      },
    },
    {
      args: ['config', 'set', 'EV201', 'OCPPCommCtrlr.HeartbeatInterval', '60'],
      action: 'SetVariables',
      sent: CONFIG_SET_201.sent,
      done: {
        ...CONFIG_SET_201.done,
        stdout: 'EV201 SetVariables: Accepted',
      },
      refused: {
        ...CONFIG_SET_201.refused,
        stderr: 'EV201 refused SetVariables: Rejected (ValueTooLow)',
      },
    },
    {
      args: ['clear-cache', 'EV201'],
      action: 'ClearCache',
      sent: {},
      done: { answer: { status: 'Accepted' }, status: 'Accepted', stdout: 'EV201 ClearCache: Accepted' },
      refused: { answer: { status: 'Rejected' }, status: 'Rejected', stderr: 'EV201 refused ClearCache: Rejected' },
    },
    {
      args: ['report', 'EV201'],
      action: 'GetBaseReport',
      sent: { requestId: expect.any(Number), reportBase: 'FullInventory' },
      done: {
        answer: { status: 'Accepted' },
        status: 'Accepted',
        stdout:
          /^EV201 GetBaseReport: Accepted\nThe station sends its report now \(request \d+\): station show EV201\n$/,
      },
      refused: {
        answer: { status: 'NotSupported' },
        status: 'NotSupported',
        stderr: 'EV201 refused GetBaseReport: NotSupported',
      },
    },
  ],
};

describe('the live station commands, end to end over the local channel (contract 11.1)', () => {
  let t: TestDaemon;
  let cp001: SimulatedStation;
  let ev201: StationV201;
  let config: string[];

  beforeAll(async () => {
    t = await startTestDaemon(OPERATED_SITE);
    config = ['--config', t.temp.configPath];
    cp001 = await t.connect('CP001');
    await cp001.boot();
    ev201 = await StationV201.connect(t.url, 'EV201');
    await ev201.boot();
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await ev201.close().catch(() => undefined);
    await t.stop();
  });

  /** The station answers `action` with what answerOf gives (a thrown CALLERROR too), keeping what it was sent. */
  const answer = (protocol: Protocol, action: string, answerOf: () => unknown): unknown[] => {
    const received: unknown[] = [];
    const handler = (params: unknown) => {
      received.push(params);
      const answered = answerOf();
      if (answered instanceof Error) throw answered;
      return answered;
    };
    if (protocol === '1.6') cp001.handle(action, handler);
    else ev201.handle(action as 'Reset', handler as () => never);
    return received;
  };

  // Refused in words on 1.6 and as the --json document on 2.0.1: each way seen on both versions' commands.
  const cases = (['1.6', '2.0.1'] as const).flatMap((protocol) =>
    LIVE_COMMANDS[protocol].map((command) => ({ protocol, command, label: `${protocol} ${command.args.join(' ')}` })),
  );

  it.each(cases)(
    '$label: done -> exit 0 with the answer (words and --json); refused -> exit 1 saying so',
    async ({ protocol, command }) => {
      const stationId = command.args.find((a) => a === 'CP001' || a === 'EV201')!;
      const doneReceived = answer(protocol, command.action, () => command.done.answer);
      expect(await runCli(['station', ...command.args, ...config])).toEqual({
        code: 0,
        stdout: wordsOf(command.done.stdout),
        stderr: '',
      });
      expect(await runCliJson(['station', ...command.args, ...config])).toMatchObject({
        code: 0,
        data: { stationId, action: command.action, status: command.done.status, ...resultOf(command) },
        stderr: '',
      });
      expect(doneReceived).toEqual([command.sent, command.sent]);

      answer(protocol, command.action, () => command.refused.answer);
      if (protocol === '1.6') {
        expect(await runCli(['station', ...command.args, ...config])).toEqual({
          code: 1,
          stdout: '',
          stderr: `chargegate: ${command.refused.stderr}\n`,
        });
      } else {
        const refused = await runCliJson(['station', ...command.args, ...config]);
        expect(refused).toMatchObject({
          code: 1,
          data: { error: 'station_refused', stationId, action: command.action, status: command.refused.status },
        });
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a station that is not connected: every command exits 1 saying so in one line; --json gives the API error',
    async () => {
      const commands = [
        ['reset', 'CP009'],
        ['unlock', 'CP009', '1'],
        ['availability', 'CP009', '--operative'],
        ['trigger', 'CP009', 'Heartbeat'],
        ['config', 'get', 'CP009'],
        ['config', 'set', 'CP009', 'HeartbeatInterval', '60'],
        ['clear-cache', 'CP009'],
        ['report', 'CP009'],
      ];
      for (const args of commands)
        expect(await runCli(['station', ...args, ...config]), args.join(' ')).toEqual({
          code: 1,
          stdout: '',
          stderr: 'chargegate: station "CP009" is not connected\n',
        });
      expect(await runCliJson(['station', 'reset', 'CP009', ...config])).toEqual({
        code: 1,
        data: { error: 'station_offline', message: 'station "CP009" is not connected' },
        stderr: '',
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a station that does not answer: exit 1 saying so in one line, on 1.6 and 2.0.1',
    async () => {
      // Answered only after the daemon gave up: the stations' connections close cleanly at the end.
      let answerLate = (): void => undefined;
      const late = new Promise((resolve) => (answerLate = () => resolve({ status: 'Accepted' })));
      answer('1.6', 'Reset', () => late);
      answer('2.0.1', 'ClearCache', () => late);
      expect(await runCli(['station', 'reset', 'CP001', ...config])).toEqual({
        code: 1,
        stdout: '',
        stderr: 'chargegate: station "CP001" did not answer Reset in time\n',
      });
      expect(await runCliJson(['station', 'clear-cache', 'EV201', ...config])).toMatchObject({
        code: 1,
        data: { error: 'station_timeout', message: 'station "EV201" did not answer ClearCache in time' },
      });
      answerLate();
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'usage: exit 2 naming what is wrong, before or after the daemon looked; an unknown station is exit 1',
    async () => {
      const cases: Array<[args: string[], stderr: RegExp]> = [
        [['unlock', 'CP001'], /^error: missing required argument 'connector'/],
        [['unlock', 'CP001', 'one'], /^error: command-argument value 'one' is invalid .*expected a whole number/],
        [['availability', 'CP001'], /^chargegate: give --operative or --inoperative\n$/],
        [['availability', 'CP001', '--operative', '--inoperative'], /^error: option '--operative' cannot be used with/],
        [['trigger', 'CP001', 'Nonsense'], /^chargegate: message "Nonsense": OCPP 1\.6 can trigger BootNotification, /],
        [['unlock', 'CP001', '9'], /^chargegate: connectorId: station "CP001" has connectors 1, 2\n$/],
        [
          ['config', 'set', 'EV201', 'HeartbeatInterval', '60'],
          /^chargegate: key "HeartbeatInterval": a 2\.0\.1 station's keys are Component\.Variable/,
        ],
        [['reset'], /^error: missing required argument 'stationId'/],
      ];
      for (const [args, stderr] of cases) {
        const result = await runCli(['station', ...args, ...config]);
        expect(result.code, args.join(' ')).toBe(2);
        expect(result.stderr, args.join(' ')).toMatch(stderr);
      }
      expect(await runCli(['station', 'reset', 'NOPE', ...config])).toEqual({
        code: 1,
        stdout: '',
        stderr: `chargegate: no station "NOPE" within the caller's reach\n`,
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'config get without keys on a 2.0.1 station that sent no base report yet: exit 1, asking for `station report`',
    async () => {
      expect(await runCli(['station', 'config', 'get', 'EV201', ...config])).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'chargegate: station "EV201" has sent no base report yet: ask for one first (station report / POST .../report)\n',
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'station show: what the station is, its last operations by cli; a 2.0.1 base report, also for config get',
    async () => {
      answer('1.6', 'ClearCache', () => ({ status: 'Accepted' }));
      expect((await runCli(['station', 'clear-cache', 'CP001', ...config])).code).toBe(0);
      const shown = await runCli(['station', 'show', 'CP001', ...config]);
      expect(shown.code).toBe(0);
      const lines = shown.stdout.split('\n');
      expect(lines.slice(0, 3)).toEqual([
        expect.stringMatching(/^CP001 \(site s1\): connected, ocpp1\.6, last seen \d{4}-/),
        'Vendor chargegate-sim, model SimStation, serial -, firmware 1.0.0',
        'No operation in progress.',
      ]);
      expect(shown.stdout).toMatch(
        /\nLast operations \(\d+, newest first\):\nAT +WHO +ACTION +ANSWER\n\S+ +cli +ClearCache +Accepted\n/,
      );
      const document = await runCliJson<{ id: string; operations: Array<{ who: string; action: string }> }>([
        'station',
        'show',
        'CP001',
        ...config,
      ]);
      expect(document.code).toBe(0);
      expect(document.data).toMatchObject({ id: 'CP001', vendor: 'chargegate-sim', firmwareVersion: '1.0.0' });
      expect(document.data.operations[0]).toMatchObject({ who: 'cli', action: 'ClearCache' });

      // The report arrives after the answer, in NotifyReport parts, as a station sends it.
      ev201.handle('GetBaseReport', ({ requestId }) => {
        setImmediate(
          () =>
            void ev201.call('NotifyReport', {
              requestId,
              generatedAt: new Date().toISOString(),
              seqNo: 0,
              tbc: false,
              reportData: [
                {
                  component: { name: 'OCPPCommCtrlr' },
                  variable: { name: 'HeartbeatInterval' },
                  variableAttribute: [{ type: 'Actual', value: '300', mutability: 'ReadWrite' }],
                },
              ],
            }),
        );
        return { status: 'Accepted' };
      });
      expect((await runCli(['station', 'report', 'EV201', ...config])).code).toBe(0);
      await expect
        .poll(async () => (await runCli(['station', 'show', 'EV201', ...config])).stdout, { timeout: 20_000 })
        .toMatch(
          /\nBase report \d+ asked \S+: 1 part\nVARIABLE +VALUE +READ-ONLY\nOCPPCommCtrlr\.HeartbeatInterval +300\n/,
        );
      expect(await runCli(['station', 'config', 'get', 'EV201', ...config])).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(
          /^EV201 NotifyReport: Accepted\nKEY +VALUE +READ-ONLY\nOCPPCommCtrlr\.HeartbeatInterval +300\nFrom the base report of \S+\.\n$/,
        ),
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

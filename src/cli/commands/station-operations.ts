import path from 'node:path';
import { Option, type Command } from 'commander';
import {
  CliError,
  EXIT_FAILURE,
  EXIT_USAGE,
  loadCommandConfig,
  output,
  table,
  wholeNumber,
  type GlobalOptions,
} from '../context.js';
import type { Config } from '../../config/index.js';
import type { LogRecord } from '../../station-logs/index.js';
import type { OperationAnswer, StationDetail } from '../../stations/index.js';
import type { LocalAnswer } from '../local-client.js';

/**
 * The daemon's local channel (undici) and the station logs' part, loaded by the live commands only: `station list`,
 * `pair` and `block`, registered beside them, never ask the daemon and start at half the CPU without them.
 */
const localClient = () => import('../local-client.js');
const stationLogs = () => import('../../station-logs/index.js');

/** A connector id as OCPP 1.6 and chargegate's config count them. */
const connectorId = wholeNumber(1, 2 ** 31 - 1);

/** A read's `result`: the keys (a 2.0.1 `config get` without keys: from the last base report), unknown ones. */
interface ConfigurationResult {
  configurationKey?: Array<{ key: string; value?: string; readonly?: boolean }>;
  unknownKey?: string[];
  report?: { requestId: number; generatedAt: string; complete: boolean; truncated: boolean };
}

/**
 * The live commands (contract 11.1): each one request to the running daemon over its local channel, answered by the
 * station. Exit 0 on a success answer, 1 refused / not connected / no answer / daemon not running, 2 usage.
 */
export function registerStationOperations(station: Command): void {
  station
    .command('reset')
    .description('restart a station: soft (when idle) or --hard (at once); 1.6 Reset, 2.0.1 Reset OnIdle/Immediate')
    .argument('<stationId>')
    .option('--hard', 'restart at once, ending charging sessions (2.0.1 Immediate)')
    .action((stationId: string, options: { hard?: boolean }, cmd: Command) =>
      operate(cmd, stationId, 'POST', 'reset', { type: options.hard ? 'hard' : 'soft' }),
    );

  station
    .command('unlock')
    .description("release a stuck cable: UnlockConnector on the connector (2.0.1: that connector's EVSE)")
    .argument('<stationId>')
    .argument('<connector>', 'connector id, as in the config', connectorId)
    .action((stationId: string, connector: number, _options: unknown, cmd: Command) =>
      operate(cmd, stationId, 'POST', 'unlock', { connectorId: connector }),
    );

  station
    .command('availability')
    .description('take a station or one connector out of service, or back: ChangeAvailability')
    .argument('<stationId>')
    .argument('[connector]', 'connector id; the whole station without it', connectorId)
    .addOption(new Option('--operative', 'back in service').conflicts('inoperative'))
    .addOption(new Option('--inoperative', 'out of service (a running session ends first: Scheduled)'))
    .action(
      (
        stationId: string,
        connector: number | undefined,
        options: { operative?: boolean; inoperative?: boolean },
        cmd,
      ) => {
        if (!options.operative && !options.inoperative)
          throw new CliError('give --operative or --inoperative', EXIT_USAGE);
        return operate(cmd as Command, stationId, 'POST', 'availability', {
          ...(connector !== undefined && { connectorId: connector }),
          operative: options.operative === true,
        });
      },
    );

  station
    .command('trigger')
    .description('ask a station to send a message now: TriggerMessage (StatusNotification, MeterValues, Heartbeat...)')
    .argument('<stationId>')
    .argument('<message>', 'the OCPP message, e.g. StatusNotification, BootNotification, MeterValues')
    .option('--connector <n>', 'for this connector (2.0.1: its EVSE)', connectorId)
    .action((stationId: string, message: string, options: { connector?: number }, cmd: Command) =>
      operate(cmd, stationId, 'POST', 'trigger', {
        message,
        ...(options.connector !== undefined && { connectorId: options.connector }),
      }),
    );

  const config = station
    .command('config')
    .description(
      "a station's configuration: 1.6 keys, 2.0.1 variables as Component.Variable or Component[evse].Variable",
    );
  config
    .command('get')
    .description('read keys (all without any; a 2.0.1 station: the variables of its last base report)')
    .argument('<stationId>')
    .argument('[keys...]', 'keys to read')
    .action((stationId: string, keys: string[], _options: unknown, cmd: Command) =>
      operate(cmd, stationId, 'GET', `configuration${keys.length > 0 ? `?${queryOf(keys)}` : ''}`),
    );
  config
    .command('set')
    .description('change one key: 1.6 ChangeConfiguration, 2.0.1 SetVariables')
    .argument('<stationId>')
    .argument('<key>')
    .argument('<value>')
    .action((stationId: string, key: string, value: string, _options: unknown, cmd: Command) =>
      operate(cmd, stationId, 'PUT', 'configuration', { key, value }),
    );

  station
    .command('clear-cache')
    .description("empty a station's authorization cache: ClearCache")
    .argument('<stationId>')
    .action((stationId: string, _options: unknown, cmd: Command) => operate(cmd, stationId, 'POST', 'clear-cache', {}));

  station
    .command('report')
    .description('ask a 2.0.1 station for its base report (GetBaseReport FullInventory; 1.6: GetConfiguration)')
    .argument('<stationId>')
    .action((stationId: string, _options: unknown, cmd: Command) => operate(cmd, stationId, 'POST', 'report', {}));

  station
    .command('logs')
    .description(
      "collect a station's diagnostics log on the gateway (1.6 GetDiagnostics, 2.0.1 GetLog) and wait for it",
    )
    .argument('<stationId>')
    .option('--since <time>', 'only entries from this time on (RFC 3339, e.g. 2026-11-01T00:00:00Z)')
    .addOption(
      new Option('--via <protocol>', 'upload over (default: ftp for 1.6 stations when logs.ftp is set)').choices([
        'ftp',
        'http',
      ]),
    )
    .option('--out <file>', 'copy the file here once it is uploaded')
    .option('--no-wait', 'print the log id and return without waiting for the upload')
    .action((stationId: string, options: LogsOptions, cmd: Command) => collectLogs(cmd, stationId, options));

  station
    .command('show')
    .description('what a station is (vendor, model, firmware, connectors) and its last operations, from the daemon')
    .argument('<stationId>')
    .action(async (stationId: string, _options: unknown, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const answer = await (await localClient()).askDaemon(daemonConfig(globals), 'GET', stationPath(stationId));
      if (answer.status !== 200) return notDone(globals, stationId, answer);
      output(globals.json === true, answer.body, () => describeStation(answer.body as StationDetail));
    });
}

async function operate(
  cmd: Command,
  stationId: string,
  method: 'GET' | 'POST' | 'PUT',
  operation: string,
  body?: object,
): Promise<void> {
  const globals = cmd.optsWithGlobals<GlobalOptions>();
  const answer = await (
    await localClient()
  ).askDaemon(daemonConfig(globals), method, `${stationPath(stationId)}/${operation}`, body);
  if (answer.status !== 200) return notDone(globals, stationId, answer);
  const document = answer.body as OperationAnswer;
  output(globals.json === true, document, () => describeAnswer(document));
}

/**
 * A refusal, an offline or silent station, a busy or unknown one, or bad input: one line (the daemon's message, which
 * names the station and what happened), or with --json the daemon's document (a refusal's carries the station's
 * answer). Exit 2 for what the installer typed wrong (400), else 1.
 */
function notDone(globals: GlobalOptions, stationId: string, answer: LocalAnswer): void {
  const body = (answer.body ?? {}) as { error?: string; message?: string } & Partial<OperationAnswer>;
  const exitCode = answer.status === 400 ? EXIT_USAGE : EXIT_FAILURE;
  const line =
    body.error === 'station_refused'
      ? `${stationId} refused ${statusLine(body as OperationAnswer)}`
      : (body.message ?? `the daemon answered ${answer.status}`);
  if (globals.json !== true) throw new CliError(line, exitCode);
  output(true, answer.body, () => line);
  process.exitCode = exitCode;
}

interface LogsOptions {
  since?: string;
  via?: 'ftp' | 'http';
  out?: string;
  wait: boolean;
}

/**
 * How often a waiting `station logs` asks the daemon how the collection goes: soon at first (a station uploads a small
 * log in a moment), then less often, every second at most.
 */
const LOGS_FIRST_POLL_MS = 100;
const LOGS_POLL_MS = 1000;

/**
 * Contract 11.3: asks for the log, then (unless --no-wait) follows it until the station uploaded it (exit 0, where the
 * file is; --out copies it) or it failed (exit 1, why).
 */
async function collectLogs(cmd: Command, stationId: string, options: LogsOptions): Promise<void> {
  const globals = cmd.optsWithGlobals<GlobalOptions>();
  const config = daemonConfig(globals);
  const asked = await (
    await localClient()
  ).askDaemon(config, 'POST', `${stationPath(stationId)}/logs`, {
    ...(options.since !== undefined && { since: options.since }),
    ...(options.via !== undefined && { via: options.via }),
  });
  if (asked.status !== 202) return notDone(globals, stationId, asked);
  const { logId } = asked.body as { logId: string };
  if (!options.wait)
    return output(
      globals.json === true,
      asked.body,
      () => `${stationId}: log ${logId} requested (station logs show it)`,
    );
  const logPath = `${stationPath(stationId)}/logs/${logId}`;
  // The station has logs.uploadWindowS to upload; the daemon fails the collection then.
  const deadline = Date.now() + (config.logs.uploadWindowS + 30) * 1000;
  let record: LogRecord;
  let pollMs = LOGS_FIRST_POLL_MS;
  for (;;) {
    const answer = await (await localClient()).askDaemon(config, 'GET', logPath);
    if (answer.status !== 200) return notDone(globals, stationId, answer);
    record = answer.body as LogRecord;
    if (record.state === 'uploaded' || record.state === 'failed') break;
    if (Date.now() > deadline)
      throw new CliError(
        `${stationId}: log ${logId} is still ${record.state}: the daemon did not end it`,
        EXIT_FAILURE,
      );
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    pollMs = Math.min(pollMs * 2, LOGS_POLL_MS);
  }
  if (record.state === 'failed') {
    const line = `${stationId}: log ${logId} failed: ${record.reason ?? 'no reason recorded'}`;
    if (globals.json !== true) throw new CliError(line, EXIT_FAILURE);
    output(true, record, () => line);
    process.exitCode = EXIT_FAILURE;
    return;
  }
  if (options.out !== undefined) await (await localClient()).downloadFromDaemon(config, `${logPath}/file`, options.out);
  const file = record.file!;
  const { LOGS_DIR } = await stationLogs();
  const where = options.out ?? path.join(config.dataDir, LOGS_DIR, logId, file.name);
  output(
    globals.json === true,
    { ...record, path: where },
    () => `${stationId}: log ${logId} uploaded: ${where} (${file.bytes} bytes)`,
  );
}

function daemonConfig(globals: GlobalOptions): Config {
  return loadCommandConfig(globals).config;
}

function stationPath(stationId: string): string {
  return `/stations/${encodeURIComponent(stationId)}`;
}

function queryOf(keys: string[]): string {
  return keys.map((key) => `key=${encodeURIComponent(key)}`).join('&');
}

/** `Accepted (reasonCode: additionalInfo)`: the station's status and its 2.0.1 statusInfo. */
function answerText(answer: Pick<OperationAnswer, 'status' | 'statusInfo'>): string {
  const info = answer.statusInfo;
  return `${answer.status}${info ? ` (${info.reasonCode}${info.additionalInfo ? `: ${info.additionalInfo}` : ''})` : ''}`;
}

function statusLine(answer: OperationAnswer): string {
  return `${answer.action}: ${answerText(answer)}`;
}

function describeAnswer(answer: OperationAnswer): string {
  const lines = [`${answer.stationId} ${statusLine(answer)}`];
  if (answer.status === 'RebootRequired')
    lines.push(`The new value applies after a restart: chargegate station reset ${answer.stationId}`);
  if (answer.status === 'Scheduled') lines.push('The station does it when its running session ends.');
  const result = (answer.result ?? {}) as ConfigurationResult & { requestId?: number };
  if (result.configurationKey)
    lines.push(
      table(
        ['KEY', 'VALUE', 'READ-ONLY'],
        result.configurationKey.map((k) => [k.key, k.value ?? '', k.readonly ? 'yes' : '']),
      ),
    );
  if (result.unknownKey) lines.push(`Unknown to the station: ${result.unknownKey.join(', ')}`);
  if (result.report)
    lines.push(
      `From the base report of ${result.report.generatedAt}${result.report.complete ? '' : ' (not complete yet)'}${result.report.truncated ? ' (truncated)' : ''}.`,
    );
  if (answer.action === 'GetBaseReport' && result.requestId !== undefined)
    lines.push(`The station sends its report now (request ${result.requestId}): station show ${answer.stationId}`);
  return lines.join('\n');
}

function describeStation(s: StationDetail): string {
  const report = s.baseReport;
  return [
    `${s.id} (site ${s.site ?? '-'}): ${s.connected ? `connected, ${s.protocol}` : 'not connected'}, last seen ${s.lastSeen ?? 'never'}`,
    `Vendor ${s.vendor ?? '-'}, model ${s.model ?? '-'}, serial ${s.serialNumber ?? '-'}, firmware ${s.firmwareVersion ?? '-'}`,
    s.operation
      ? `In progress: ${s.operation.kind} ${s.operation.id} (${s.operation.state})`
      : 'No operation in progress.',
    table(
      ['CONNECTOR', 'CHARGE POINT', 'STATUS', 'ERROR CODE'],
      s.connectors.map((c) => [String(c.connectorId), c.chargePointId, c.status, c.errorCode]),
    ),
    `Last operations (${s.operations.length}, newest first):`,
    table(
      ['AT', 'WHO', 'ACTION', 'ANSWER'],
      s.operations.map((o) => [
        o.at,
        o.who,
        o.action,
        o.answer ? answerText(o.answer) : `${o.error?.kind}: ${o.error?.message}`,
      ]),
    ),
    ...(report
      ? [
          `Base report ${report.requestId} asked ${report.requestedAt}: ${report.parts} part${report.parts === 1 ? '' : 's'}${report.complete ? '' : ', not complete yet'}${report.truncated ? ', truncated' : ''}`,
          table(
            ['VARIABLE', 'VALUE', 'READ-ONLY'],
            report.variables.map((v) => [v.key, v.value ?? '', v.readonly ? 'yes' : '']),
          ),
        ]
      : []),
  ].join('\n');
}

import { randomInt } from 'node:crypto';
import type { Ocpp16Actions, Ocpp201Actions, StationCommands } from '../ocpp/index.js';
import type { OperationAnswer } from './audit.js';
import { variableKey, type BaseReports } from './base-reports.js';
import { InvalidOperationError, NoBaseReportError } from './errors.js';

/** What an installer or operator asks of a station (contract 11.1), whichever OCPP version it speaks. */
export type StationOperation =
  | { kind: 'reset'; hard: boolean }
  | { kind: 'unlock'; connectorId: number }
  | { kind: 'availability'; connectorId?: number; operative: boolean }
  | { kind: 'trigger'; message: string; connectorId?: number }
  | { kind: 'config-get'; keys: string[] }
  | { kind: 'config-set'; key: string; value: string }
  | { kind: 'clear-cache' }
  | { kind: 'report' }
  /** Sent by a firmware rollout (src/firmware), never asked for alone: 1.6 and 2.0.1 UpdateFirmware (contract 11.2). */
  | {
      kind: 'firmware-update';
      location: string;
      /** RFC 3339. */
      retrieveAt: string;
      /** 2.0.1's requestId, which the station's FirmwareStatusNotifications name. */
      requestId: number;
      signature?: string;
      signingCertificate?: string;
    }
  /** Contract 11.3: upload the station's diagnostics log to `location` (src/station-logs gives it out). */
  | { kind: 'logs'; location: string; since?: string; requestId: number };

/** Answers that mean the station does (or will do) what it was asked: exit 0, HTTP 200 (contract 11.1). */
const SUCCESS = new Set(['Accepted', 'Unlocked', 'Scheduled', 'RebootRequired', 'AcceptedCanceled']);

/** 1.6 GetDiagnostics answered without a file name: the station has no diagnostics to upload (refused). */
export const NO_DIAGNOSTICS = 'NoDiagnosticsAvailable';

export function isSuccess(answer: OperationAnswer): boolean {
  return SUCCESS.has(answer.status);
}

const TRIGGERS_16: ReadonlyArray<Ocpp16Actions['TriggerMessage'][0]['requestedMessage']> = [
  'BootNotification',
  'DiagnosticsStatusNotification',
  'FirmwareStatusNotification',
  'Heartbeat',
  'MeterValues',
  'StatusNotification',
];
const TRIGGERS_201: ReadonlyArray<Ocpp201Actions['TriggerMessage'][0]['requestedMessage']> = [
  'BootNotification',
  'LogStatusNotification',
  'FirmwareStatusNotification',
  'Heartbeat',
  'MeterValues',
  'SignChargingStationCertificate',
  'SignV2GCertificate',
  'StatusNotification',
  'TransactionEvent',
  'SignCombinedCertificate',
  'PublishFirmwareStatusNotification',
];

/** A configuration key's value, as both versions' reads show it. */
interface ConfigurationValue {
  key: string;
  value?: string;
  readonly?: boolean;
}

/** What an operation needs besides the station's connection. */
export interface OperationContext {
  commands: Pick<StationCommands, 'speaks201' | 'operate16' | 'operate201'>;
  baseReports: BaseReports;
  /** The connector ids the config lists for the station (its EVSE ids on 2.0.1: chargegate maps them one to one). */
  connectorsOf(stationId: string): number[];
  now(): Date;
}

/** The OCPP action an operation sends on the station's protocol: what the audit and the answer name. */
export function actionOf(operation: StationOperation, speaks201: boolean): string {
  switch (operation.kind) {
    case 'reset':
      return 'Reset';
    case 'unlock':
      return 'UnlockConnector';
    case 'availability':
      return 'ChangeAvailability';
    case 'trigger':
      return 'TriggerMessage';
    case 'config-get':
      if (!speaks201) return 'GetConfiguration';
      return operation.keys.length === 0 ? 'NotifyReport' : 'GetVariables';
    case 'config-set':
      return speaks201 ? 'SetVariables' : 'ChangeConfiguration';
    case 'clear-cache':
      return 'ClearCache';
    case 'report':
      return speaks201 ? 'GetBaseReport' : 'GetConfiguration';
    case 'firmware-update':
      return 'UpdateFirmware';
    case 'logs':
      return speaks201 ? 'GetLog' : 'GetDiagnostics';
  }
}

/**
 * Sends one operation in the station's version (contract 11.1, "2.0.1 mapping") and returns its answer; rejects with
 * the station errors of src/ocpp (offline, timeout, CALLERROR) or InvalidOperationError before sending anything.
 */
export async function perform(
  ctx: OperationContext,
  stationId: string,
  operation: StationOperation,
): Promise<OperationAnswer> {
  // A connector the station lacks is wrong whether or not it is connected; the rest depends on its protocol.
  checkConnector(ctx, stationId, operation);
  const v201 = ctx.commands.speaks201(stationId);
  const answer = await (v201 ? perform201 : perform16)(ctx, stationId, operation);
  return { stationId, action: actionOf(operation, v201), ...answer };
}

type Answer = Omit<OperationAnswer, 'stationId' | 'action'>;

async function perform16(ctx: OperationContext, stationId: string, operation: StationOperation): Promise<Answer> {
  const send = <A extends keyof Ocpp16Actions & string>(action: A, req: Ocpp16Actions[A][0]) =>
    ctx.commands.operate16(stationId, action, req);
  switch (operation.kind) {
    case 'reset':
      return send('Reset', { type: operation.hard ? 'Hard' : 'Soft' });
    case 'unlock':
      return send('UnlockConnector', { connectorId: operation.connectorId });
    case 'availability':
      return send('ChangeAvailability', {
        connectorId: operation.connectorId ?? 0,
        type: operation.operative ? 'Operative' : 'Inoperative',
      });
    case 'trigger':
      return send('TriggerMessage', {
        requestedMessage: oneOf(TRIGGERS_16, operation.message, 'OCPP 1.6'),
        ...(operation.connectorId !== undefined && { connectorId: operation.connectorId }),
      });
    case 'config-get':
    case 'report': {
      const keys = operation.kind === 'config-get' ? operation.keys : [];
      const { configurationKey = [], unknownKey = [] } = await send('GetConfiguration', {
        ...(keys.length > 0 && { key: keys }),
      });
      return { status: 'Accepted', result: configurationResult(configurationKey, unknownKey) };
    }
    case 'config-set':
      return send('ChangeConfiguration', { key: operation.key, value: operation.value });
    case 'clear-cache':
      return send('ClearCache', {});
    case 'firmware-update':
      // 1.6 answers UpdateFirmware with an empty conf: the station took it.
      await send('UpdateFirmware', { location: operation.location, retrieveDate: operation.retrieveAt });
      return { status: 'Accepted' };
    case 'logs': {
      const { fileName } = await send('GetDiagnostics', {
        location: operation.location,
        ...(operation.since !== undefined && { startTime: operation.since }),
      });
      return fileName === undefined ? { status: NO_DIAGNOSTICS } : { status: 'Accepted', result: { fileName } };
    }
  }
}

async function perform201(ctx: OperationContext, stationId: string, operation: StationOperation): Promise<Answer> {
  const send = <A extends keyof Ocpp201Actions & string>(action: A, req: Ocpp201Actions[A][0]) =>
    ctx.commands.operate201(stationId, action, req);
  const withInfo = ({ status, statusInfo }: { status: string; statusInfo?: Answer['statusInfo'] }): Answer => ({
    status,
    ...(statusInfo && { statusInfo: { reasonCode: statusInfo.reasonCode, ...optionalInfo(statusInfo) } }),
  });
  switch (operation.kind) {
    case 'reset':
      return withInfo(await send('Reset', { type: operation.hard ? 'Immediate' : 'OnIdle' }));
    case 'unlock':
      // chargegate's connector N is the station's EVSE N, with its one connector.
      return withInfo(await send('UnlockConnector', { evseId: operation.connectorId, connectorId: 1 }));
    case 'availability':
      return withInfo(
        await send('ChangeAvailability', {
          operationalStatus: operation.operative ? 'Operative' : 'Inoperative',
          ...(operation.connectorId !== undefined && { evse: { id: operation.connectorId } }),
        }),
      );
    case 'trigger':
      return withInfo(
        await send('TriggerMessage', {
          requestedMessage: oneOf(TRIGGERS_201, operation.message, 'OCPP 2.0.1'),
          ...(operation.connectorId !== undefined && { evse: { id: operation.connectorId } }),
        }),
      );
    case 'config-get':
      return operation.keys.length === 0 ? lastReport(ctx, stationId) : getVariables(send, operation.keys);
    case 'config-set': {
      const { component, variable } = parseVariableKey(operation.key);
      const { setVariableResult } = await send('SetVariables', {
        setVariableData: [{ attributeType: 'Actual', attributeValue: operation.value, component, variable }],
      });
      const [first] = setVariableResult;
      return withInfo({
        status: first.attributeStatus,
        ...(first.attributeStatusInfo && { statusInfo: first.attributeStatusInfo }),
      });
    }
    case 'clear-cache':
      return withInfo(await send('ClearCache', {}));
    case 'report': {
      const requestId = randomInt(2 ** 31 - 1);
      // Asked before sending: the first NotifyReport may come before the answer's continuation runs.
      ctx.baseReports.asked(stationId, requestId, ctx.now());
      const answer = await send('GetBaseReport', { requestId, reportBase: 'FullInventory' });
      return { ...withInfo(answer), result: { requestId } };
    }
    case 'firmware-update': {
      const { location, retrieveAt, requestId, signature, signingCertificate } = operation;
      return withInfo(
        await send('UpdateFirmware', {
          requestId,
          firmware: {
            location,
            retrieveDateTime: retrieveAt,
            ...(signature !== undefined && { signature }),
            ...(signingCertificate !== undefined && { signingCertificate }),
          },
        }),
      );
    }
    case 'logs': {
      const answer = await send('GetLog', {
        logType: 'DiagnosticsLog',
        requestId: operation.requestId,
        log: {
          remoteLocation: operation.location,
          ...(operation.since !== undefined && { oldestTimestamp: operation.since }),
        },
      });
      return {
        ...withInfo(answer),
        result: { requestId: operation.requestId, ...(answer.filename !== undefined && { fileName: answer.filename }) },
      };
    }
  }
}

async function getVariables(
  send: <A extends keyof Ocpp201Actions & string>(
    action: A,
    req: Ocpp201Actions[A][0],
  ) => Promise<Ocpp201Actions[A][1]>,
  keys: string[],
): Promise<Answer> {
  const wanted = keys.map(parseVariableKey);
  const { getVariableResult } = await send('GetVariables', {
    // keys is not empty here: without keys a 2.0.1 `config get` reads the last base report.
    getVariableData: wanted.map(({ component, variable }) => ({
      component,
      variable,
      attributeType: 'Actual' as const,
    })) as Ocpp201Actions['GetVariables'][0]['getVariableData'],
  });
  const known = getVariableResult.filter((r) => r.attributeStatus === 'Accepted');
  const unknown = getVariableResult.filter((r) => r.attributeStatus !== 'Accepted');
  return {
    status: 'Accepted',
    result: configurationResult(
      known.map((r) => ({
        key: variableKey(r.component, r.variable),
        ...(r.attributeValue !== undefined && { value: r.attributeValue }),
      })),
      unknown.map((r) => variableKey(r.component, r.variable)),
    ),
  };
}

function lastReport(ctx: OperationContext, stationId: string): Answer {
  const report = ctx.baseReports.of(stationId);
  if (!report || report.parts === 0) throw new NoBaseReportError(stationId);
  const { requestId, generatedAt, complete, truncated, variables } = report;
  return {
    status: 'Accepted',
    result: { ...configurationResult(variables, []), report: { requestId, generatedAt, complete, truncated } },
  };
}

function configurationResult(
  keys: ConfigurationValue[],
  unknownKey: string[],
): { configurationKey: ConfigurationValue[]; unknownKey?: string[] } {
  return { configurationKey: keys, ...(unknownKey.length > 0 && { unknownKey }) };
}

const VARIABLE_KEY = /^([^.[\]\s]+)(?:\[([1-9]\d{0,8})\])?\.([^.[\]\s]+)$/;

/** `Component.Variable` or `Component[evse].Variable` as GetVariables and SetVariables name a variable. */
export function parseVariableKey(key: string): {
  component: { name: string; evse?: { id: number } };
  variable: { name: string };
} {
  const match = VARIABLE_KEY.exec(key);
  if (!match)
    throw new InvalidOperationError(
      `key "${key.slice(0, 80)}": a 2.0.1 station's keys are Component.Variable or Component[evse].Variable (e.g. OCPPCommCtrlr.HeartbeatInterval)`,
    );
  const [, component = '', evse, variable = ''] = match;
  return {
    component: { name: component, ...(evse !== undefined && { evse: { id: Number(evse) } }) },
    variable: { name: variable },
  };
}

function oneOf<T extends string>(allowed: readonly T[], value: string, protocol: string): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new InvalidOperationError(`message "${value.slice(0, 60)}": ${protocol} can trigger ${allowed.join(', ')}`);
  return value as T;
}

function optionalInfo(statusInfo: { additionalInfo?: string }): { additionalInfo?: string } {
  return statusInfo.additionalInfo === undefined ? {} : { additionalInfo: statusInfo.additionalInfo };
}

/** A connector named by the operation must be one the config lists for the station. */
function checkConnector(ctx: OperationContext, stationId: string, operation: StationOperation): void {
  if (!('connectorId' in operation) || operation.connectorId === undefined) return;
  const connectors = ctx.connectorsOf(stationId);
  if (!connectors.includes(operation.connectorId))
    throw new InvalidOperationError(
      `connectorId: station "${stationId}" has connectors ${connectors.join(', ') || '(none configured)'}`,
    );
}

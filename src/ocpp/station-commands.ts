import { randomInt } from 'node:crypto';
import type { Ocpp16Actions } from './v16/messages.js';
import type { Ocpp201Actions } from './v201/messages.js';
import type { CallClass, CallLanes } from './call-lane.js';
import { StationCallError, StationOfflineError, StationTimeoutError } from './errors.js';
import { isRpcError, isRpcTimeout, OCPP201, RPC_OPEN, typedCall, type ActionMap, type RpcConnection } from './rpc.js';

/** The OCPP 1.6 commands chargegate sends, each typed by the generated action map. */
type Command =
  | 'RemoteStartTransaction'
  | 'RemoteStopTransaction'
  | 'ChangeConfiguration'
  | 'GetConfiguration'
  | 'Reset'
  | 'UnlockConnector'
  | 'TriggerMessage'
  | 'ChangeAvailability';

/** The API's remoteStartIds: [2^30, 2^31 - 1), within OCPP's integers. */
const FIRST_API_REMOTE_START_ID = 2 ** 30;
const API_REMOTE_START_IDS = 2 ** 30 - 1;

type Send<A extends Command> = (stationId: string, req: Ocpp16Actions[A][0]) => Promise<Ocpp16Actions[A][1]>;

/** A remote start, in either version; the 2.0.1 parts are for a CSMS's own RequestStartTransaction. */
export interface StartChargingRequest {
  connectorId?: number;
  idTag: string;
  /**
   * 2.0.1: the token as a CSMS gave it (its type, additionalInfo), idTag its value; default: idTag of type Central (a
   * token chargegate was given, not one read at the station).
   */
  idToken?: Ocpp201Actions['RequestStartTransaction'][0]['idToken'];
  /** 2.0.1: the driver's group, as a CSMS gave it: the station lets another token of it stop the session. */
  groupIdToken?: Ocpp201Actions['RequestStartTransaction'][0]['groupIdToken'];
  /** 2.0.1: the id the station reports back in the TransactionEvents; chargegate makes one when not given. */
  remoteStartId?: number;
}

/** A station's answer to a remote stop; a 2.0.1 station may say why (statusInfo). */
export interface StopChargingAnswer {
  status: 'Accepted' | 'Rejected';
  statusInfo?: Ocpp201Actions['RequestStopTransaction'][1]['statusInfo'];
}

/** A station's answer to a remote start; a 2.0.1 one may name a transaction it had already started. */
export interface StartChargingAnswer extends StopChargingAnswer {
  transactionId?: string;
}

/**
 * What the rest of chargegate asks of a station. startCharging and stopCharging speak whichever protocol the
 * station connected with (RemoteStart/RemoteStopTransaction in 1.6, RequestStart/RequestStopTransaction in
 * 2.0.1); the others are 1.6 commands. Every one rejects with StationOfflineError (not connected),
 * StationTimeoutError (no answer in time, or given up for a load limit) or StationCallError (CALLERROR, or a CSMS
 * call refused because too many wait). call16 and call201 go on the station's lane as relayed calls, the others as
 * operations (call-lane.ts).
 */
export interface StationCommands {
  /** Without a connectorId the station picks the connector (1.6) or EVSE (2.0.1). */
  startCharging(stationId: string, request: StartChargingRequest): Promise<StartChargingAnswer>;
  /** The transaction as the domain keeps it: a 2.0.1 station knows it by its own id. */
  stopCharging(
    stationId: string,
    transaction: { id: number; stationTransactionId: string | null },
  ): Promise<StopChargingAnswer>;
  remoteStartTransaction: Send<'RemoteStartTransaction'>;
  remoteStopTransaction: Send<'RemoteStopTransaction'>;
  changeConfiguration: Send<'ChangeConfiguration'>;
  getConfiguration: (
    stationId: string,
    req?: Ocpp16Actions['GetConfiguration'][0],
  ) => Promise<Ocpp16Actions['GetConfiguration'][1]>;
  reset: Send<'Reset'>;
  unlockConnector: Send<'UnlockConnector'>;
  triggerMessage: Send<'TriggerMessage'>;
  changeAvailability: Send<'ChangeAvailability'>;
  isOnline(stationId: string): boolean;
  /** Any OCPP 1.6 call, as a CSMS sent it through the uplink (README "Uplink to a CSMS"); the station's answer. */
  call16<A extends keyof Ocpp16Actions & string>(
    stationId: string,
    action: A,
    req: Ocpp16Actions[A][0],
  ): Promise<Ocpp16Actions[A][1]>;
  /** Any OCPP 2.0.1 call, as a CSMS sent it through a 2.0.1 station's uplink; the station's answer. */
  call201<A extends keyof Ocpp201Actions & string>(
    stationId: string,
    action: A,
    req: Ocpp201Actions[A][0],
  ): Promise<Ocpp201Actions[A][1]>;
  /** The OCPP version the station is connected with; throws StationOfflineError when it is not connected. */
  speaks201(stationId: string): boolean;
  /** The subprotocol of the station's open connection (ocpp1.6 or ocpp2.0.1); undefined when it is not connected. */
  protocolOf(stationId: string): string | undefined;
  /** An installer's or operator's OCPP 1.6 command (src/stations), on the lane as an operation. */
  operate16<A extends keyof Ocpp16Actions & string>(
    stationId: string,
    action: A,
    req: Ocpp16Actions[A][0],
  ): Promise<Ocpp16Actions[A][1]>;
  /** An installer's or operator's OCPP 2.0.1 command (src/stations), on the lane as an operation. */
  operate201<A extends keyof Ocpp201Actions & string>(
    stationId: string,
    action: A,
    req: Ocpp201Actions[A][0],
  ): Promise<Ocpp201Actions[A][1]>;
}

/** Where the commands find a station's live connection. */
export interface ConnectionLookup {
  connectionOf(stationId: string): RpcConnection | undefined;
}

/**
 * Calls on a station's live connection, through its lane as `callClass`, typed by an action map, failing with
 * chargegate's station errors.
 */
export interface StationCaller {
  call<Actions extends ActionMap<Actions>, A extends keyof Actions & string>(
    stationId: string,
    action: A,
    req: Actions[A][0],
    callClass: CallClass,
  ): Promise<Actions[A][1]>;
  /** Throws StationOfflineError when the station is not connected. */
  speaks201(stationId: string): boolean;
}

export function createStationCaller(connections: ConnectionLookup, lanes: CallLanes): StationCaller {
  const connectionOf = (stationId: string): RpcConnection => {
    const connection = connections.connectionOf(stationId);
    if (!connection || connection.state !== RPC_OPEN) throw new StationOfflineError(stationId);
    return connection;
  };
  return {
    async call<Actions extends ActionMap<Actions>, A extends keyof Actions & string>(
      stationId: string,
      action: A,
      req: Actions[A][0],
      callClass: CallClass,
    ): Promise<Actions[A][1]> {
      const connection = connectionOf(stationId);
      const lane = lanes.of(connection);
      try {
        return await typedCall<Actions>({ call: (method, params) => lane.call(callClass, method, params) })(
          action,
          req,
        );
      } catch (err) {
        if (isRpcTimeout(err)) throw new StationTimeoutError(stationId, action);
        if (isRpcError(err)) throw new StationCallError(stationId, action, err.rpcErrorCode, err.message);
        // ocpp-rpc rejects in-flight calls with a plain Error when the socket closes under them.
        if (connections.connectionOf(stationId) !== connection || connection.state !== RPC_OPEN)
          throw new StationOfflineError(stationId);
        throw err;
      }
    },
    speaks201: (stationId) => connectionOf(stationId).protocol === OCPP201,
  };
}

export function createStationCommands(connections: ConnectionLookup, lanes: CallLanes): StationCommands {
  // Ids the station may report back in its TransactionEvents; unique while the process runs is enough, but a CSMS
  // relayed through the uplink numbers its own from small ones: a random start high up keeps the API's clear of them
  // in any process (README "Uplink to a CSMS").
  let started = randomInt(API_REMOTE_START_IDS);
  const { call, speaks201 } = createStationCaller(connections, lanes);
  const send = <A extends Command>(
    stationId: string,
    action: A,
    req: Ocpp16Actions[A][0],
  ): Promise<Ocpp16Actions[A][1]> => call<Ocpp16Actions, A>(stationId, action, req, 'operation');
  const send201 = <A extends keyof Ocpp201Actions & string>(
    stationId: string,
    action: A,
    req: Ocpp201Actions[A][0],
  ): Promise<Ocpp201Actions[A][1]> => call<Ocpp201Actions, A>(stationId, action, req, 'operation');
  return {
    async startCharging(stationId, { connectorId, idTag, idToken, groupIdToken, ...given }) {
      if (!speaks201(stationId))
        return send(stationId, 'RemoteStartTransaction', { ...(connectorId !== undefined && { connectorId }), idTag });
      // transactionId: one the station had already started (the cable plugged in first).
      const { status, transactionId, statusInfo } = await send201(stationId, 'RequestStartTransaction', {
        idToken: { ...idToken, idToken: idTag, type: idToken?.type ?? 'Central' },
        ...(groupIdToken && { groupIdToken }),
        ...(connectorId !== undefined && { evseId: connectorId }),
        remoteStartId: given.remoteStartId ?? FIRST_API_REMOTE_START_ID + (started++ % API_REMOTE_START_IDS),
      });
      return { status, ...(transactionId !== undefined && { transactionId }), ...(statusInfo && { statusInfo }) };
    },
    async stopCharging(stationId, transaction) {
      if (!speaks201(stationId)) return send(stationId, 'RemoteStopTransaction', { transactionId: transaction.id });
      const { status, statusInfo } = await send201(stationId, 'RequestStopTransaction', {
        transactionId: transaction.stationTransactionId ?? String(transaction.id),
      });
      return { status, ...(statusInfo && { statusInfo }) };
    },
    remoteStartTransaction: (stationId, req) => send(stationId, 'RemoteStartTransaction', req),
    remoteStopTransaction: (stationId, req) => send(stationId, 'RemoteStopTransaction', req),
    changeConfiguration: (stationId, req) => send(stationId, 'ChangeConfiguration', req),
    getConfiguration: (stationId, req = {}) => send(stationId, 'GetConfiguration', req),
    reset: (stationId, req) => send(stationId, 'Reset', req),
    unlockConnector: (stationId, req) => send(stationId, 'UnlockConnector', req),
    triggerMessage: (stationId, req) => send(stationId, 'TriggerMessage', req),
    changeAvailability: (stationId, req) => send(stationId, 'ChangeAvailability', req),
    isOnline: (stationId) => connections.connectionOf(stationId)?.state === RPC_OPEN,
    call16: (stationId, action, req) => call<Ocpp16Actions, typeof action>(stationId, action, req, 'relay'),
    call201: (stationId, action, req) => call<Ocpp201Actions, typeof action>(stationId, action, req, 'relay'),
    speaks201,
    protocolOf: (stationId) => {
      const connection = connections.connectionOf(stationId);
      return connection?.state === RPC_OPEN ? connection.protocol : undefined;
    },
    operate16: (stationId, action, req) => call<Ocpp16Actions, typeof action>(stationId, action, req, 'operation'),
    operate201: (stationId, action, req) => send201(stationId, action, req),
  };
}

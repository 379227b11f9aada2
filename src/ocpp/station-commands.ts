import type { Ocpp16Actions } from './v16/messages.js';
import { StationCallError, StationOfflineError, StationTimeoutError } from './errors.js';
import { isRpcError, isRpcTimeout, RPC_OPEN, type RpcConnection } from './rpc.js';

/**
 * One typed function per OCPP 1.6 command the rest of chargegate sends to a station. Every one rejects with
 * StationOfflineError (not connected), StationTimeoutError (no answer in time) or StationCallError (CALLERROR).
 */
/** The commands chargegate sends, each typed by the generated action map. */
type Command =
  'RemoteStartTransaction' | 'RemoteStopTransaction' | 'ChangeConfiguration' | 'GetConfiguration' | 'Reset' | 'UnlockConnector' | 'TriggerMessage' | 'ChangeAvailability';
type Send<A extends Command> = (stationId: string, req: Ocpp16Actions[A][0]) => Promise<Ocpp16Actions[A][1]>;

export interface StationCommands {
  remoteStartTransaction: Send<'RemoteStartTransaction'>;
  remoteStopTransaction: Send<'RemoteStopTransaction'>;
  changeConfiguration: Send<'ChangeConfiguration'>;
  getConfiguration: (stationId: string, req?: Ocpp16Actions['GetConfiguration'][0]) => Promise<Ocpp16Actions['GetConfiguration'][1]>;
  reset: Send<'Reset'>;
  unlockConnector: Send<'UnlockConnector'>;
  triggerMessage: Send<'TriggerMessage'>;
  changeAvailability: Send<'ChangeAvailability'>;
  isOnline(stationId: string): boolean;
}

/** Where the commands find a station's live connection. */
export interface ConnectionLookup {
  connectionOf(stationId: string): RpcConnection | undefined;
}

export function createStationCommands(connections: ConnectionLookup): StationCommands {
  const send = async <A extends Command>(stationId: string, action: A, req: Ocpp16Actions[A][0]): Promise<Ocpp16Actions[A][1]> => {
    const connection = connections.connectionOf(stationId);
    if (!connection || connection.state !== RPC_OPEN) throw new StationOfflineError(stationId);
    try {
      // Strict mode validated the answer against the schema the action map was generated from.
      return (await connection.call(action, req)) as Ocpp16Actions[A][1];
    } catch (err) {
      if (isRpcTimeout(err)) throw new StationTimeoutError(stationId, action);
      if (isRpcError(err)) throw new StationCallError(stationId, action, err.rpcErrorCode, err.message);
      // ocpp-rpc rejects in-flight calls with a plain Error when the socket closes under them.
      if (connections.connectionOf(stationId) !== connection || connection.state !== RPC_OPEN) throw new StationOfflineError(stationId);
      throw err;
    }
  };
  return {
    remoteStartTransaction: (stationId, req) => send(stationId, 'RemoteStartTransaction', req),
    remoteStopTransaction: (stationId, req) => send(stationId, 'RemoteStopTransaction', req),
    changeConfiguration: (stationId, req) => send(stationId, 'ChangeConfiguration', req),
    getConfiguration: (stationId, req = {}) => send(stationId, 'GetConfiguration', req),
    reset: (stationId, req) => send(stationId, 'Reset', req),
    unlockConnector: (stationId, req) => send(stationId, 'UnlockConnector', req),
    triggerMessage: (stationId, req) => send(stationId, 'TriggerMessage', req),
    changeAvailability: (stationId, req) => send(stationId, 'ChangeAvailability', req),
    isOnline: (stationId) => connections.connectionOf(stationId)?.state === RPC_OPEN,
  };
}

import type {
  ChangeAvailabilityRequest,
  ChangeAvailabilityResponse,
  ChangeConfigurationRequest,
  ChangeConfigurationResponse,
  GetConfigurationRequest,
  GetConfigurationResponse,
  RemoteStartStopResponse,
  RemoteStartTransactionRequest,
  RemoteStopTransactionRequest,
  ResetRequest,
  ResetResponse,
  TriggerMessageRequest,
  TriggerMessageResponse,
  UnlockConnectorRequest,
  UnlockConnectorResponse,
} from './messages.js';
import { StationCallError, StationOfflineError, StationTimeoutError } from './errors.js';
import { isRpcError, isRpcTimeout, RPC_OPEN, type RpcConnection } from './rpc.js';

/**
 * One typed function per OCPP 1.6 command the rest of chargegate sends to a station. Every one rejects with
 * StationOfflineError (not connected), StationTimeoutError (no answer in time) or StationCallError (CALLERROR).
 */
export interface StationCommands {
  remoteStartTransaction(stationId: string, req: RemoteStartTransactionRequest): Promise<RemoteStartStopResponse>;
  remoteStopTransaction(stationId: string, req: RemoteStopTransactionRequest): Promise<RemoteStartStopResponse>;
  changeConfiguration(stationId: string, req: ChangeConfigurationRequest): Promise<ChangeConfigurationResponse>;
  getConfiguration(stationId: string, req?: GetConfigurationRequest): Promise<GetConfigurationResponse>;
  reset(stationId: string, req: ResetRequest): Promise<ResetResponse>;
  unlockConnector(stationId: string, req: UnlockConnectorRequest): Promise<UnlockConnectorResponse>;
  triggerMessage(stationId: string, req: TriggerMessageRequest): Promise<TriggerMessageResponse>;
  changeAvailability(stationId: string, req: ChangeAvailabilityRequest): Promise<ChangeAvailabilityResponse>;
  isOnline(stationId: string): boolean;
}

/** Where the commands find a station's live connection. */
export interface ConnectionLookup {
  connectionOf(stationId: string): RpcConnection | undefined;
}

export function createStationCommands(connections: ConnectionLookup): StationCommands {
  const send = async <Res>(stationId: string, action: string, req: object): Promise<Res> => {
    const connection = connections.connectionOf(stationId);
    if (!connection || connection.state !== RPC_OPEN) throw new StationOfflineError(stationId);
    try {
      return (await connection.call(action, req)) as Res;
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

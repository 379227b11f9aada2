import type { AuthorizeResponse } from './v16/messages.js';
export {
  startCentralSystem,
  type CentralSystem,
  type CentralSystemOptions,
  type ConnectionListener,
  type ReportListener,
} from './central-system.js';
export type {
  FirmwareProgressListener,
  ForwardedMessage,
  LogStatusListener,
  StationMessageForwarder,
} from './call-handling.js';
export { createStationCommands, type StationCommands } from './station-commands.js';
export {
  createRemoteCharging,
  TransactionStoppedError,
  UnknownConnectorError,
  type RemoteCaller,
  type RemoteCharging,
} from './remote-charging.js';
export { createChargingLimits } from './charging-profiles.js';
export { StationCallError, StationOfflineError, StationTimeoutError } from './errors.js';
export { SIGN_CERTIFICATE_PER_STATION_PER_MINUTE } from './sign-certificate-throttle.js';
export { connectUpstreamAsStation } from './upstream-client.js';
export {
  createRpcClient,
  createRpcServer,
  isRpcError,
  isRpcTimeout,
  OCPP16,
  OCPP201,
  RPC_OPEN,
  rpcError,
  typedCall,
  type ActionMap,
  type RpcCallContext,
  type RpcClient,
  type RpcClientOptions,
  type RpcConnection,
  type RpcServer,
  type RpcServerClient,
} from './rpc.js';
export type * from './v16/messages.js';
export type { Ocpp201Actions } from './v201/messages.js';
/** What a station learns about an idTag (Authorize, StartTransaction, StopTransaction answers). */
export type IdTagInfo = AuthorizeResponse['idTagInfo'];

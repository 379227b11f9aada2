export { createHttpServer, type HttpServerOptions } from './server.js';
export { jwksRoutes } from './jwks.js';
export { tokenEndpointRoutes, type TokenEndpointOptions } from './token-endpoint.js';
export { BearerAuth, type Caller } from './bearer-auth.js';
export { statusGuard, type StatusGuard } from './status-access.js';
export { chargePointsApiRoutes, type ChargePointsApiOptions } from './charge-points-api.js';
export { historyApiRoutes, type HistoryApiOptions } from './history-api.js';
export { circuitsApiRoutes, type CircuitsApiOptions } from './circuits-api.js';
export { openApiRoutes } from './openapi.js';
export { authorizationServerMetadataRoutes } from './authorization-server-metadata.js';
export { circuitLimitApiRoutes, type CircuitLimitApiOptions } from './circuit-limit-api.js';
export {
  bearerPrincipal,
  registerStationRoutes,
  type StationPermission,
  type StationPrincipal,
  type StationRoutesDeps,
} from './stations-api.js';
export { registerFirmwareRoutes, type FirmwareRoutesDeps } from './firmware-api.js';
export { DOWNLOAD_IDLE_TIMEOUT_MS, registerFirmwareFiles, type FirmwareFilesDeps } from './firmware-files.js';
export { logRoutes, type LogRoutesDeps } from './station-logs-api.js';
export { uploadRoutes } from './station-log-uploads.js';

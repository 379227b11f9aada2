export { configSchema, EVENT_TYPES, PERMISSIONS, sessionMeters } from './schema.js';
export { modbusBusKey, type RegisterSpec } from './meter-schema.js';
export { CHARGE_POINT_DEFAULTS } from './circuits.js';
export { circuitTree, type CircuitNode } from './circuit-tree.js';
export { isLoopbackHost, isWildcardHost } from './hosts.js';
export { stationFacingBaseUrl, stationFacingUrlProblem } from './station-facing-url.js';
export type {
  ChargePointFactsConfig,
  CircuitConfig,
  CircuitMeterConfig,
  Config,
  EventType,
  FirmwareConfig,
  GroupConfig,
  LoadManagementConfig,
  LogsConfig,
  MeterConfig,
  ModbusConnectionConfig,
  Permission,
  SessionMeterConfig,
  SiteConfig,
  StationConfig,
  WebhookAuthConfig,
  WebhookConfig,
  WebhookSignature,
} from './schema.js';
export { readConfiguredFile, unreadableFiles, UnreadableFileError } from './files.js';
export { ListenError, listenFailure } from './listen-error.js';
export { ConfigError, DEFAULT_CONFIG_PATH, formatKeyPath, loadConfig, parseConfig, resolveConfigPath } from './load.js';

export { Site, DomainError, LAST_SEEN_WRITE_MS, STATIONS_TOPIC } from './site.js';
export type {
  BootVerdict,
  ChargePointView,
  ConnectorRef,
  ConnectorStatusChange,
  ConnectorState,
  SiteOptions,
  StartTransactionInput,
  StationAdmission,
  StopTransactionInput,
  TransactionRow,
} from './site.js';
export { pruneStoppedTransactions } from './retention.js';
export { transactionHistory, type TransactionFilter } from './transaction-history.js';
export { SiteDirectory, type ChargePointRef } from './directory.js';
export { isStationId, STATION_ID_RULE } from './station-id.js';
export { formatZonedTimestamp } from './zoned-timestamp.js';
export {
  AUTHORIZATION_STATUSES,
  STOP_REASONS,
  whToKWh,
  type AuthorizationStatus,
  type AuthorizePayload,
  type ChargePointStatusPayload,
  type StartTransactionPayload,
  type StopReason,
  type StopTransactionPayload,
} from './events.js';
export type { StationState } from './stations.js';

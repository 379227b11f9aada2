export { Site, LAST_SEEN_WRITE_MS, type SiteOptions } from './site.js';
export type { EventListener } from './site-context.js';
export { DomainError } from './domain-error.js';
export {
  checkCurrentA,
  checkEnergyWh,
  checkInstant,
  MAX_CURRENT_A,
  MAX_ENERGY_WH,
  OutOfBoundsError,
} from './input-bounds.js';
export {
  StationRegistry,
  STATIONS_TOPIC,
  type BootVerdict,
  type StationAdmission,
  type StationListing,
} from './station-registry.js';
export {
  Connectors,
  type ChargePointView,
  type ConnectorRef,
  type ConnectorState,
  type ConnectorStatusChange,
} from './connectors.js';
export { Authorizations } from './authorizations.js';
export {
  Transactions,
  type StartTransactionInput,
  type StopTransactionInput,
  type Transaction,
} from './transactions.js';
export {
  carriedReadings,
  MAX_SIGNED_BEGIN_END_PER_TRANSACTION,
  MAX_SIGNED_READING_CHARS,
  MAX_SIGNED_SAMPLES_PER_TRANSACTION,
  SignedReadings,
  signedMeterValuePayload,
  signedReadingsOf,
  type KeptReadings,
  type SignedReading,
  type SignedReadingInput,
} from './signed-readings.js';
export {
  MAX_BEGIN_END_READINGS_PER_TRANSACTION,
  MAX_PERIODIC_READINGS_PER_TRANSACTION,
  PERIODIC_READING_SPACING_MS,
  type MeterReadingInput,
  type MeterReadingPayload,
} from './meter-readings.js';
export { pruneStoppedTransactions } from './prune-stopped-transactions.js';
export {
  transactionHistory,
  transactionRecord,
  transactionWithReadings,
  type TransactionFilter,
  type TransactionRecord,
} from './transaction-history.js';
export { SiteDirectory, type ChargePointRef } from './directory.js';
export { isStationId, STATION_ID_RULE } from './station-id.js';
export { stationIdentity, type StationIdentity } from './station-identity.js';
export {
  AUTHORIZATION_STATUSES,
  STOP_REASONS,
  whToKWh,
  type AuthorizationStatus,
  type AuthorizePayload,
  type ChargePointStatusPayload,
  type SignedMeterValuePayload,
  type StartTransactionPayload,
  type StopReason,
  type StopTransactionPayload,
} from './events.js';
export type { StationState } from './stations.js';

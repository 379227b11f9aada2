export type { OperationAnswer, OperationRecord } from './audit.js';
export { OPERATIONS_KEPT } from './audit.js';
export type { BaseReport, ReportedVariable } from './base-reports.js';
export { InvalidOperationError, NoBaseReportError, StationBusyError } from './errors.js';
export type { LongOperation, LongOperationSource, StationInventory } from './inventory.js';
export { OPERATIONS_WAITING } from './operation-queue.js';
export type { StationOperation } from './operations.js';
export {
  StationOperations,
  type OperationInProgress,
  type OperationOutcome,
  type StationDetail,
  type StationOperationsOptions,
} from './station-operations.js';

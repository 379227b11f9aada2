export { allocate, type Share } from './allocation.js';
export type { ChargingLimits, CsmsSchedules, LimitOutcome, TransactionLimit } from './charging-limits.js';
export { controlLoad, INITIAL_CONTROLLER_STATE } from './controller.js';
export * from './types.js';
export { SYSTEM_CLOCK, type Cancel, type LoadClock } from './clock.js';
export { REPORT_AFTER_RAISE_MS, type ReportedDraw } from './draw-estimate.js';
export { LoadManager, type LoadManagerOptions } from './load-manager.js';
export type { CircuitMeterReport, CircuitMeters, OpenTransaction, OpenTransactions } from './ports.js';
export { connectorKeyOf, hasCircuits } from './site-projection.js';
export type { CircuitStatus, ConnectorComposite, ConnectorStatus, LoadStatus } from './status-views.js';
export { registerLoadMetrics } from './load-metrics.js';
export {
  circuitLimitState,
  effectiveMaxCurrentA,
  findCircuit,
  limitCurrentProblem,
  limitUntilProblem,
  MAX_TEMPORARY_LIMIT_A,
  MAX_TEMPORARY_LIMIT_DAYS,
  storedTemporaryLimits,
  TEMPORARY_LIMIT_STEP_A,
  TEMPORARY_LIMITS_TOPIC,
  TemporaryLimits,
  type CircuitLimitState,
  type ConfiguredCircuit,
  type TemporaryLimit,
  type TemporaryLimitSource,
} from './temporary-limits.js';
export {
  capped,
  compositeOf,
  constant,
  limitAt,
  lowerOf,
  periodsOf,
  scaled,
  sumOf,
  within,
  type ConnectorPlace,
  type LimitProfile,
  type PlacedProfile,
  type ProfilePurpose,
  type SchedulePeriod,
  type Step,
  type Steps,
  type Window,
} from './schedules.js';
export { VOLTS_PER_PHASE } from './circuit-load.js';

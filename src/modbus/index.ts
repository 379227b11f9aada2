export { METER_FLUSH_MS, MeterService, type MeterServiceOptions, type MetersReport } from './meter-service.js';
export { findMeter, readMeterOnce, type MeterReadResult } from './read-once.js';
export { loadHealth } from './meter-store.js';
export type { CircuitMeterHealth, MeterHealth } from './meter-health.js';
export type { CircuitMeterReading } from './circuit-poller.js';
export type { BusStats } from './bus.js';
export { ModbusBus } from './bus.js';
export { busSettingsOf, type BusSettings } from './bus-settings.js';
export { BusError } from './errors.js';
export { MeterReader } from './meter-reader.js';
export { METER_MODELS, registerMapOf, type MeterModel } from './models/index.js';
export { REGISTER_WORDS, type MeterRegisterMap, type RegisterSpec } from './register-map.js';
export { planReads, type RegisterRead } from './read-plan.js';
export { decodeRegister } from './decode.js';
export { readingProblem, type EnergyBaseline, type MeterReading, type ReadingProblem } from './reading.js';
export {
  detect,
  type DetectionConfig,
  type DetectorAction,
  type DetectorInput,
  type DetectorPhase,
  type DetectorState,
} from './detector.js';

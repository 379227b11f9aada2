import type { HealthLevel } from '../health/index.js';
import type { DetectorPhase } from './detector.js';

/** What GET /health shows under `meters` of any meter. */
export interface PolledMeterHealth {
  status: HealthLevel;
  /** False once no good reading came for detection.offlineAfterS. */
  online: boolean;
  model: string;
  bus: string;
  unitId: number;
  lastGoodReadingAt?: string;
  readings: number;
  /** Polls that got no answer (timeout, transport error, Modbus exception). */
  errors: number;
  /** Answers rejected as bad readings (NaN, negative or backwards energy). */
  rejected: number;
  consecutiveFailures: number;
  lastError?: string;
  busLatencyMs?: { last?: number; average?: number };
}

/**
 * A session meter as GET /health shows it, and as `chargegate meter status` prints it. Offline, its connector reports
 * Faulted.
 */
export interface MeterHealth extends PolledMeterHealth {
  role: 'session';
  lastReading?: { energyKWh: number; currentA: number[]; powerW?: number };
  session: { phase: DetectorPhase; transactionId?: number };
}

/** A circuit meter as GET /health shows it. */
export interface CircuitMeterHealth extends PolledMeterHealth {
  role: 'circuit';
  lastReading?: { currentA: number[]; powerW?: number };
}

/** offlineLevel when the meter is offline; warning: its last poll failed; ok otherwise. */
export function meterLevel(online: boolean, consecutiveFailures: number, offlineLevel: HealthLevel): HealthLevel {
  if (!online) return offlineLevel;
  return consecutiveFailures > 0 ? 'warning' : 'ok';
}

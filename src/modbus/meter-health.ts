import type { HealthLevel } from '../health/index.js';
import type { DetectorPhase } from './detector.js';

/** One meter as GET /health shows it under `meters`, and as `chargegate meter status` prints it. */
export interface MeterHealth {
  status: HealthLevel;
  /** False once no good reading came for detection.offlineAfterS (the connector then reports Faulted). */
  online: boolean;
  model: string;
  bus: string;
  unitId: number;
  lastGoodReadingAt?: string;
  lastReading?: { energyKWh: number; currentA: number[]; powerW?: number };
  readings: number;
  /** Polls that got no answer (timeout, transport error, Modbus exception). */
  errors: number;
  /** Answers rejected as bad readings (NaN, negative or backwards energy). */
  rejected: number;
  consecutiveFailures: number;
  lastError?: string;
  session: { phase: DetectorPhase; transactionId?: number };
  busLatencyMs?: { last?: number; average?: number };
}

/** critical: the meter is offline; warning: its last poll failed; ok otherwise. */
export function meterLevel(online: boolean, consecutiveFailures: number): HealthLevel {
  if (!online) return 'critical';
  return consecutiveFailures > 0 ? 'warning' : 'ok';
}

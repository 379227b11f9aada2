import type { MeterConfig } from '../../config/index.js';
import { MODBUS_MAX_READ_REGISTERS, type MeterRegisterMap } from '../register-map.js';
import { abbB23 } from './abb-b23.js';
import { em340 } from './em340.js';
import { sdm120 } from './sdm120.js';
import { sdm630 } from './sdm630.js';

export type MeterModel = MeterConfig['model'];

/** The built-in models by their config name. */
export const METER_MODELS: Record<Exclude<MeterModel, 'custom'>, MeterRegisterMap> = {
  sdm630,
  sdm120,
  'abb-b23': abbB23,
  em340,
};

/** The register map a configured meter is read with: its model's, or the one its config gives. */
export function registerMapOf(meter: MeterConfig): MeterRegisterMap {
  if (meter.model !== 'custom') return METER_MODELS[meter.model];
  if (!meter.registers) throw new Error(`meter "${meter.id}": model custom needs registers`);
  const { maxReadGap, ...registers } = meter.registers;
  return { name: 'custom', ...registers, maxReadGap, maxRegistersPerRead: MODBUS_MAX_READ_REGISTERS };
}

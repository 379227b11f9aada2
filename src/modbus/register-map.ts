import type { RegisterSpec } from '../config/index.js';

export type { RegisterSpec };

/**
 * Where a meter model keeps the three values chargegate reads. Device knowledge is data: a model is one of these
 * tables (models/*.ts), and a `custom` meter brings its own from the config.
 */
export interface MeterRegisterMap {
  /** The product name an installer finds on the label, for logs and `meter read`. */
  name: string;
  energyImportKWh: RegisterSpec;
  currentA: RegisterSpec[];
  powerW?: RegisterSpec;
  /** Registers one request may read and discard to join two wanted ranges: only where the device defines them all. */
  maxReadGap: number;
  /** The most registers the device returns in one request. */
  maxRegistersPerRead: number;
}

/** 16-bit registers each value type occupies. */
export const REGISTER_WORDS: Record<RegisterSpec['type'], number> = {
  int16: 1,
  uint16: 1,
  float32: 2,
  int32: 2,
  uint32: 2,
  int64: 4,
  uint64: 4,
};

/** Modbus application protocol 6.3/6.4: a read of holding or input registers returns at most 125 registers. */
export const MODBUS_MAX_READ_REGISTERS = 125;

import type { MeterRegisterMap, RegisterSpec } from '../register-map.js';

const inputFloat = (address: number): RegisterSpec => ({
  functionCode: 4,
  address,
  type: 'float32',
  wordOrder: 'big',
  scale: 1,
});

/**
 * Eastron SDM120 (single phase): input registers, IEEE 754 float32, high word first.
 * 30007 current (A), 30013 active power (W), 30073 total import energy (kWh).
 */
export const sdm120: MeterRegisterMap = {
  name: 'Eastron SDM120',
  currentA: [inputFloat(0x0006)],
  powerW: inputFloat(0x000c),
  energyImportKWh: inputFloat(0x0048),
  maxReadGap: 0,
  maxRegistersPerRead: 80,
};

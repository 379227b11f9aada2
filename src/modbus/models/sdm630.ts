import type { MeterRegisterMap, RegisterSpec } from '../register-map.js';

const inputFloat = (address: number): RegisterSpec => ({
  functionCode: 4,
  address,
  type: 'float32',
  wordOrder: 'big',
  scale: 1,
});

/**
 * Eastron SDM630 (Modbus protocol v1.5): input registers, IEEE 754 float32, high word first.
 * 30007/30009/30011 phase currents (A), 30053 total system power (W), 30073 total import energy (kWh).
 * Registers between those ranges are partly undefined, so only contiguous ranges are joined.
 */
export const sdm630: MeterRegisterMap = {
  name: 'Eastron SDM630',
  currentA: [inputFloat(0x0006), inputFloat(0x0008), inputFloat(0x000a)],
  powerW: inputFloat(0x0034),
  energyImportKWh: inputFloat(0x0048),
  maxReadGap: 0,
  maxRegistersPerRead: 80,
};

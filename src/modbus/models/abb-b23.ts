import type { MeterRegisterMap, RegisterSpec } from '../register-map.js';

const holding = (address: number, type: RegisterSpec['type'], scale: number): RegisterSpec => ({
  functionCode: 3,
  address,
  type,
  wordOrder: 'big',
  scale,
});

/**
 * ABB B21/B23/B24: holding registers, big-endian words. 0x5000 active import energy total, uint64 in 0.01 kWh;
 * 0x5B0C/0x5B0E/0x5B10 phase currents, uint32 in 0.01 A; 0x5B14 total active power, int32 in 0.01 W.
 * The instantaneous block 0x5B00-0x5B3F is fully defined, so currents and power come in one request.
 */
export const abbB23: MeterRegisterMap = {
  name: 'ABB B23',
  energyImportKWh: holding(0x5000, 'uint64', 0.01),
  currentA: [holding(0x5b0c, 'uint32', 0.01), holding(0x5b0e, 'uint32', 0.01), holding(0x5b10, 'uint32', 0.01)],
  powerW: holding(0x5b14, 'int32', 0.01),
  maxReadGap: 8,
  maxRegistersPerRead: 64,
};

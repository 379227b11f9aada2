import type { MeterRegisterMap, RegisterSpec } from '../register-map.js';

const holdingInt32 = (address: number, scale: number): RegisterSpec => ({
  functionCode: 3,
  address,
  type: 'int32',
  wordOrder: 'little',
  scale,
});

/**
 * Carlo Gavazzi EM340: holding registers, INT32 with the least significant word first.
 * 0x000C/0x000E/0x0010 phase currents (A x 1000), 0x0028 system power (W x 10), 0x0034 kWh (+) TOT (kWh x 10).
 * Every register from 0x0000 to 0x0035 is defined, so the three values come in one request.
 */
export const em340: MeterRegisterMap = {
  name: 'Carlo Gavazzi EM340',
  currentA: [holdingInt32(0x000c, 0.001), holdingInt32(0x000e, 0.001), holdingInt32(0x0010, 0.001)],
  powerW: holdingInt32(0x0028, 0.1),
  energyImportKWh: holdingInt32(0x0034, 0.1),
  maxReadGap: 32,
  maxRegistersPerRead: 50,
};

import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import {
  decodeRegister,
  METER_MODELS,
  planReads,
  readingProblem,
  registerMapOf,
  type RegisterSpec,
} from '../../src/modbus/index.js';

const spec = (type: RegisterSpec['type'], wordOrder: 'big' | 'little' = 'big', scale = 1): RegisterSpec => ({
  functionCode: 4,
  address: 0,
  type,
  wordOrder,
  scale,
});

describe('register decoding', () => {
  // Raw words as the devices' manuals show them, not produced by our own encoder.
  it('reads an Eastron float32, high word first', () => {
    expect(decodeRegister(spec('float32'), [0x449a, 0x5000])).toBe(1234.5);
    expect(decodeRegister(spec('float32'), [0x4180, 0x0000])).toBe(16);
    expect(decodeRegister(spec('float32'), [0x7fc0, 0x0000])).toBeNaN();
  });

  it('reads an ABB B23 uint64 energy in 0.01 kWh', () => {
    // 123456 = 0x0001E240 -> 1234.56 kWh
    expect(decodeRegister(spec('uint64', 'big', 0.01), [0x0000, 0x0000, 0x0001, 0xe240])).toBeCloseTo(1234.56, 9);
  });

  it('reads a Carlo Gavazzi INT32 with the least significant word first', () => {
    // kWh x 10 = 12345 = 0x00003039 -> words [0x3039, 0x0000]
    expect(decodeRegister(spec('int32', 'little', 0.1), [0x3039, 0x0000])).toBeCloseTo(1234.5, 9);
    // A x 1000 = -1500 = 0xFFFFFA24 -> words [0xFA24, 0xFFFF]
    expect(decodeRegister(spec('int32', 'little', 0.001), [0xfa24, 0xffff])).toBeCloseTo(-1.5, 9);
  });

  it('reads 16-bit and signed 64-bit values', () => {
    expect(decodeRegister(spec('int16'), [0xffff])).toBe(-1);
    expect(decodeRegister(spec('uint16', 'big', 0.1), [2305])).toBeCloseTo(230.5, 9);
    expect(decodeRegister(spec('int64', 'little'), [0xfffe, 0xffff, 0xffff, 0xffff])).toBe(-2);
  });

  it('refuses a word count that does not fit the type', () => {
    expect(() => decodeRegister(spec('float32'), [1])).toThrow(/float32 needs 2 registers, got 1/);
  });
});

describe('read plans', () => {
  it('reads each built-in model in as few requests as its map allows', () => {
    expect(planReads(METER_MODELS.sdm630)).toEqual([
      { functionCode: 4, address: 0x0006, count: 6 },
      { functionCode: 4, address: 0x0034, count: 2 },
      { functionCode: 4, address: 0x0048, count: 2 },
    ]);
    expect(planReads(METER_MODELS.sdm120)).toHaveLength(3);
    expect(planReads(METER_MODELS['abb-b23'])).toEqual([
      { functionCode: 3, address: 0x5000, count: 4 },
      { functionCode: 3, address: 0x5b0c, count: 10 },
    ]);
    expect(planReads(METER_MODELS.em340)).toEqual([{ functionCode: 3, address: 0x000c, count: 42 }]);
  });

  it('joins a custom map across a gap only as far as maxReadGap allows, per function code', () => {
    const config = (maxReadGap: number) =>
      parseConfig(`
sites:
  - id: s
    meters:
      - id: m
        chargePointId: cp
        connectorId: 1
        model: custom
        registers:
          energyImportKWh: { functionCode: 3, address: 100, type: uint32, scale: 0.1 }
          currentA: [{ functionCode: 4, address: 10, type: int16, scale: 0.01 }, { functionCode: 4, address: 11, type: int16, scale: 0.01 }]
          powerW: { functionCode: 3, address: 104, type: int32 }
          maxReadGap: ${maxReadGap}
        connection: { type: tcp, host: 127.0.0.1 }
`).sites[0]!.meters[0]!;
    expect(planReads(registerMapOf(config(0)))).toEqual([
      { functionCode: 3, address: 100, count: 2 },
      { functionCode: 3, address: 104, count: 2 },
      { functionCode: 4, address: 10, count: 2 },
    ]);
    expect(planReads(registerMapOf(config(2)))).toEqual([
      { functionCode: 3, address: 100, count: 6 },
      { functionCode: 4, address: 10, count: 2 },
    ]);
  });

  it('splits a request that would exceed the device limit', () => {
    const map = { ...METER_MODELS.em340, maxRegistersPerRead: 20 };
    expect(planReads(map)).toEqual([
      { functionCode: 3, address: 0x000c, count: 6 },
      { functionCode: 3, address: 0x0028, count: 14 },
    ]);
  });
});

describe('reading checks', () => {
  const at = new Date('2026-01-01T10:00:00Z');
  const later = (s: number) => new Date(at.getTime() + s * 1000);
  const reading = (energyKWh: number, seconds = 1, currentA = [16, 16, 16]) => ({
    at: later(seconds),
    energyKWh,
    currentA,
    powerW: 11_000,
  });
  const baseline = { energyKWh: 100, at };

  it('accepts a plausible reading', () => {
    expect(readingProblem(reading(100.5), baseline)).toBeUndefined();
    expect(readingProblem(reading(100))).toBeUndefined();
  });

  it('rejects NaN and infinities in any value', () => {
    expect(readingProblem(reading(Number.NaN), baseline)).toEqual({ kind: 'invalid', message: 'energy is NaN' });
    expect(readingProblem(reading(100, 1, [16, Number.NaN, 16]), baseline)).toEqual({
      kind: 'invalid',
      message: 'current L2 is NaN',
    });
    expect(readingProblem({ ...reading(100), powerW: Number.POSITIVE_INFINITY }, baseline)).toEqual({
      kind: 'invalid',
      message: 'power is Infinity',
    });
  });

  it('rejects negative or absurd energy, and energy going backwards', () => {
    expect(readingProblem(reading(-5))).toEqual({ kind: 'invalid', message: 'negative energy -5 kWh' });
    expect(readingProblem(reading(3.4e38))).toEqual({
      kind: 'invalid',
      message: 'energy 3.4e+38 kWh is beyond any meter register',
    });
    expect(readingProblem(reading(99.9), baseline)).toEqual({
      kind: 'backwards',
      message: 'energy went backwards from 100 to 99.9 kWh',
    });
  });

  it('calls a rise no charger could cause a jump (the poller believes it only when it repeats), but not after enough time', () => {
    expect(readingProblem(reading(110, 1), baseline)).toEqual({
      kind: 'jump',
      message: 'energy jumped by 10 kWh in 1 s',
    });
    expect(readingProblem(reading(110, 3600), baseline)).toBeUndefined();
  });
});

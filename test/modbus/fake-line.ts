import { vi } from 'vitest';
import type { MeterConfig } from '../../src/config/index.js';
import { BusError, registerMapOf, type BusStats, type RegisterRead } from '../../src/modbus/index.js';
import { encodeRegister } from '../support/meter-simulator.js';

/**
 * A register bank standing in for the RS-485 line, for pollers under fake timers: the values the meter would show,
 * encoded with its register map, or a BusError while `silent`.
 */
export class FakeLine {
  energyKWh = 1000;
  currentA = [0, 0, 0];
  silent = false;
  private readonly registers = new Map<string, number>();

  constructor(private readonly meter: MeterConfig) {}

  read(_unitId: number, request: RegisterRead): Promise<number[]> {
    if (this.silent) return Promise.reject(new BusError('timeout', 'no answer within 1000 ms'));
    const map = registerMapOf(this.meter);
    const put = (spec: (typeof map)['energyImportKWh'], value: number) =>
      encodeRegister(spec, value).forEach((word, i) =>
        this.registers.set(`${spec.functionCode}:${spec.address + i}`, word),
      );
    put(map.energyImportKWh, this.energyKWh);
    map.currentA.forEach((spec, i) => put(spec, this.currentA[i] ?? 0));
    if (map.powerW)
      put(
        map.powerW,
        this.currentA.reduce((sum, a) => sum + a * 230, 0),
      );
    return Promise.resolve(
      Array.from(
        { length: request.count },
        (_, i) => this.registers.get(`${request.functionCode}:${request.address + i}`) ?? 0,
      ),
    );
  }

  stats(): BusStats {
    return { key: 'fake', connected: true, requests: 0, errors: 0, timeouts: 0, reconnects: 0 };
  }
}

/** Moves the clock second by second, giving the poller's awaits real turns in between (setImmediate is real). */
export async function seconds(count: number): Promise<void> {
  for (let s = 0; s < count; s++) {
    await vi.advanceTimersByTimeAsync(1000);
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  }
}

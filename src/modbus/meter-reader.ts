import type { MeterConfig } from '../config/index.js';
import type { RegisterSource } from './bus.js';
import { decodeRegister } from './decode.js';
import { registerMapOf } from './models/index.js';
import { planReads, wordsOf, type RegisterRead } from './read-plan.js';
import type { MeterReading } from './reading.js';
import type { MeterRegisterMap, RegisterSpec } from './register-map.js';

/** Reads one meter's energy, currents and power through its bus, with the requests its register map plans. */
export class MeterReader {
  readonly map: MeterRegisterMap;
  readonly reads: RegisterRead[];

  constructor(
    private readonly bus: RegisterSource,
    private readonly meter: MeterConfig,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.map = registerMapOf(meter);
    this.reads = planReads(this.map);
  }

  async read(): Promise<MeterReading> {
    const { unitId, timeoutMs } = this.meter.connection;
    const responses: number[][] = [];
    for (const request of this.reads) responses.push(await this.bus.read(unitId, request, timeoutMs));
    const value = (spec: RegisterSpec) => decodeRegister(spec, wordsOf(spec, this.reads, responses));
    return {
      at: this.now(),
      energyKWh: value(this.map.energyImportKWh),
      currentA: this.map.currentA.map(value),
      ...(this.map.powerW && { powerW: value(this.map.powerW) }),
    };
  }
}

import type { MeterConfig } from '../config/index.js';
import type { RegisterSource } from './bus.js';
import { decodeRegister } from './decode.js';
import { registerMapOf } from './models/index.js';
import { currentSpecs, planReads, wordsOf, type RegisterRead } from './read-plan.js';
import type { CurrentReading, MeterReading } from './reading.js';
import type { MeterRegisterMap, RegisterSpec } from './register-map.js';

/** Reads one meter's energy, currents and power through its bus, with the requests its register map plans. */
export class MeterReader {
  readonly map: MeterRegisterMap;
  readonly reads: RegisterRead[];
  /** Fewer where the energy register stands apart: a circuit meter's poll keeps a shared line free sooner. */
  private readonly currentReads: RegisterRead[];

  constructor(
    private readonly bus: RegisterSource,
    private readonly meter: MeterConfig,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.map = registerMapOf(meter);
    this.reads = planReads(this.map);
    this.currentReads = planReads(this.map, currentSpecs(this.map));
  }

  async read(): Promise<MeterReading> {
    const value = await this.request(this.reads);
    return { ...this.currents(value), energyKWh: value(this.map.energyImportKWh) };
  }

  /** The phase currents and the power, without the energy. */
  async readCurrents(): Promise<CurrentReading> {
    return this.currents(await this.request(this.currentReads));
  }

  /** Sends a plan's requests one after the other; returns the decoder of the values they cover. */
  private async request(reads: readonly RegisterRead[]): Promise<(spec: RegisterSpec) => number> {
    const { unitId, timeoutMs } = this.meter.connection;
    const responses: number[][] = [];
    for (const request of reads) responses.push(await this.bus.read(unitId, request, timeoutMs));
    return (spec) => decodeRegister(spec, wordsOf(spec, reads, responses));
  }

  private currents(value: (spec: RegisterSpec) => number): CurrentReading {
    return {
      at: this.now(),
      currentA: this.map.currentA.map(value),
      ...(this.map.powerW && { powerW: value(this.map.powerW) }),
    };
  }
}

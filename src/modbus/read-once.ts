import type { Config, MeterConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { ModbusBus, type BusStats } from './bus.js';
import { busSettingsOf } from './bus-settings.js';
import { MeterReader } from './meter-reader.js';
import { readingProblem, type MeterReading } from './reading.js';

export interface MeterReadResult {
  meterId: string;
  model: MeterConfig['model'];
  modelName: string;
  reading: MeterReading;
  /** Set when the daemon would reject this reading (NaN, negative energy). */
  problem?: string;
  /** Modbus requests the register map needed. */
  requests: number;
  bus: BusStats;
}

export function findMeter(config: Config, meterId: string): { meter: MeterConfig; siteId: string } | undefined {
  for (const site of config.sites) {
    const meter = site.meters.find((m) => m.id === meterId);
    if (meter) return { meter, siteId: site.id };
  }
  return undefined;
}

/**
 * Reads a meter once through the same bus, register map and decoding the daemon polls with: what an installer
 * runs when wiring a meter. A serial device the daemon holds is locked, so this fails fast rather than garbling
 * the daemon's frames.
 */
export async function readMeterOnce(meter: MeterConfig, logger: Logger): Promise<MeterReadResult> {
  const settings = [...busSettingsOf([meter.connection]).values()][0]!;
  const bus = new ModbusBus(settings, logger);
  try {
    const reader = new MeterReader(bus, meter);
    const reading = await reader.read();
    const problem = readingProblem(reading);
    return {
      meterId: meter.id,
      model: meter.model,
      modelName: reader.map.name,
      reading,
      ...(problem && { problem: problem.message }),
      requests: reader.reads.length,
      bus: bus.stats(),
    };
  } finally {
    await bus.close();
  }
}

/** What one poll of a meter returned, in the units the config names. */
export interface MeterReading {
  at: Date;
  energyKWh: number;
  /** One value per phase the map reads. */
  currentA: number[];
  powerW?: number;
}

/** The last accepted energy: readings are judged against it. */
export interface EnergyBaseline {
  energyKWh: number;
  at: Date;
}

/**
 * Far above any charger a meter like these sits on: a larger rise since the baseline is garbage (a misread
 * float), and accepting it would make every honest reading after it look like energy going backwards.
 */
const PLAUSIBLE_POWER_KW = 1000;
const PLAUSIBLE_JUMP_KWH = 1;

/** Why a reading cannot be trusted (NaN, negative or backwards energy, an impossible jump), or undefined. */
export function readingProblem(reading: MeterReading, baseline?: EnergyBaseline): string | undefined {
  const values: Array<[string, number]> = [['energy', reading.energyKWh], ...reading.currentA.map((a, i): [string, number] => [`current L${i + 1}`, a])];
  if (reading.powerW !== undefined) values.push(['power', reading.powerW]);
  const notNumber = values.find(([, v]) => !Number.isFinite(v));
  if (notNumber) return `${notNumber[0]} is ${notNumber[1]}`;
  if (reading.energyKWh < 0) return `negative energy ${reading.energyKWh} kWh`;
  if (!baseline) return undefined;
  if (reading.energyKWh < baseline.energyKWh) return `energy went backwards from ${baseline.energyKWh} to ${reading.energyKWh} kWh`;
  const hours = Math.max(0, reading.at.getTime() - baseline.at.getTime()) / 3_600_000;
  const rise = reading.energyKWh - baseline.energyKWh;
  if (rise > PLAUSIBLE_JUMP_KWH + PLAUSIBLE_POWER_KW * hours) return `energy jumped by ${rise} kWh in ${Math.round(hours * 3600)} s`;
  return undefined;
}

/** Energy in whole Wh, as the domain records meter values. */
export function kWhToWh(kWh: number): number {
  return Math.round(kWh * 1000);
}

import { MAX_ENERGY_WH } from '../site/index.js';

/** The phase currents and power of one poll: all a circuit meter is read for (it needs no energy). */
export interface CurrentReading {
  at: Date;
  /** One value per phase the map reads. */
  currentA: number[];
  powerW?: number;
}

/** What one poll of a session meter returned, in the units the config names. */
export interface MeterReading extends CurrentReading {
  energyKWh: number;
}

/** The last accepted energy: readings are judged against it. */
export interface EnergyBaseline {
  energyKWh: number;
  at: Date;
}

/**
 * Far above any charger a meter like these sits on: a larger rise since the baseline is suspect (a misread float
 * would make every honest reading after it look like energy going backwards). A rise that repeats consistently is
 * real, though (a meter read for the first time after answering zeros at power-up): the poller then accepts it.
 */
const PLAUSIBLE_POWER_KW = 1000;
const PLAUSIBLE_JUMP_KWH = 1;
/**
 * Energy registers of these meters show at most 8 digits: anything beyond what the domain takes is a misread, however
 * often.
 */
const MAX_ENERGY_KWH = MAX_ENERGY_WH / 1000;

/** Why a reading cannot be trusted. Only a `jump` can turn out real, when the next readings confirm it. */
export interface ReadingProblem {
  kind: 'invalid' | 'backwards' | 'jump';
  message: string;
}

/**
 * A phase current no meter these models read through their current transformers measures (the config takes circuits
 * of up to 10 kA): a larger one is a misread register.
 */
const MAX_CURRENT_A = 100_000;

/** NaN or infinite values, negative or absurd energy, energy going backwards or jumping; undefined when sound. */
export function readingProblem(reading: MeterReading, baseline?: EnergyBaseline): ReadingProblem | undefined {
  const notNumber = notFinite([['energy', reading.energyKWh], ...currentValues(reading)]);
  if (notNumber) return notNumber;
  if (reading.energyKWh < 0) return { kind: 'invalid', message: `negative energy ${reading.energyKWh} kWh` };
  if (reading.energyKWh > MAX_ENERGY_KWH)
    return { kind: 'invalid', message: `energy ${reading.energyKWh} kWh is beyond any meter register` };
  if (!baseline) return undefined;
  if (reading.energyKWh < baseline.energyKWh)
    return {
      kind: 'backwards',
      message: `energy went backwards from ${baseline.energyKWh} to ${reading.energyKWh} kWh`,
    };
  const hours = Math.max(0, reading.at.getTime() - baseline.at.getTime()) / 3_600_000;
  const rise = reading.energyKWh - baseline.energyKWh;
  if (rise > PLAUSIBLE_JUMP_KWH + PLAUSIBLE_POWER_KW * hours)
    return { kind: 'jump', message: `energy jumped by ${rise} kWh in ${Math.round(hours * 3600)} s` };
  return undefined;
}

/**
 * NaN or infinite values, negative or absurd phase currents; undefined when sound. A negative power is a circuit
 * exporting (solar panels behind the meter), not garbage.
 */
export function currentReadingProblem(reading: CurrentReading): ReadingProblem | undefined {
  const notNumber = notFinite(currentValues(reading));
  if (notNumber) return notNumber;
  for (const [i, a] of reading.currentA.entries()) {
    if (a < 0) return { kind: 'invalid', message: `negative current L${i + 1} ${a} A` };
    if (a > MAX_CURRENT_A) return { kind: 'invalid', message: `current L${i + 1} ${a} A is beyond any meter` };
  }
  return undefined;
}

/** The currents and the power of a reading, named as a problem names them. */
function currentValues(reading: CurrentReading): Array<[string, number]> {
  const values = reading.currentA.map((a, i): [string, number] => [`current L${i + 1}`, a]);
  if (reading.powerW !== undefined) values.push(['power', reading.powerW]);
  return values;
}

function notFinite(values: ReadonlyArray<[string, number]>): ReadingProblem | undefined {
  const found = values.find(([, v]) => !Number.isFinite(v));
  return found && { kind: 'invalid', message: `${found[0]} is ${found[1]}` };
}

/** Energy in whole Wh, as the domain records meter values. */
export function kWhToWh(kWh: number): number {
  return Math.round(kWh * 1000);
}

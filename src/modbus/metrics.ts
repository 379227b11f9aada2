import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { BusObserver } from './bus.js';
import type { CurrentReading, MeterReading } from './reading.js';

export type ReadingOutcome = 'ok' | 'error' | 'rejected';

/** Prometheus series of the meters and their buses, on the daemon's registry. */
export class MeterMetrics implements BusObserver {
  private readonly readings: Counter<'meter' | 'result'>;
  private readonly up: Gauge<'meter'>;
  private readonly lastGood: Gauge<'meter'>;
  private readonly energy: Gauge<'meter'>;
  private readonly current: Gauge<'meter' | 'phase'>;
  private readonly power: Gauge<'meter'>;
  private readonly session: Gauge<'meter'>;
  private readonly requestSeconds: Histogram<'bus' | 'outcome'>;
  private readonly connects: Counter<'bus'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.readings = new Counter({
      name: 'chargegate_meter_readings_total',
      help: 'Meter polls by result: ok, error (no answer), rejected (bad reading)',
      labelNames: ['meter', 'result'],
      registers,
    });
    this.up = new Gauge({
      name: 'chargegate_meter_up',
      help: '1 while the meter answers with good readings, 0 once it is offline',
      labelNames: ['meter'],
      registers,
    });
    this.lastGood = new Gauge({
      name: 'chargegate_meter_last_good_reading_timestamp_seconds',
      help: 'Unix time of the last good reading',
      labelNames: ['meter'],
      registers,
    });
    this.energy = new Gauge({
      name: 'chargegate_meter_energy_import_kwh',
      help: 'Total import energy of the last good reading',
      labelNames: ['meter'],
      registers,
    });
    this.current = new Gauge({
      name: 'chargegate_meter_current_amperes',
      help: 'Phase current of the last good reading',
      labelNames: ['meter', 'phase'],
      registers,
    });
    this.power = new Gauge({
      name: 'chargegate_meter_power_watts',
      help: 'Total active power of the last good reading',
      labelNames: ['meter'],
      registers,
    });
    this.session = new Gauge({
      name: 'chargegate_meter_session_active',
      help: '1 while a detected session is open',
      labelNames: ['meter'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'chargegate_modbus_request_duration_seconds',
      help: 'Modbus request latency per bus and outcome',
      labelNames: ['bus', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.connects = new Counter({
      name: 'chargegate_modbus_connects_total',
      help: 'Modbus client connections opened per bus (more than one: reconnects)',
      labelNames: ['bus'],
      registers,
    });
  }

  request(bus: string, seconds: number, outcome: string): void {
    this.requestSeconds.observe({ bus, outcome }, seconds);
  }

  connected(bus: string): void {
    this.connects.inc({ bus });
  }

  polled(meter: string, outcome: ReadingOutcome, reading?: CurrentReading | MeterReading): void {
    this.readings.inc({ meter, result: outcome });
    if (outcome !== 'ok' || !reading) return;
    this.lastGood.set({ meter }, reading.at.getTime() / 1000);
    if ('energyKWh' in reading) this.energy.set({ meter }, reading.energyKWh);
    reading.currentA.forEach((a, i) => this.current.set({ meter, phase: `L${i + 1}` }, a));
    if (reading.powerW !== undefined) this.power.set({ meter }, reading.powerW);
  }

  /** inSession only for a session meter: a circuit meter has no session to show. */
  state(meter: string, online: boolean, inSession?: boolean): void {
    this.up.set({ meter }, online ? 1 : 0);
    if (inSession !== undefined) this.session.set({ meter }, inSession ? 1 : 0);
  }

  /** Drops a meter's series when it leaves the config. */
  forget(meter: string): void {
    for (const gauge of [this.up, this.lastGood, this.energy, this.power, this.session]) gauge.remove({ meter });
    for (const phase of ['L1', 'L2', 'L3']) this.current.remove({ meter, phase });
    for (const result of ['ok', 'error', 'rejected']) this.readings.remove({ meter, result });
  }
}

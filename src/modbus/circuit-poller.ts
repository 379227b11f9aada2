import type { CircuitMeterConfig } from '../config/index.js';
import type { PhaseCurrents } from '../load/index.js';
import type { CircuitMeterHealth } from './meter-health.js';
import { MeterPollLoop, type MeterPollLoopOptions } from './meter-poll-loop.js';
import { currentReadingProblem, type CurrentReading, type ReadingProblem } from './reading.js';

/**
 * What load management observes of a circuit meter (docs/configuration/circuits.md#circuits-load-management): the current per phase of a good reading, or that
 * the meter is offline, when its circuit's connectors fall back to their fail-safe.
 */
export type CircuitMeterReading =
  | { meterId: string; at: Date; online: true; currentA: PhaseCurrents; powerW?: number }
  | { meterId: string; at: Date; online: false };

export interface CircuitPollerOptions extends MeterPollLoopOptions<CircuitMeterConfig> {
  /** Called with every good reading, and once when the meter goes offline. */
  onReading: (reading: CircuitMeterReading) => void;
}

/**
 * Polls a `role: circuit` meter for its phase currents and power. It detects no sessions and writes nothing: its
 * readings live in memory (a reading a second would wear the flash) and go to whoever listens.
 */
export class CircuitPoller extends MeterPollLoop<CircuitMeterConfig, CurrentReading> {
  private readonly onReading: (reading: CircuitMeterReading) => void;
  private last: CircuitMeterReading | undefined;

  constructor(options: CircuitPollerOptions) {
    super(options);
    this.onReading = options.onReading;
  }

  /** The latest good reading, or the meter going offline after it; undefined before its first good reading. */
  latest(): CircuitMeterReading | undefined {
    return this.last;
  }

  health(): CircuitMeterHealth {
    // A lost circuit meter costs its circuit the sharing, not the site its billing: a warning (docs/configuration/circuits.md#circuits-load-management).
    return { role: 'circuit', ...this.pollHealth('warning') };
  }

  protected read(): Promise<CurrentReading> {
    return this.reader.readCurrents();
  }

  protected problemOf(reading: CurrentReading): ReadingProblem | undefined {
    return currentReadingProblem(reading);
  }

  protected accepted(reading: CurrentReading): void {
    // A meter with fewer current registers sits on a single-phase connection: its other phases carry nothing.
    const [L1 = 0, L2 = 0, L3 = 0] = reading.currentA;
    this.hand({
      meterId: this.meter.id,
      at: reading.at,
      online: true,
      currentA: { L1, L2, L3 },
      ...(reading.powerW !== undefined && { powerW: reading.powerW }),
    });
    this.metrics?.state(this.meter.id, true);
  }

  protected offline(reason: string, wentOffline: boolean): void {
    if (!wentOffline) return;
    this.logger.error(
      { error: reason, lastGoodReadingAt: this.lastGoodAt?.toISOString() ?? null },
      'circuit meter offline; its circuit falls back to the fail-safe',
    );
    this.hand({ meterId: this.meter.id, at: this.now(), online: false });
    this.metrics?.state(this.meter.id, false);
  }

  private hand(reading: CircuitMeterReading): void {
    this.last = reading;
    this.onReading(reading);
  }
}

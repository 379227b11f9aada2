/**
 * How hard and how long each scenario pushes. `full` is the figures (2,000 stations, 1,000 events per
 * type, 50 meters); `quick` runs the same code at a size that finishes within a minute, to keep it working in CI.
 */
export interface BenchSettings {
  mode: 'quick' | 'full';
  /** Upper bound on one scenario: a hung part is reported, and the run goes on. */
  scenarioTimeoutS: number;
  /** How long to wait for every committed event to reach the receiver after the load stops. */
  drainTimeoutS: number;
  pipeline: { stations: number; warmupS: number; measureS: number; signRateS: number };
  latency: { stations: number; eventsPerS: number; warmupS: number; measureS: number };
  capacity: { stations: number; generators: number; connectConcurrency: number; warmupS: number; measureS: number };
  authorize: { stations: number; generators: number; callsPerStationPerS: number; warmupS: number; measureS: number };
  backlog: { stations: number; eventsPerType: number; retryIntervalS: number };
  footprint: { starts: number; idleS: number };
  modbus: { meters: number; pollIntervalMs: number; startDelayS: number; measureS: number };
  load: {
    connectors: number;
    pollIntervalMs: number;
    raiseAfterS: number;
    /** Steps of the other load up (each measured) and down again. */
    steps: number;
    /** controlLoad timed over this many batches of this many steps; the median batch counts. */
    costBatches: number;
    costStepsPerBatch: number;
  };
  /**
   * Scenario 9: phases of charging sessions at a site's pace (stations, the pause between a station's sessions,
   * the measured window), each session `meterValues` MeterValues `meterIntervalS` apart; one station authorizing
   * every `lone.intervalS`, each event alone as at a quiet site; then scenario 1's kind of load, stations starting and
   * stopping as fast as answers come.
   */
  sitePace: {
    paced: Array<{ stations: number; pauseS: number; measureS: number }>;
    meterValues: number;
    meterIntervalS: number;
    lone: { intervalS: number; measureS: number };
    saturated: { stations: number; measureS: number };
  };
}

export const FULL: BenchSettings = {
  mode: 'full',
  scenarioTimeoutS: 600,
  drainTimeoutS: 120,
  pipeline: { stations: 200, warmupS: 3, measureS: 15, signRateS: 2 },
  latency: { stations: 200, eventsPerS: 100, warmupS: 2, measureS: 20 },
  capacity: { stations: 2000, generators: 4, connectConcurrency: 25, warmupS: 5, measureS: 15 },
  authorize: { stations: 500, generators: 2, callsPerStationPerS: 1, warmupS: 3, measureS: 15 },
  backlog: { stations: 20, eventsPerType: 1000, retryIntervalS: 1 },
  footprint: { starts: 5, idleS: 10 },
  modbus: { meters: 50, pollIntervalMs: 1000, startDelayS: 3, measureS: 30 },
  load: { connectors: 50, pollIntervalMs: 500, raiseAfterS: 1, steps: 10, costBatches: 15, costStepsPerBatch: 500 },
  // Issue 32's paces: a real site's (~1.2 events/s; two minutes, so that the WAL's checkpoint every 1,000 pages
  // comes once or twice) and a far busier one (~17 events/s). The pruning pass a minute after start finds nothing.
  sitePace: {
    paced: [
      { stations: 2, pauseS: 2, measureS: 120 },
      { stations: 20, pauseS: 0.5, measureS: 45 },
    ],
    meterValues: 3,
    meterIntervalS: 1,
    // Further apart than delivery bookkeeping waits for a commit to share (2 s): each event's commits are its own.
    lone: { intervalS: 5, measureS: 60 },
    saturated: { stations: 20, measureS: 10 },
  },
};

export const QUICK: BenchSettings = {
  mode: 'quick',
  // Generous: CI runs this beside the rest of the suite on two cores; these bound a hang, they time nothing.
  scenarioTimeoutS: 180,
  drainTimeoutS: 60,
  pipeline: { stations: 4, warmupS: 0.5, measureS: 1.5, signRateS: 0.3 },
  latency: { stations: 4, eventsPerS: 100, warmupS: 0.5, measureS: 1.5 },
  capacity: { stations: 100, generators: 2, connectConcurrency: 25, warmupS: 0.5, measureS: 1.5 },
  authorize: { stations: 40, generators: 1, callsPerStationPerS: 2, warmupS: 0.5, measureS: 1.5 },
  backlog: { stations: 4, eventsPerType: 40, retryIntervalS: 0.5 },
  footprint: { starts: 2, idleS: 1 },
  modbus: { meters: 4, pollIntervalMs: 500, startDelayS: 1, measureS: 1.5 },
  load: { connectors: 50, pollIntervalMs: 500, raiseAfterS: 1, steps: 1, costBatches: 3, costStepsPerBatch: 50 },
  sitePace: {
    paced: [{ stations: 4, pauseS: 0.2, measureS: 2 }],
    meterValues: 3,
    meterIntervalS: 0.2,
    lone: { intervalS: 0.5, measureS: 2 },
    saturated: { stations: 4, measureS: 1 },
  },
};

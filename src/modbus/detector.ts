import type { SessionMeterConfig } from '../config/index.js';

export type DetectionConfig = SessionMeterConfig['detection'];

/**
 * idle: no session. starting: drawing, waiting out startDelayS. charging: in a session. stopping: in a session,
 * quiet, waiting out stopDelayS (a pause shorter than that, e.g. a car balancing its battery, changes nothing).
 */
export type DetectorPhase = 'idle' | 'starting' | 'charging' | 'stopping';

export interface DetectorState {
  phase: DetectorPhase;
  /** When the condition the phase waits on was first seen (starting: drawing; stopping: quiet). */
  since?: Date;
  /** Energy when drawing was first seen: the session's meterStart once the start is confirmed. */
  candidateEnergyWh?: number;
  /** The open session (charging and stopping). */
  transactionId?: number;
}

/** What the detector looks at in one good reading. */
export interface DetectorInput {
  at: Date;
  energyWh: number;
  currentA: readonly number[];
  powerW?: number;
}

export type DetectorAction =
  | { type: 'start'; startedAt: Date; meterStartWh: number }
  | { type: 'stop'; transactionId: number; stoppedAt: Date; meterStopWh: number };

/**
 * How far short of a delay, in poll intervals, a run may measure and still count. Readings are timed when their
 * answers arrive, so with a delay of whole poll intervals the reading that completes it measures a few ms short
 * about half the time and the start (or stop) came one poll late. A quarter poll absorbs answer jitter, yet a
 * session still never starts before readings have shown current for startDelayS less a quarter poll (and the
 * current began before the first of them).
 */
const DELAY_SLACK = 0.25;

/**
 * One step of a meter's session detector: pure, with time taken from the readings. A session starts at the first
 * reading of a run at or above the start threshold that lasts startDelayS, with that reading's energy; it stops at
 * the first reading of a run at or below the stop threshold that lasts stopDelayS, with the energy of the reading
 * that confirms it. A run lasts a delay when it spans it to within a quarter of pollIntervalMs (see DELAY_SLACK).
 * Readings that never came (a meter offline) neither confirm nor cancel anything.
 * After a `start` the caller records the session and puts its transactionId into the returned state.
 */
export function detect(
  state: DetectorState,
  input: DetectorInput,
  detection: DetectionConfig,
  pollIntervalMs: number,
): { state: DetectorState; action?: DetectorAction } {
  const slackMs = pollIntervalMs * DELAY_SLACK;
  const lasted = (since: Date | undefined, delayS: number) =>
    input.at.getTime() - (since ?? input.at).getTime() >= delayS * 1000 - slackMs;
  switch (state.phase) {
    case 'idle':
    case 'starting': {
      if (!isDrawing(input, detection)) return { state: { phase: 'idle' } };
      const starting =
        state.phase === 'starting'
          ? state
          : { phase: 'starting' as const, since: input.at, candidateEnergyWh: input.energyWh };
      if (!lasted(starting.since, detection.startDelayS)) return { state: starting };
      return {
        state: { phase: 'charging' },
        action: {
          type: 'start',
          startedAt: starting.since ?? input.at,
          meterStartWh: starting.candidateEnergyWh ?? input.energyWh,
        },
      };
    }
    case 'charging':
    case 'stopping': {
      const transactionId = state.transactionId;
      if (transactionId === undefined) return { state: { phase: 'idle' } };
      if (!isQuiet(input, detection)) return { state: { phase: 'charging', transactionId } };
      const stopping =
        state.phase === 'stopping' ? state : { phase: 'stopping' as const, since: input.at, transactionId };
      if (!lasted(stopping.since, detection.stopDelayS)) return { state: stopping };
      return {
        state: { phase: 'idle' },
        action: { type: 'stop', transactionId, stoppedAt: stopping.since ?? input.at, meterStopWh: input.energyWh },
      };
    }
  }
}

/** Whether the phase means a session is open (what the connector status says: Charging rather than Available). */
export function inSession(phase: DetectorPhase): boolean {
  return phase === 'charging' || phase === 'stopping';
}

function peakCurrentA(input: DetectorInput): number {
  return Math.max(0, ...input.currentA.map(Math.abs));
}

function isDrawing(input: DetectorInput, d: DetectionConfig): boolean {
  return (
    peakCurrentA(input) >= d.startCurrentA ||
    (d.startPowerW !== undefined && input.powerW !== undefined && input.powerW >= d.startPowerW)
  );
}

function isQuiet(input: DetectorInput, d: DetectionConfig): boolean {
  const powerQuiet = d.stopPowerW === undefined || input.powerW === undefined || input.powerW <= d.stopPowerW;
  return peakCurrentA(input) <= d.stopCurrentA && powerQuiet;
}

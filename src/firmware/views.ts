import type { RolloutRow, RolloutState, StationUpdateState, UpdateRow } from './rollout-store.js';

/** One station of a rollout, as `firmware status` and GET /firmware/rollouts/{id} show it. */
export interface StationUpdateView {
  stationId: string;
  state: StationUpdateState;
  /** Why it failed or was cancelled; for a waiting station, why it is not sent yet (null: it goes when a slot frees). */
  reason: string | null;
  oldFirmwareVersion: string | null;
  sentAt: string | null;
  /** The last step it reported (or when it was sent). */
  progressAt: string | null;
  endedAt: string | null;
}

/** A rollout and each of its stations (contract 11.2). */
export interface RolloutView {
  rolloutId: string;
  imageId: string;
  state: RolloutState;
  parallel: number;
  force: boolean;
  continueOnFailure: boolean;
  who: string;
  createdAt: string;
  /** When its last station ended; null while it goes on. */
  endedAt: string | null;
  stations: StationUpdateView[];
}

export function rolloutView(
  rollout: RolloutRow,
  updates: UpdateRow[],
  whyWaiting: (stationId: string) => string | null,
): RolloutView {
  return {
    rolloutId: rollout.rolloutId,
    imageId: rollout.imageId,
    state: rollout.state,
    parallel: rollout.parallel,
    force: rollout.force,
    continueOnFailure: rollout.continueOnFailure,
    who: rollout.who,
    createdAt: rollout.createdAt,
    endedAt: rollout.endedAt,
    stations: updates.map((u) => ({
      stationId: u.stationId,
      state: u.state,
      reason: u.state === 'waiting' && rollout.state === 'running' ? whyWaiting(u.stationId) : u.reason,
      oldFirmwareVersion: u.oldVersion,
      sentAt: u.sentAt,
      progressAt: u.progressAt,
      endedAt: u.endedAt,
    })),
  };
}

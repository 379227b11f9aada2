import { statement, type Database } from '../store/index.js';

/** Where a station is in its update (contract 11.2); cancelled: never sent (DELETE, or the rollout stopped). */
export type StationUpdateState =
  'waiting' | 'sent' | 'downloading' | 'downloaded' | 'installing' | 'installed' | 'failed' | 'cancelled';

/** running; stopped: a station failed and no other is sent since; cancelled: DELETE; done: every station ended. */
export type RolloutState = 'running' | 'stopped' | 'cancelled' | 'done';

/** The states of a station the gateway has sent UpdateFirmware and waits on: each holds one of the N slots. */
export const UNDER_WAY: readonly StationUpdateState[] = ['sent', 'downloading', 'downloaded', 'installing'];

export interface RolloutSettings {
  imageId: string;
  parallel: number;
  force: boolean;
  continueOnFailure: boolean;
  /** `cli` or the API client id. */
  who: string;
}

export interface RolloutRow extends RolloutSettings {
  rolloutId: string;
  state: RolloutState;
  createdAt: string;
  endedAt: string | null;
}

/** One station's update as the database keeps it. */
export interface UpdateRow {
  rolloutId: string;
  stationId: string;
  position: number;
  state: StationUpdateState;
  reason: string | null;
  token: string | null;
  requestId: number | null;
  oldVersion: string | null;
  installedReported: number;
  sentAt: string | null;
  progressAt: string | null;
  endedAt: string | null;
}

const ROLLOUT_COLUMNS = `id AS rolloutId, image_id AS imageId, parallel, force, continue_on_failure AS continueOnFailure,
  who, created_at AS createdAt, state, ended_at AS endedAt`;
const updateColumns = (t: string): string => `${t}rollout_id AS rolloutId, ${t}station_id AS stationId, ${t}position,
  ${t}state, ${t}reason, ${t}token, ${t}request_id AS requestId, ${t}old_version AS oldVersion,
  ${t}installed_reported AS installedReported, ${t}sent_at AS sentAt, ${t}progress_at AS progressAt,
  ${t}ended_at AS endedAt`;
const UPDATE_COLUMNS = updateColumns('');

interface StoredRollout extends Omit<RolloutRow, 'force' | 'continueOnFailure'> {
  force: number;
  continueOnFailure: number;
}

const asRollout = (row: StoredRollout): RolloutRow => ({
  ...row,
  force: row.force === 1,
  continueOnFailure: row.continueOnFailure === 1,
});

/** The rollouts' rows: plain reads and writes, called inside the writer's writes by rollouts.ts. */
export const rolloutStore = {
  insert(db: Database, rollout: RolloutRow, stationIds: string[]): void {
    statement(
      db,
      `INSERT INTO firmware_rollouts (id, image_id, parallel, force, continue_on_failure, who, created_at, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'running')`,
    ).run(
      rollout.rolloutId,
      rollout.imageId,
      rollout.parallel,
      rollout.force ? 1 : 0,
      rollout.continueOnFailure ? 1 : 0,
      rollout.who,
      rollout.createdAt,
    );
    stationIds.forEach((stationId, position) =>
      statement(
        db,
        `INSERT INTO firmware_rollout_stations (rollout_id, station_id, position, state) VALUES (?, ?, ?, 'waiting')`,
      ).run(rollout.rolloutId, stationId, position),
    );
  },

  rollout(db: Database, rolloutId: string): RolloutRow | undefined {
    const row = statement<[string], StoredRollout>(
      db,
      `SELECT ${ROLLOUT_COLUMNS} FROM firmware_rollouts WHERE id = ?`,
    ).get(rolloutId);
    return row && asRollout(row);
  },

  /** The newest first. */
  recent(db: Database, limit: number): RolloutRow[] {
    return statement<[number], StoredRollout>(
      db,
      `SELECT ${ROLLOUT_COLUMNS} FROM firmware_rollouts ORDER BY created_at DESC, id DESC LIMIT ?`,
    )
      .all(limit)
      .map(asRollout);
  },

  /** Rollouts that are not over: running, or stopped/cancelled with stations still under way. */
  open(db: Database): RolloutRow[] {
    return statement<[], StoredRollout>(db, `SELECT ${ROLLOUT_COLUMNS} FROM firmware_rollouts WHERE ended_at IS NULL`)
      .all()
      .map(asRollout);
  },

  updates(db: Database, rolloutId: string): UpdateRow[] {
    return statement<[string], UpdateRow>(
      db,
      `SELECT ${UPDATE_COLUMNS} FROM firmware_rollout_stations WHERE rollout_id = ? ORDER BY position`,
    ).all(rolloutId);
  },

  /** The station's update in a rollout not yet over (one at most: a station is in one such rollout at a time). */
  current(db: Database, stationId: string): UpdateRow | undefined {
    return statement<[string], UpdateRow>(
      db,
      `SELECT ${updateColumns('s.')} FROM firmware_rollout_stations s
       JOIN firmware_rollouts r ON r.id = s.rollout_id
       WHERE s.station_id = ? AND r.ended_at IS NULL AND s.state NOT IN ('installed', 'failed', 'cancelled')`,
    ).get(stationId);
  },

  byToken(db: Database, token: string): UpdateRow | undefined {
    return statement<[string], UpdateRow>(
      db,
      `SELECT ${UPDATE_COLUMNS} FROM firmware_rollout_stations WHERE token = ?`,
    ).get(token);
  },

  update(db: Database, row: UpdateRow): void {
    statement(
      db,
      `UPDATE firmware_rollout_stations SET state = @state, reason = @reason, token = @token, request_id = @requestId,
         old_version = @oldVersion, installed_reported = @installedReported, sent_at = @sentAt,
         progress_at = @progressAt, ended_at = @endedAt
       WHERE rollout_id = @rolloutId AND station_id = @stationId`,
    ).run(row);
  },

  setRollout(db: Database, rolloutId: string, state: RolloutState, endedAt: string | null): void {
    statement(db, 'UPDATE firmware_rollouts SET state = ?, ended_at = ? WHERE id = ?').run(state, endedAt, rolloutId);
  },
};

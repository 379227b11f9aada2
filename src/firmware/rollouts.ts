import { randomBytes, randomInt } from 'node:crypto';
import { stationFacingBaseUrl, type Config } from '../config/index.js';
import { messageOf, safely, type Logger } from '../log/index.js';
import { OCPP201 } from '../ocpp/index.js';
import { stationIdentity, type Site } from '../site/index.js';
import type { LongOperation, StationOperations } from '../stations/index.js';
import type { Writer } from '../store/index.js';
import { FirmwareError } from './errors.js';
import { findImage, type FirmwareImage } from './images.js';
import { progressOf } from './progress.js';
import { stationsOf } from './targets.js';
import {
  rolloutStore as store,
  UNDER_WAY,
  type RolloutRow,
  type RolloutSettings,
  type UpdateRow,
} from './rollout-store.js';
import { rolloutView, type RolloutView } from './views.js';

/** Contract 11.2: a station's download token stays valid this long after its update ended. */
export const TOKEN_GRACE_MS = 3_600_000;

export interface FirmwareRolloutsOptions {
  writer: Writer;
  site: Pick<Site, 'stations' | 'transactions'>;
  /** Which stations are connected now, and in which protocol. */
  live: { protocolOf(stationId: string): string | undefined };
  /** UpdateFirmware goes out as a station operation: queued behind the others, audited, logged. */
  operations: Pick<StationOperations, 'run'>;
  config: () => Config;
  logger: Logger;
  now?: () => Date;
}

export interface RolloutRequest extends Omit<RolloutSettings, 'imageId'> {
  imageId: string;
  stationIds?: string[];
  siteId?: string;
}

/**
 * Firmware rollouts (contract 11.2), their state in the database so a restart resumes them: at most `parallel`
 * stations under way; a station with a running transaction is sent nothing (unless force) and holds no slot, so idle
 * ones go first; each station followed by its FirmwareStatusNotifications and its next boot; a failure, or no
 * progress for firmware.stationTimeoutS, fails it and stops the rollout unless continueOnFailure.
 */
export class FirmwareRollouts {
  private readonly log: Logger;
  private readonly now: () => Date;
  /** Stations whose UpdateFirmware waits for its turn in the station's operation queue: each holds a slot, unsent. */
  private readonly queued = new Set<string>();

  constructor(private readonly options: FirmwareRolloutsOptions) {
    this.log = options.logger.child({ component: 'firmware' });
    this.now = options.now ?? (() => new Date());
  }

  private get db() {
    return this.options.writer.db;
  }

  create(request: RolloutRequest): RolloutView {
    const image = findImage(this.db, request.imageId);
    if (!image) throw new FirmwareError(`imageId: no firmware image "${request.imageId}" (firmware list)`, 'invalid');
    const stationIds = stationsOf(this.options.site.stations.list(), request);
    const rollout: RolloutRow = {
      rolloutId: `ro-${randomBytes(6).toString('hex')}`,
      imageId: image.imageId,
      parallel: request.parallel,
      force: request.force,
      continueOnFailure: request.continueOnFailure,
      who: request.who,
      state: 'running',
      createdAt: this.now().toISOString(),
      endedAt: null,
    };
    this.options.writer.writeNow(() => {
      for (const stationId of stationIds) {
        const busy = store.current(this.db, stationId);
        if (busy)
          throw new FirmwareError(
            `station "${stationId}" is in rollout ${busy.rolloutId}, not finished yet`,
            'conflict',
          );
      }
      store.insert(this.db, rollout, stationIds);
    });
    const { imageId, parallel, force, continueOnFailure, who } = rollout;
    this.log.info(
      { rolloutId: rollout.rolloutId, imageId, stations: stationIds, parallel, force, continueOnFailure, who },
      'firmware rollout started',
    );
    // 11.1: the CSMS's own UpdateFirmware keep being relayed; a local rollout beside them is allowed, and said.
    if (this.options.config().upstream?.csms)
      this.log.info({ rolloutId: rollout.rolloutId }, 'firmware rollout beside the CSMS the uplink connects to');
    this.pump(rollout.rolloutId);
    return this.view(rollout.rolloutId) as RolloutView;
  }

  view(rolloutId: string): RolloutView | undefined {
    const rollout = store.rollout(this.db, rolloutId);
    if (!rollout) return undefined;
    return rolloutView(rollout, store.updates(this.db, rolloutId), (stationId) =>
      this.queued.has(stationId) ? "queued behind the station's other operations" : this.whyWaiting(rollout, stationId),
    );
  }

  /** The newest rollouts first. */
  recent(limit = 20): RolloutView[] {
    return store.recent(this.db, limit).map((r) => this.view(r.rolloutId) as RolloutView);
  }

  /** DELETE: every station not yet sent is cancelled; those under way finish. Undefined for an unknown rollout. */
  cancel(rolloutId: string, who: string): RolloutView | undefined {
    const rollout = store.rollout(this.db, rolloutId);
    if (!rollout) return undefined;
    if (rollout.endedAt === null) {
      this.options.writer.writeNow(() => {
        this.cancelWaiting(rollout, `cancelled by ${who}`);
        store.setRollout(this.db, rolloutId, 'cancelled', null);
        this.settle(rolloutId);
      });
      this.log.info({ rolloutId, who }, 'firmware rollout cancelled');
    }
    return this.view(rolloutId);
  }

  /** The rollout a station is part of now, for the inventory's `operation` (contract 11.1); null when none. */
  operationOf(stationId: string): LongOperation | null {
    const row = store.current(this.db, stationId);
    return row ? { kind: 'firmware', id: row.rolloutId, state: row.state } : null;
  }

  /** The image a download token and file name stand for, while the token is valid; undefined otherwise. */
  download(token: string, fileName: string): FirmwareImage | undefined {
    if (!/^[0-9a-f]{32}$/.test(token)) return undefined;
    const row = store.byToken(this.db, token);
    if (!row) return undefined;
    if (row.endedAt !== null && this.now().getTime() - Date.parse(row.endedAt) > TOKEN_GRACE_MS) return undefined;
    const rollout = store.rollout(this.db, row.rolloutId);
    const image = rollout && findImage(this.db, rollout.imageId);
    return image?.fileName === fileName ? image : undefined;
  }

  /** A FirmwareStatusNotification, inside the write of the station's call: it changes the update, or nothing. */
  statusReported(stationId: string, status: string, requestId?: number): void {
    const row = store.current(this.db, stationId);
    if (!row || !UNDER_WAY.includes(row.state) || (requestId !== undefined && requestId !== row.requestId)) {
      this.log.info({ stationId, status, requestId }, 'firmware status nobody asked for: nothing changed');
      return;
    }
    const progress = progressOf(status, this.options.live.protocolOf(stationId) === OCPP201);
    this.log.debug({ stationId, rolloutId: row.rolloutId, status }, 'firmware status followed');
    const at = this.now().toISOString();
    switch (progress.kind) {
      case 'none':
        return;
      case 'failed':
        return this.fail(row, progress.reason);
      // Progress is a step the update had not reached: a station repeating Downloading or DownloadPaused makes none,
      // and is failed by firmware.stationTimeoutS like a silent one (nothing written meanwhile).
      case 'installed-reported':
        if (row.installedReported === 1) return;
        return this.change({ ...row, installedReported: 1, progressAt: at });
      case 'state':
        if (progress.state === row.state) return;
        return this.change({
          ...row,
          state: progress.state,
          progressAt: at,
          ...(progress.state === 'installed' && { endedAt: at }),
        });
    }
  }

  /** A BootNotification, inside its write: a new firmwareVersion is the update installed. */
  booted(stationId: string, firmwareVersion: string | undefined): void {
    const row = store.current(this.db, stationId);
    if (!row || !UNDER_WAY.includes(row.state)) return;
    const at = this.now().toISOString();
    if (firmwareVersion !== undefined && firmwareVersion !== row.oldVersion) {
      this.log.info({ stationId, rolloutId: row.rolloutId, firmwareVersion }, 'firmware installed');
      return this.change({ ...row, state: 'installed', progressAt: at, endedAt: at });
    }
    if (row.installedReported === 1)
      return this.fail(row, `booted with the old firmware ${firmwareVersion ?? '(none)'} after it said Installed`);
    this.log.info({ stationId, rolloutId: row.rolloutId, firmwareVersion }, 'station booted during its update');
  }

  /** Fails stations without progress for firmware.stationTimeoutS, then sends what may go: the daemon's timer. */
  tick(): void {
    const timeoutMs = this.options.config().firmware.stationTimeoutS * 1000;
    const now = this.now().getTime();
    for (const rollout of store.open(this.db)) {
      for (const row of store.updates(this.db, rollout.rolloutId))
        if (UNDER_WAY.includes(row.state) && now - Date.parse(row.progressAt ?? row.sentAt ?? '') > timeoutMs)
          this.fail(row, `no progress for ${timeoutMs / 1000} s (firmware.stationTimeoutS)`);
      this.pump(rollout.rolloutId);
    }
  }

  /** Sends UpdateFirmware to the stations that may go now: idle (or forced), connected, within the free slots. */
  pump(rolloutId: string): void {
    const rollout = store.rollout(this.db, rolloutId);
    if (!rollout || rollout.state !== 'running') return;
    const updates = store.updates(this.db, rolloutId);
    const queued = (u: UpdateRow): boolean => u.state === 'waiting' && this.queued.has(u.stationId);
    let free = rollout.parallel - updates.filter((u) => UNDER_WAY.includes(u.state) || queued(u)).length;
    for (const row of updates) {
      if (free <= 0) break;
      if (row.state !== 'waiting' || queued(row) || this.whyWaiting(rollout, row.stationId) !== null) continue;
      this.send(rollout, row);
      free -= 1;
    }
  }

  /**
   * Queues UpdateFirmware behind the station's other operations. Whether it may go is asked again when its turn comes
   * (a transaction may have started meanwhile), and only then is it recorded as sent: a daemon stopped while it waits
   * leaves it waiting, to be sent after the restart.
   */
  private send(rollout: RolloutRow, waiting: UpdateRow): void {
    const { stationId, rolloutId } = waiting;
    const image = findImage(this.db, rollout.imageId);
    if (!image) return this.fail(waiting, `image ${rollout.imageId} is no longer stored`);
    const token = randomBytes(16).toString('hex');
    const requestId = randomInt(1, 2 ** 31 - 1);
    const retrieveAt = this.now().toISOString();
    const location = `${stationFacingBaseUrl(this.options.config())}/firmware/${token}/${image.fileName}`;
    this.queued.add(stationId);
    let sent: UpdateRow | undefined;
    const ready = (): boolean => {
      sent = this.sentNow(rolloutId, stationId, { token, requestId });
      return sent !== undefined;
    };
    const operation = {
      kind: 'firmware-update' as const,
      location,
      retrieveAt,
      requestId,
      ...(image.signature !== null && { signature: image.signature }),
      ...(image.signingCertificate !== null && { signingCertificate: image.signingCertificate }),
    };
    this.options.operations.run(stationId, rollout.who, operation, ready).then(
      (outcome) => {
        // Not sent: its slot is free for a station that may go.
        if (outcome === null) return this.pumpSoon(rolloutId);
        if (!outcome.succeeded && sent) this.failIfStillSent(sent, `UpdateFirmware answered ${outcome.answer.status}`);
      },
      (err: unknown) => {
        this.queued.delete(stationId);
        // Never sent (its turn did not come in time, or it could not be recorded): it waits for the next tick.
        if (sent) this.failIfStillSent(sent, `UpdateFirmware not answered: ${messageOf(err)}`);
      },
    );
  }

  /** The station's turn in its queue: recorded as sent when it may still go, else undefined and it waits again. */
  private sentNow(
    rolloutId: string,
    stationId: string,
    ids: { token: string; requestId: number },
  ): UpdateRow | undefined {
    this.queued.delete(stationId);
    const rollout = store.rollout(this.db, rolloutId);
    const waiting = store.current(this.db, stationId);
    // Cancelled or stopped while it waited in the queue.
    if (rollout?.state !== 'running' || waiting?.rolloutId !== rolloutId || waiting.state !== 'waiting')
      return undefined;
    const why = this.whyWaiting(rollout, stationId);
    if (why !== null) {
      this.log.info({ stationId, rolloutId, why }, 'firmware update not sent: the station waits again');
      return undefined;
    }
    const at = this.now().toISOString();
    const row: UpdateRow = {
      ...waiting,
      state: 'sent',
      reason: null,
      ...ids,
      oldVersion: stationIdentity(this.options.site.stations.bootInfo(stationId) ?? null).firmwareVersion,
      sentAt: at,
      progressAt: at,
    };
    // Recorded before it is sent: after a crash in between, the station is waited on and times out, never sent twice.
    this.options.writer.writeNow(() => store.update(this.db, row));
    this.log.info({ stationId, rolloutId, oldVersion: row.oldVersion }, 'firmware update sent');
    return row;
  }

  private failIfStillSent(sent: UpdateRow, reason: string): void {
    this.safely(sent.rolloutId, () => {
      const row = store.current(this.db, sent.stationId);
      if (row?.token === sent.token && row.state === 'sent') this.options.writer.writeNow(() => this.fail(row, reason));
    });
  }

  /** Sends what may go once the write that freed a slot has run: after the station's answer, not inside its call. */
  private pumpSoon(rolloutId: string): void {
    setImmediate(() => this.safely(rolloutId, () => this.pump(rolloutId)));
  }

  /** Work no caller waits for: a failure (a full disk, say) is logged, and the next tick tries again. */
  private safely(rolloutId: string, work: () => void): void {
    safely(this.log, 'firmware rollout could not go on; trying again at the next tick', work, { rolloutId });
  }

  /** Why a waiting station is not sent now; null when it may go. */
  private whyWaiting(rollout: RolloutRow, stationId: string): string | null {
    if (this.options.live.protocolOf(stationId) === undefined) return 'not connected';
    if (!rollout.force && this.options.site.transactions.open().some((t) => t.stationId === stationId))
      return 'charging: sent once its transactions end';
    return null;
  }

  private change(row: UpdateRow): void {
    this.options.writer.write(() => {
      store.update(this.db, row);
      this.settle(row.rolloutId);
    });
    if (!UNDER_WAY.includes(row.state)) this.pumpSoon(row.rolloutId);
  }

  private fail(row: UpdateRow, reason: string): void {
    const at = this.now().toISOString();
    this.log.warn({ stationId: row.stationId, rolloutId: row.rolloutId, reason }, 'firmware update failed');
    this.options.writer.write(() => {
      store.update(this.db, { ...row, state: 'failed', reason, endedAt: at });
      const rollout = store.rollout(this.db, row.rolloutId);
      if (rollout && rollout.state === 'running' && !rollout.continueOnFailure) {
        store.setRollout(this.db, rollout.rolloutId, 'stopped', null);
        this.cancelWaiting(rollout, `not sent: ${row.stationId} failed and the rollout stopped (--continue goes on)`);
        this.log.warn({ rolloutId: rollout.rolloutId, stationId: row.stationId }, 'firmware rollout stopped');
      }
      this.settle(row.rolloutId);
    });
    this.pumpSoon(row.rolloutId);
  }

  private cancelWaiting(rollout: RolloutRow, reason: string): void {
    const at = this.now().toISOString();
    for (const row of store.updates(this.db, rollout.rolloutId))
      if (row.state === 'waiting') store.update(this.db, { ...row, state: 'cancelled', reason, endedAt: at });
  }

  /** Ends the rollout once no station is under way and, while it runs, none waits. */
  private settle(rolloutId: string): void {
    const rollout = store.rollout(this.db, rolloutId);
    if (!rollout || rollout.endedAt !== null) return;
    const updates = store.updates(this.db, rolloutId);
    if (updates.some((u) => UNDER_WAY.includes(u.state) || u.state === 'waiting')) return;
    store.setRollout(
      this.db,
      rolloutId,
      rollout.state === 'running' ? 'done' : rollout.state,
      this.now().toISOString(),
    );
    this.log.info({ rolloutId, stations: updates.map((u) => [u.stationId, u.state]) }, 'firmware rollout ended');
  }
}

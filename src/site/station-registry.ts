import { generateSecret, hashSecret } from '../credentials/index.js';
import { bumpChangeCounter, statement } from '../store/index.js';
import { DomainError } from './domain-error.js';
import type { SiteContext } from './site-context.js';
import { isStationId, STATION_ID_RULE } from './station-id.js';
import {
  allStations,
  ensureStation,
  findStation,
  prunePendingStations,
  type StationState,
  type StoredStation,
} from './stations.js';

/** Bumped on every pairing, block or removal: the OCPP listener re-checks the connections it holds. */
export const STATIONS_TOPIC = 'stations';

export type StationAdmission =
  | { verdict: 'known'; siteId: string; passwordHash: string | null }
  | { verdict: 'unknown' }
  | { verdict: 'rejected'; state: StationState };

export type BootVerdict = 'Accepted' | 'Pending' | 'Rejected';

/** A station as `station list` and the status page show it: from the config, the database, and live activity. */
export interface StationListing {
  id: string;
  siteId: string | null;
  state: StationState | 'configured';
  online: boolean;
  lastSeen: string | null;
  hasPassword: boolean;
  bootInfo: object | null;
}

/**
 * The stations: who may connect (pairing, blocking, the bound on pending strangers), who is online, when each was
 * last seen. Heartbeats touch memory only; last-seen times reach the database in one rare batch.
 */
export class StationRegistry {
  private readonly lastSeen = new Map<string, string>();

  constructor(private readonly ctx: SiteContext) {}

  admission(stationId: string): StationAdmission {
    const row = findStation(this.ctx.db, stationId);
    if (row && (row.state === 'blocked' || row.state === 'removed')) return { verdict: 'rejected', state: row.state };
    const configuredSite = this.ctx.directory.configuredSiteOf(stationId);
    if (configuredSite) return { verdict: 'known', siteId: configuredSite, passwordHash: row?.passwordHash ?? null };
    if (row?.state === 'paired' && row.siteId)
      return { verdict: 'known', siteId: row.siteId, passwordHash: row.passwordHash };
    return { verdict: 'unknown' };
  }

  /**
   * BootNotification: known -> Accepted; unknown -> recorded as pending, Pending (Accepted if configured); removed or
   * blocked -> Rejected.
   */
  boot(stationId: string, bootInfo: object): BootVerdict {
    return this.ctx.commit(() => {
      const admission = this.admission(stationId);
      const now = this.ctx.now();
      this.remember(stationId, now);
      statement(this.ctx.db, 'UPDATE stations SET boot_info = ?, last_seen = ? WHERE id = ?').run(
        JSON.stringify(bootInfo),
        now.toISOString(),
        stationId,
      );
      if (admission.verdict === 'rejected') return 'Rejected';
      if (admission.verdict === 'known') return 'Accepted';
      return this.ctx.config().ocpp.acceptUnknownStations ? 'Accepted' : 'Pending';
    });
  }

  /** The BootNotification the station last sent, as it sent it (the uplink repeats it to the CSMS). */
  bootInfo(stationId: string): object | undefined {
    const bootInfo = findStation(this.ctx.db, stationId)?.bootInfo;
    return bootInfo ? (JSON.parse(bootInfo) as object) : undefined;
  }

  /**
   * The site a connected station belongs to. Unknown stations that were let in count under the first site until paired.
   */
  siteOf(stationId: string): string {
    const admission = this.admission(stationId);
    if (admission.verdict === 'known') return admission.siteId;
    const first = this.ctx.config().sites[0];
    if (!first) throw new Error('config has no site');
    return first.id;
  }

  setOnline(stationId: string, online: boolean): void {
    const now = this.ctx.now();
    this.lastSeen.delete(stationId);
    // One commit (one fsync) for a station's first contact, not one per statement.
    this.ctx.commit(() => {
      this.remember(stationId, now);
      statement(this.ctx.db, 'UPDATE stations SET online = ?, last_seen = ? WHERE id = ?').run(
        online ? 1 : 0,
        now.toISOString(),
        stationId,
      );
    });
  }

  /**
   * Marks activity in memory; flushLastSeen() writes it in one batch, rarely (LAST_SEEN_WRITE_MS): heartbeats cost
   * no write. Connecting and disconnecting write it at once.
   */
  touch(stationId: string): void {
    this.lastSeen.set(stationId, this.ctx.now().toISOString());
  }

  flushLastSeen(): void {
    if (this.lastSeen.size === 0) return;
    const entries = [...this.lastSeen];
    this.lastSeen.clear();
    const update = statement(this.ctx.db, 'UPDATE stations SET last_seen = ? WHERE id = ?');
    this.ctx.commit(() => {
      for (const [id, at] of entries) update.run(at, id);
    });
  }

  /** At daemon start nothing is connected, whatever the last run left behind. */
  markAllOffline(): void {
    statement(this.ctx.db, 'UPDATE stations SET online = 0 WHERE online = 1').run();
  }

  /** Approves a pending or new station for a site and returns its new OCPP password, shown once. */
  pair(stationId: string, siteId: string): { password: string } {
    if (!isStationId(stationId))
      throw new DomainError(
        `"${JSON.stringify(stationId).slice(1, 60)}" is not a station id the OCPP listener admits: ${STATION_ID_RULE}`,
      );
    const { directory } = this.ctx;
    if (!directory.siteExists(siteId)) throw new DomainError(`no site "${siteId}" in the config`);
    const configuredSite = directory.configuredSiteOf(stationId);
    if (configuredSite && configuredSite !== siteId)
      throw new DomainError(`station "${stationId}" belongs to site "${configuredSite}" in the config`);
    const password = generateSecret(18);
    this.ctx.writer.writeNow(() => {
      ensureStation(this.ctx.db, stationId, 'paired', this.ctx.now());
      statement(this.ctx.db, "UPDATE stations SET state = 'paired', site_id = ?, password_hash = ? WHERE id = ?").run(
        siteId,
        hashSecret(password),
        stationId,
      );
      bumpChangeCounter(this.ctx.db, STATIONS_TOPIC);
    });
    return { password };
  }

  /**
   * Blocks (or removes) a station: the daemon closes its open connection and answers its next BootNotification
   * Rejected.
   */
  setState(stationId: string, state: 'blocked' | 'removed'): void {
    this.ctx.writer.writeNow(() => {
      ensureStation(this.ctx.db, stationId, state, this.ctx.now());
      statement(this.ctx.db, 'UPDATE stations SET state = ?, password_hash = NULL WHERE id = ?').run(state, stationId);
      bumpChangeCounter(this.ctx.db, STATIONS_TOPIC);
    });
  }

  /** Stations from the config and the database, for `station list` and the status page; removed ones only if asked. */
  list(options: { includeRemoved?: boolean } = {}): StationListing[] {
    const rows = new Map<string, StoredStation>(allStations(this.ctx.db).map((r) => [r.id, r]));
    const ids = new Set<string>([
      ...this.ctx.config().sites.flatMap((s) => s.stations.map((st) => st.id)),
      ...rows.keys(),
    ]);
    return [...ids]
      .sort()
      .map((id) => {
        const row = rows.get(id);
        const configuredSite = this.ctx.directory.configuredSiteOf(id);
        const state: StationState | 'configured' =
          row?.state === 'blocked' || row?.state === 'removed' || row?.state === 'paired'
            ? row.state
            : configuredSite
              ? 'configured'
              : 'pending';
        return {
          id,
          siteId: configuredSite ?? row?.siteId ?? null,
          state,
          online: row?.online === true,
          lastSeen: this.lastSeen.get(id) ?? row?.lastSeen ?? null,
          hasPassword: Boolean(row?.passwordHash),
          bootInfo: row?.bootInfo ? (JSON.parse(row.bootInfo) as object) : null,
        };
      })
      .filter((s) => options.includeRemoved === true || s.state !== 'removed');
  }

  /** A station's row on its first contact: an unknown one is pending, within the bound on pending stations. */
  private remember(stationId: string, now: Date): void {
    const { db, directory } = this.ctx;
    if (ensureStation(db, stationId, 'pending', now))
      prunePendingStations(db, this.ctx.config().ocpp.maxPendingStations, now, directory.configuredStationIds());
  }
}

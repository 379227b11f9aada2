import type { Config, EventType } from '../config/index.js';
import { generateSecret, hashSecret } from '../credentials/index.js';
import { appendEvent, subscribedWebhooks, type OutboxEvent } from '../outbox/index.js';
import { bumpChangeCounter, DirectWriter, statement, type Database, type Writer } from '../store/index.js';
import { isStationId, STATION_ID_RULE } from './station-id.js';
import { formatZonedTimestamp } from './zoned-timestamp.js';
import { SiteDirectory, type ChargePointRef } from './directory.js';
import {
  whToKWh,
  type AuthorizationStatus,
  type AuthorizePayload,
  type ChargePointStatusPayload,
  type StartTransactionPayload,
  type StopReason,
  type StopTransactionPayload,
} from './events.js';
import { allStations, ensureStation, findStation, prunePendingStations, type StationRow, type StationState } from './stations.js';

/** A connector anywhere on the site: an OCPP station's connector or a Modbus meter's charge point. */
export interface ConnectorRef extends ChargePointRef {
  connectorId: number;
}

/** How the site treats a station that asks to connect or boot. */
export type StationAdmission = { verdict: 'known'; siteId: string; passwordHash: string | null } | { verdict: 'unknown' } | { verdict: 'rejected'; state: StationState };

export type BootVerdict = 'Accepted' | 'Pending' | 'Rejected';

export interface TransactionRow {
  id: number;
  site_id: string;
  station_id: string;
  charge_point_id: string;
  connector_id: number;
  id_tag: string;
  meter_start_wh: number;
  started_at: string;
  reservation_id: number | null;
  source: 'ocpp' | 'modbus';
  meter_stop_wh: number | null;
  stopped_at: string | null;
  stop_reason: string | null;
  stop_id_tag: string | null;
}

/** A connector status written in the same commit as a session change (Modbus sessions: Charging / Available). */
export interface ConnectorStatusChange {
  status: string;
  errorCode: string;
}

export interface StartTransactionInput {
  at: ConnectorRef;
  idTag: string;
  meterStartWh: number;
  startedAt: Date;
  reservationId?: number;
  source: 'ocpp' | 'modbus';
  /** The tag's status re-evaluated at start; emits the post-start Authorize event. Absent for Modbus sessions. */
  authorizationStatus?: AuthorizationStatus;
  connectorStatus?: ConnectorStatusChange;
}

export interface StopTransactionInput {
  /** The station (or meter) asking: a transaction is stopped only by the one that started it. */
  stationId: string;
  transactionId: number;
  meterStopWh: number;
  stoppedAt: Date;
  reason?: StopReason;
  idTag?: string;
  connectorStatus?: ConnectorStatusChange;
}

export interface ConnectorState {
  connectorId: number;
  status: string;
  errorCode: string;
  transactionId?: number;
}

export interface ChargePointView {
  chargePointId: string;
  stationId: string;
  siteId: string;
  online: boolean;
  connectors: ConnectorState[];
}

export interface SiteOptions {
  db: Database;
  /** Read on every call so a SIGHUP reload takes effect at once. */
  config: () => Config;
  now?: () => Date;
  /** Called after a commit that appended events, outside the transaction: delivery wakes up without polling. */
  onEventsCommitted?: () => void;
  /**
   * What writes to db: the daemon's group commit (the changes of one event-loop turn commit together at its end;
   * callers answer for a change only through durable()). Without it each change commits before its method returns.
   */
  writer?: Writer;
}

const STATIONS_TOPIC = 'stations';

/** How often the daemon writes the last-seen times of connected stations (the running daemon shows them live). */
export const LAST_SEEN_WRITE_MS = 3_600_000;

/**
 * The domain: stations, connectors, transactions and the events they cause. Every state change and its events
 * commit in one SQLite transaction, before the caller (an OCPP handler, the Modbus detector) answers anyone.
 * It knows no protocol.
 */
export class Site {
  private readonly db: Database;
  private readonly config: () => Config;
  private readonly now: () => Date;
  private directoryCache: { config: Config; directory: SiteDirectory } | undefined;
  private readonly lastSeen = new Map<string, string>();
  private readonly onEventsCommitted: () => void;
  private appended = 0;
  private readonly writer: Writer;

  constructor(options: SiteOptions) {
    this.db = options.db;
    this.config = options.config;
    this.now = options.now ?? (() => new Date());
    this.onEventsCommitted = options.onEventsCommitted ?? (() => {});
    this.writer = options.writer ?? new DirectWriter(options.db);
  }

  /**
   * Runs fn (a station's call, say) and resolves with its result once every change it made is durable; rejects if a
   * commit of one of them failed (the change is undone, the caller answers with an error).
   */
  durable<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.writer.durable(fn);
  }

  /**
   * Runs fn as one write (its domain calls and whatever else it writes on this connection, such as a Modbus
   * detector's state) and commits it before returning: all of it is durable, or none of it (it throws).
   */
  inOneCommit<T>(fn: () => T): T {
    return this.writer.writeNow(fn);
  }

  /** One SQLite transaction (or savepoint of the turn's group) for a state change and its events. */
  private commit<T>(fn: () => T): T {
    const before = this.appended;
    const result = this.writer.write(fn);
    if (this.appended !== before) this.announceEvents();
    return result;
  }

  /** Tells delivery about new events once they have committed (the listener coalesces a burst into one wake). */
  private announceEvents(): void {
    if (!this.db.inTransaction) return this.onEventsCommitted();
    this.writer.committed().then(
      () => this.onEventsCommitted(),
      () => undefined,
    );
  }

  get directory(): SiteDirectory {
    const config = this.config();
    if (this.directoryCache?.config !== config) this.directoryCache = { config, directory: new SiteDirectory(config) };
    return this.directoryCache.directory;
  }

  // ---- stations -------------------------------------------------------------------------------------------

  admission(stationId: string): StationAdmission {
    const row = findStation(this.db, stationId);
    if (row && (row.state === 'blocked' || row.state === 'removed')) return { verdict: 'rejected', state: row.state };
    const configuredSite = this.directory.configuredSiteOf(stationId);
    if (configuredSite) return { verdict: 'known', siteId: configuredSite, passwordHash: row?.password_hash ?? null };
    if (row?.state === 'paired' && row.site_id) return { verdict: 'known', siteId: row.site_id, passwordHash: row.password_hash };
    return { verdict: 'unknown' };
  }

  /** BootNotification: known -> Accepted; unknown -> recorded as pending, Pending (Accepted if configured); removed or blocked -> Rejected. */
  boot(stationId: string, bootInfo: object): BootVerdict {
    return this.commit(() => {
      const admission = this.admission(stationId);
      const now = this.now();
      this.remember(stationId, now);
      statement(this.db, 'UPDATE stations SET boot_info = ?, last_seen = ? WHERE id = ?').run(JSON.stringify(bootInfo), now.toISOString(), stationId);
      if (admission.verdict === 'rejected') return 'Rejected';
      if (admission.verdict === 'known') return 'Accepted';
      return this.config().ocpp.acceptUnknownStations ? 'Accepted' : 'Pending';
    });
  }

  /** The site a connected station belongs to. Unknown stations that were let in count under the first site until paired. */
  siteOf(stationId: string): string {
    const admission = this.admission(stationId);
    if (admission.verdict === 'known') return admission.siteId;
    const first = this.config().sites[0];
    if (!first) throw new Error('config has no site');
    return first.id;
  }

  setOnline(stationId: string, online: boolean): void {
    const now = this.now();
    this.lastSeen.delete(stationId);
    // One commit (one fsync) for a station's first contact, not one per statement.
    this.commit(() => {
      this.remember(stationId, now);
      statement(this.db, 'UPDATE stations SET online = ?, last_seen = ? WHERE id = ?').run(online ? 1 : 0, now.toISOString(), stationId);
    });
  }

  /** A station's row on its first contact: an unknown one is pending, within the bound on pending stations. */
  private remember(stationId: string, now: Date): void {
    if (ensureStation(this.db, stationId, 'pending', now)) prunePendingStations(this.db, this.config().ocpp.maxPendingStations, now, this.directory.configuredStationIds());
  }

  /**
   * Marks activity in memory; flushLastSeen() writes it in one batch, rarely (LAST_SEEN_WRITE_MS): heartbeats cost
   * no write. Connecting and disconnecting write it at once.
   */
  touch(stationId: string): void {
    this.lastSeen.set(stationId, this.now().toISOString());
  }

  flushLastSeen(): void {
    if (this.lastSeen.size === 0) return;
    const entries = [...this.lastSeen];
    this.lastSeen.clear();
    const update = statement(this.db, 'UPDATE stations SET last_seen = ? WHERE id = ?');
    this.commit(() => {
      for (const [id, at] of entries) update.run(at, id);
    });
  }

  /** At daemon start nothing is connected, whatever the last run left behind. */
  markAllOffline(): void {
    statement(this.db, 'UPDATE stations SET online = 0 WHERE online = 1').run();
  }

  /** Approves a pending or new station for a site and returns its new OCPP password, shown once. */
  pair(stationId: string, siteId: string): { password: string } {
    if (!isStationId(stationId)) throw new DomainError(`"${JSON.stringify(stationId).slice(1, 60)}" is not a station id the OCPP listener admits: ${STATION_ID_RULE}`);
    if (!this.directory.siteExists(siteId)) throw new DomainError(`no site "${siteId}" in the config`);
    const configuredSite = this.directory.configuredSiteOf(stationId);
    if (configuredSite && configuredSite !== siteId) throw new DomainError(`station "${stationId}" belongs to site "${configuredSite}" in the config`);
    const password = generateSecret(18);
    this.writer.writeNow(() => {
      ensureStation(this.db, stationId, 'paired', this.now());
      statement(this.db, "UPDATE stations SET state = 'paired', site_id = ?, password_hash = ? WHERE id = ?").run(siteId, hashSecret(password), stationId);
      bumpChangeCounter(this.db, STATIONS_TOPIC);
    });
    return { password };
  }

  /** Blocks (or removes) a station: the daemon closes its open connection and answers its next BootNotification Rejected. */
  setStationState(stationId: string, state: 'blocked' | 'removed'): void {
    this.writer.writeNow(() => {
      ensureStation(this.db, stationId, state, this.now());
      statement(this.db, 'UPDATE stations SET state = ?, password_hash = NULL WHERE id = ?').run(state, stationId);
      bumpChangeCounter(this.db, STATIONS_TOPIC);
    });
  }

  /** Stations from the config and the database, for `station list` and the status page; removed ones only if asked. */
  stations(options: { includeRemoved?: boolean } = {}): Array<{
    id: string;
    siteId: string | null;
    state: StationState | 'configured';
    online: boolean;
    lastSeen: string | null;
    hasPassword: boolean;
    bootInfo: object | null;
  }> {
    const rows = new Map<string, StationRow>(allStations(this.db).map((r) => [r.id, r]));
    const ids = new Set<string>([...this.config().sites.flatMap((s) => s.stations.map((st) => st.id)), ...rows.keys()]);
    return [...ids]
      .sort()
      .map((id) => {
        const row = rows.get(id);
        const configuredSite = this.directory.configuredSiteOf(id);
        const state: StationState | 'configured' =
          row?.state === 'blocked' || row?.state === 'removed' || row?.state === 'paired' ? row.state : configuredSite ? 'configured' : 'pending';
        return {
          id,
          siteId: configuredSite ?? row?.site_id ?? null,
          state,
          online: row?.online === 1,
          lastSeen: this.lastSeen.get(id) ?? row?.last_seen ?? null,
          hasPassword: Boolean(row?.password_hash),
          bootInfo: row?.boot_info ? (JSON.parse(row.boot_info) as object) : null,
        };
      })
      .filter((s) => options.includeRemoved === true || s.state !== 'removed');
  }

  // ---- connectors -----------------------------------------------------------------------------------------

  /**
   * For a connector of a configured station that the config does not list, what the installer should add; undefined
   * when the connector is known (or the station is not in the config: it gets one charge point named after it).
   * Events from such a connector would name a charge point nobody configured.
   */
  unconfiguredConnector(stationId: string, connectorId: number): string | undefined {
    if (connectorId === 0 || this.directory.hasConnector(stationId, connectorId)) return undefined;
    return `add connector ${connectorId} to a chargePoints entry of station ${stationId} (site ${this.siteOf(stationId)}) in the config`;
  }

  /** Where an OCPP station's connector sits. */
  locateConnector(stationId: string, connectorId: number): ConnectorRef {
    return { siteId: this.siteOf(stationId), stationId, chargePointId: this.directory.chargePointOf(stationId, connectorId), connectorId };
  }

  /** StatusNotification from a station. Connector 0 is the whole station: one event per charge point. */
  recordStationStatus(stationId: string, connectorId: number, status: string, errorCode: string, info?: object): void {
    const siteId = this.siteOf(stationId);
    const refs =
      connectorId === 0
        ? this.directory.chargePointsOf(stationId).map((chargePointId) => ({ siteId, stationId, chargePointId, connectorId: 0 }))
        : [{ siteId, stationId, chargePointId: this.directory.chargePointOf(stationId, connectorId), connectorId }];
    this.commit(() => {
      // Connector 0 is one row per station (the primary key), shared by its charge points: compare it once,
      // before the first of them overwrites it, or every repeat would look like a change.
      const previous =
        connectorId === 0
          ? (statement(this.db, 'SELECT status, error_code FROM connectors WHERE station_id = ? AND connector_id = 0').get(stationId) as
              { status: string; error_code: string } | undefined)
          : undefined;
      const quiet = previous?.status === status && previous.error_code === errorCode;
      for (const ref of refs) this.writeStatus(ref, status, errorCode, info, quiet);
    });
  }

  /** Status of any connector (Modbus meters use this). Emits ChargePointStatus only when status or errorCode changed. */
  recordStatus(at: ConnectorRef, status: string, errorCode: string, info?: object): void {
    this.commit(() => this.writeStatus(at, status, errorCode, info));
  }

  private writeStatus(at: ConnectorRef, status: string, errorCode: string, info?: object, quiet = false): void {
    const previous = statement(this.db, 'SELECT status, error_code, info FROM connectors WHERE station_id = ? AND connector_id = ? AND charge_point_id = ?').get(
      at.stationId,
      at.connectorId,
      at.chargePointId,
    ) as { status: string; error_code: string; info: string | null } | undefined;
    const infoJson = info ? JSON.stringify(info) : null;
    const unchanged = previous?.status === status && previous.error_code === errorCode;
    // Stations repeat their status often (at boot, on TriggerMessage, some every few minutes): a repeat writes
    // nothing, so it costs no fsync, and updated_at stays the time the status last changed.
    if (unchanged && previous.info === infoJson) return;
    const now = this.now();
    statement(
      this.db,
      `INSERT INTO connectors (station_id, connector_id, charge_point_id, status, error_code, info, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (station_id, connector_id) DO UPDATE SET charge_point_id = excluded.charge_point_id, status = excluded.status, error_code = excluded.error_code, info = excluded.info, updated_at = excluded.updated_at`,
    ).run(at.stationId, at.connectorId, at.chargePointId, status, errorCode, infoJson, now.toISOString());
    if (quiet || unchanged) return;
    const payload: ChargePointStatusPayload = { stationId: at.stationId, chargePointId: at.chargePointId, connectorId: at.connectorId, status, errorCode };
    this.emit({ eventType: 'ChargePointStatus', siteId: at.siteId, payload }, now);
  }

  /** Charge points with their connectors' last known state, for the API and the status page. */
  chargePoints(): ChargePointView[] {
    return this.chargePointViews();
  }

  /** One charge point as chargePoints() shows it, reading only the stations it is on (an API command's lookup). */
  chargePoint(chargePointId: string): ChargePointView | undefined {
    const reported = statement(this.db, 'SELECT DISTINCT station_id FROM connectors WHERE charge_point_id = ?').all(chargePointId) as Array<{ station_id: string }>;
    const stationIds = new Set([...this.directory.stationsOfChargePoint(chargePointId), ...reported.map((r) => r.station_id)]);
    return stationIds.size === 0 ? undefined : this.chargePointViews(stationIds).find((v) => v.chargePointId === chargePointId);
  }

  /** The views of every charge point, or of those on the given stations (and meters). */
  private chargePointViews(only?: ReadonlySet<string>): ChargePointView[] {
    const inStations = only ? 'station_id IN (SELECT value FROM json_each(?))' : '1';
    const stationParams = only ? [JSON.stringify([...only])] : [];
    const connectorRows = statement(
      this.db,
      `SELECT station_id, connector_id, charge_point_id, status, error_code FROM connectors WHERE ${inStations} ORDER BY station_id, connector_id`,
    ).all(...stationParams) as Array<{
      station_id: string;
      connector_id: number;
      charge_point_id: string;
      status: string;
      error_code: string;
    }>;
    const key = (stationId: string, connectorId: number) => `${stationId}\u0000${connectorId}`;
    const rowOf = new Map(connectorRows.map((r) => [key(r.station_id, r.connector_id), r]));
    const open = new Map<string, number>(
      (
        statement(this.db, `SELECT id, station_id, connector_id FROM transactions WHERE stopped_at IS NULL AND ${inStations}`).all(...stationParams) as Array<{
          id: number;
          station_id: string;
          connector_id: number;
        }>
      ).map((t) => [key(t.station_id, t.connector_id), t.id]),
    );
    const stationRows = only ? [...only].flatMap((id) => findStation(this.db, id) ?? []) : allStations(this.db);
    const online = new Set(stationRows.filter((s) => s.online === 1).map((s) => s.id));
    const views = new Map<string, ChargePointView>();
    const view = (chargePointId: string, stationId: string, siteId: string, isOnline: boolean): ChargePointView => {
      let v = views.get(chargePointId);
      if (!v) views.set(chargePointId, (v = { chargePointId, stationId, siteId, online: isOnline, connectors: [] }));
      return v;
    };
    const connector = (v: ChargePointView, connectorId: number): void => {
      if (v.connectors.some((c) => c.connectorId === connectorId)) return;
      const row = rowOf.get(key(v.stationId, connectorId));
      const transactionId = open.get(key(v.stationId, connectorId));
      v.connectors.push({ connectorId, status: row?.status ?? 'Unavailable', errorCode: row?.error_code ?? 'NoError', ...(transactionId !== undefined && { transactionId }) });
    };
    const config = this.config();
    for (const site of config.sites) {
      for (const station of site.stations) {
        if (only && !only.has(station.id)) continue;
        for (const cp of station.chargePoints) for (const c of cp.connectors) connector(view(cp.id, station.id, site.id, online.has(station.id)), c);
      }
      for (const meter of site.meters) {
        if (only && !only.has(meter.id)) continue;
        // A meter that stops answering reports PowerMeterFailure (src/modbus): its charge point shows offline.
        const healthy = rowOf.get(key(meter.id, meter.connectorId))?.error_code !== 'PowerMeterFailure';
        connector(view(meter.chargePointId, meter.id, site.id, healthy), meter.connectorId);
      }
    }
    const meterIds = new Set(config.sites.flatMap((s) => s.meters.map((m) => m.id)));
    for (const row of connectorRows) {
      if (row.connector_id === 0 || meterIds.has(row.station_id)) continue;
      const admission = this.admission(row.station_id);
      if (admission.verdict !== 'known') continue;
      connector(view(row.charge_point_id, row.station_id, admission.siteId, online.has(row.station_id)), row.connector_id);
    }
    for (const v of views.values()) v.connectors.sort((a, b) => a.connectorId - b.connectorId);
    return [...views.values()].sort((a, b) => a.chargePointId.localeCompare(b.chargePointId));
  }

  // ---- authorization events -------------------------------------------------------------------------------

  /** Records an Authorize decision (interface 2.3). connectorId is given when a transaction is in progress. */
  recordAuthorization(stationId: string, idTag: string, status: AuthorizationStatus, connectorId?: number): void {
    this.commit(() => this.writeAuthorization(stationId, idTag, status, connectorId));
  }

  private writeAuthorization(stationId: string, idTag: string, status: AuthorizationStatus, connectorId?: number, at?: ConnectorRef): void {
    const chargePoints = this.directory.chargePointsOf(stationId);
    const chargePointId =
      at?.chargePointId ?? (connectorId !== undefined ? this.directory.chargePointOf(stationId, connectorId) : chargePoints.length === 1 ? chargePoints[0] : undefined);
    const payload: AuthorizePayload = {
      stationId,
      idTag,
      status,
      ...(chargePointId !== undefined && { chargePointId }),
      ...(connectorId !== undefined && { connectorId }),
    };
    this.emit({ eventType: 'Authorize', siteId: at?.siteId ?? this.siteOf(stationId), payload }, this.now());
  }

  // ---- transactions ---------------------------------------------------------------------------------------

  /**
   * Opens a transaction with a never-reused id and emits StartTransaction (and the post-start Authorize). A
   * transaction still open on the connector is closed first (reason Other, meterStop = the new meterStart): a
   * station that lost track of it would otherwise leave it open for ever.
   */
  startTransaction(input: StartTransactionInput): TransactionRow {
    return this.commit(() => {
      const { at } = input;
      const zombie = this.openTransactionOn(at.stationId, at.connectorId);
      if (zombie) this.close(zombie, { meterStopWh: input.meterStartWh, stoppedAt: input.startedAt, reason: 'Other' });
      const { lastInsertRowid } = statement(
        this.db,
        `INSERT INTO transactions (site_id, station_id, charge_point_id, connector_id, id_tag, meter_start_wh, started_at, reservation_id, source)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(at.siteId, at.stationId, at.chargePointId, at.connectorId, input.idTag, input.meterStartWh, input.startedAt.toISOString(), input.reservationId ?? null, input.source);
      const row = this.transaction(Number(lastInsertRowid))!;
      const payload: StartTransactionPayload = {
        stationId: at.stationId,
        chargePointId: at.chargePointId,
        connectorId: at.connectorId,
        idTag: input.idTag,
        meterStart: whToKWh(input.meterStartWh),
        transactionId: row.id,
        ...(input.reservationId !== undefined && { reservationId: String(input.reservationId) }),
        startedAt: this.zoned(input.startedAt),
      };
      const now = this.now();
      this.emit({ eventType: 'StartTransaction', siteId: at.siteId, payload, occurredAt: input.startedAt }, now);
      if (input.authorizationStatus) this.writeAuthorization(at.stationId, input.idTag, input.authorizationStatus, at.connectorId, at);
      if (input.connectorStatus) this.writeStatus(at, input.connectorStatus.status, input.connectorStatus.errorCode);
      return row;
    });
  }

  /**
   * Closes a transaction and emits StopTransaction. An unknown or already closed id, or one another station
   * started, changes nothing and emits nothing (a station repeating a StopTransaction whose answer it lost must not
   * bill twice; one station must not end another's session); returns undefined.
   */
  stopTransaction(input: StopTransactionInput): TransactionRow | undefined {
    return this.commit(() => {
      const open = this.transactionOf(input.stationId, input.transactionId);
      if (!open || open.stopped_at !== null) return undefined;
      return this.close(open, input);
    });
  }

  private close(open: TransactionRow, input: Omit<StopTransactionInput, 'stationId' | 'transactionId'>): TransactionRow {
    statement(this.db, 'UPDATE transactions SET meter_stop_wh = ?, stopped_at = ?, stop_reason = ?, stop_id_tag = ? WHERE id = ?').run(
      input.meterStopWh,
      input.stoppedAt.toISOString(),
      input.reason ?? null,
      input.idTag ?? null,
      open.id,
    );
    const payload: StopTransactionPayload = {
      stationId: open.station_id,
      chargePointId: open.charge_point_id,
      connectorId: open.connector_id,
      idTag: input.idTag ?? open.id_tag,
      meterStart: whToKWh(open.meter_start_wh),
      meterStop: whToKWh(input.meterStopWh),
      transactionId: open.id,
      ...(input.reason !== undefined && input.reason !== 'Local' && { reason: input.reason }),
      startedAt: this.zoned(new Date(open.started_at)),
      stoppedAt: this.zoned(input.stoppedAt),
    };
    this.emit({ eventType: 'StopTransaction', siteId: open.site_id, payload, occurredAt: input.stoppedAt }, this.now());
    const at = { siteId: open.site_id, stationId: open.station_id, chargePointId: open.charge_point_id, connectorId: open.connector_id };
    if (input.connectorStatus) this.writeStatus(at, input.connectorStatus.status, input.connectorStatus.errorCode);
    return this.transaction(open.id)!;
  }

  transaction(transactionId: number): TransactionRow | undefined {
    return statement(this.db, 'SELECT * FROM transactions WHERE id = ?').get(transactionId) as TransactionRow | undefined;
  }

  /** The transaction with this id if `stationId` started it: how a station (or meter) names its own. */
  transactionOf(stationId: string, transactionId: number): TransactionRow | undefined {
    return statement(this.db, 'SELECT * FROM transactions WHERE id = ? AND station_id = ?').get(transactionId, stationId) as TransactionRow | undefined;
  }

  /** The transaction a StartTransaction with exactly these fields already opened (open or since stopped), if any. */
  answeredStart(stationId: string, connectorId: number, idTag: string, meterStartWh: number, startedAt: Date): TransactionRow | undefined {
    return statement(
      this.db,
      'SELECT * FROM transactions WHERE station_id = ? AND connector_id = ? AND started_at = ? AND id_tag = ? AND meter_start_wh = ? ORDER BY id DESC LIMIT 1',
    ).get(stationId, connectorId, startedAt.toISOString(), idTag, meterStartWh) as TransactionRow | undefined;
  }

  openTransactionsOfTag(idTag: string): TransactionRow[] {
    return statement(this.db, 'SELECT * FROM transactions WHERE id_tag = ? AND stopped_at IS NULL ORDER BY id').all(idTag) as TransactionRow[];
  }

  openTransactionOn(stationId: string, connectorId: number): TransactionRow | undefined {
    return statement(this.db, 'SELECT * FROM transactions WHERE station_id = ? AND connector_id = ? AND stopped_at IS NULL ORDER BY id DESC LIMIT 1').get(
      stationId,
      connectorId,
    ) as TransactionRow | undefined;
  }

  openTransactions(): TransactionRow[] {
    return statement(this.db, 'SELECT * FROM transactions WHERE stopped_at IS NULL ORDER BY id').all() as TransactionRow[];
  }

  // ---- events ---------------------------------------------------------------------------------------------

  /** A time as partners read it: the configured zone, the envelope's format. */
  private zoned(at: Date): string {
    return formatZonedTimestamp(at, this.config().timezone);
  }

  private emit(event: OutboxEvent & { eventType: EventType }, now: Date): void {
    const config = this.config();
    appendEvent(this.db, event, subscribedWebhooks(config, event.siteId, event.eventType), now, { queueCapacity: config.webhookDelivery.queueCapacity });
    this.appended += 1;
  }
}

/** A request the domain refuses (unknown site, conflicting pairing): the message is meant for the installer. */
export class DomainError extends Error {
  override name = 'DomainError';
  readonly code = 'CHARGEGATE_DOMAIN_REFUSED';
}

export { STATIONS_TOPIC };
